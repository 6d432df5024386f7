"""The record of one execution of an LLM app or agent: what judges look at."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any

from jurybox.core._bounded import read_json


def freeze_mapping(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """Return a read-only copy so a frozen record cannot be changed through a dict."""
    return MappingProxyType(dict(value or {}))


@dataclass(frozen=True)
class Message:
    """One conversation message."""

    role: str
    content: str

    def to_dict(self) -> dict[str, Any]:
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True)
class ToolCall:
    """A tool the agent called: its name, the arguments it passed and what came back."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    result: Any = None
    id: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"ToolCall.name must be a non-empty string, got {self.name!r}")
        if not isinstance(self.arguments, Mapping):
            raise TypeError(
                f"ToolCall.arguments for {self.name!r} must be a mapping, got {type(self.arguments).__name__}"
            )
        object.__setattr__(self, "arguments", freeze_mapping(self.arguments))

    @classmethod
    def coerce(cls, value: ToolCall | str | Mapping[str, Any]) -> ToolCall:
        """Build a ToolCall from a name, a dict (``name``, ``arguments``/``args``, ``result``) or a ToolCall."""
        if isinstance(value, ToolCall):
            return value
        if isinstance(value, str):
            return cls(name=value)
        if isinstance(value, Mapping):
            unknown = set(value) - {"name", "arguments", "args", "result", "id"}
            if unknown:
                raise ValueError(f"unknown tool call field(s) {sorted(unknown)} in {dict(value)!r}")
            if "name" not in value:
                raise ValueError(f"tool call {dict(value)!r} has no 'name'")
            arguments = value.get("arguments", value.get("args")) or {}
            if isinstance(arguments, str):
                # Providers send arguments as a JSON string; keep the parsed form.
                arguments = read_json(arguments) if arguments.strip() else {}
            return cls(name=value["name"], arguments=arguments, result=value.get("result"), id=value.get("id"))
        raise TypeError(f"cannot make a tool call from {type(value).__name__}: {value!r}")

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"name": self.name, "arguments": dict(self.arguments)}
        if self.result is not None:
            data["result"] = self.result
        if self.id is not None:
            data["id"] = self.id
        return data


@dataclass(frozen=True)
class LessonNote:
    """A stored lesson as a case receives it: what earlier runs taught, for the agent and opted-in judges.

    Attributes:
        id: The lesson's id in the store (``jurybox lessons list`` shows it).
        text: What the lesson says (bounded by the runner).
        scope: Why this case got it: ``"case"`` (about this very case), ``"judge"`` (about one of
            its judges or tiers) or ``"suite"`` (about the suite as a whole).
    """

    id: int
    text: str
    scope: str = "suite"

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "text": self.text, "scope": self.scope}

    @classmethod
    def coerce(cls, value: LessonNote | Mapping[str, Any]) -> LessonNote:
        if isinstance(value, LessonNote):
            return value
        if isinstance(value, Mapping) and "id" in value and "text" in value:
            return cls(id=int(value["id"]), text=str(value["text"]), scope=str(value.get("scope") or "suite"))
        raise TypeError(f"cannot make a lesson from {value!r}: it needs 'id' and 'text'")


@dataclass(frozen=True)
class Context:
    """Frozen record of one execution of the system under test.

    Judges read a Context and never change it. Lists are stored as tuples and
    mappings as read-only views, so a judge cannot leak state into the next one.

    Attributes:
        input: The prompt, question or goal given to the system.
        output: What the system answered (final text).
        expected: A reference answer, when the case has one.
        messages: The whole conversation, in order.
        tool_calls: Tools the system called, in order.
        sources: Retrieved documents the answer should be grounded in.
        workspace: Folder the agent worked in (files written, commands to run).
        status: How the execution ended: ``"completed"``, ``"error"``, ``"timeout"``...
        started_at: When the execution started.
        duration: Wall time of the execution in seconds.
        metadata: Anything else: ``model``, ``tokens``, ``cost`` (USD),
            ``finish_reason``, and user fields.
        lessons: Lessons from earlier runs the runner handed this case (most relevant
            first, bounded); LLM judges read them only when they opt in (``use_lessons``).
    """

    input: str = ""
    output: str = ""
    expected: str | None = None
    messages: tuple[Message, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    sources: tuple[str, ...] = ()
    workspace: Path | None = None
    status: str = "completed"
    started_at: datetime | None = None
    duration: float | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    lessons: tuple[LessonNote, ...] = ()

    def __post_init__(self) -> None:
        for name in ("input", "output"):
            value = getattr(self, name)
            if not isinstance(value, str):
                raise TypeError(f"Context.{name} must be a string, got {type(value).__name__}")
        if self.expected is not None and not isinstance(self.expected, str):
            raise TypeError(f"Context.expected must be a string or None, got {type(self.expected).__name__}")
        object.__setattr__(self, "messages", tuple(_coerce_message(m) for m in self.messages))
        object.__setattr__(self, "tool_calls", tuple(ToolCall.coerce(c) for c in self.tool_calls))
        if isinstance(self.sources, str):
            raise TypeError("Context.sources must be a list of strings, not one string")
        object.__setattr__(self, "sources", tuple(str(s) for s in self.sources))
        if self.workspace is not None and not isinstance(self.workspace, Path):
            object.__setattr__(self, "workspace", Path(self.workspace))
        if self.duration is not None and (not isinstance(self.duration, int | float) or self.duration < 0):
            raise ValueError(f"Context.duration must be a non-negative number of seconds, got {self.duration!r}")
        object.__setattr__(self, "metadata", freeze_mapping(self.metadata))
        if self.lessons:
            object.__setattr__(self, "lessons", tuple(LessonNote.coerce(lesson) for lesson in self.lessons))

    @property
    def cost(self) -> float | None:
        """Cost in USD from ``metadata["cost"]``, or None when unknown."""
        value = self.metadata.get("cost")
        return float(value) if isinstance(value, int | float) else None

    @property
    def tool_names(self) -> list[str]:
        return [call.name for call in self.tool_calls]

    @property
    def earlier_turns(self) -> tuple[Message, ...]:
        """The conversation before this execution's request: earlier rounds' user and assistant messages.

        A round the runner ran says how many of ``messages`` are its own
        (``metadata["round_messages"]``); for any other context the turns before the
        last user message that is ``input`` count. System and tool messages are the
        agent's trace, not the conversation, and are left out.
        """
        messages = self.messages
        own = self.metadata.get("round_messages")
        if isinstance(own, int) and not isinstance(own, bool) and 0 <= own <= len(messages):
            before = messages[: len(messages) - own]
        else:
            starts = [i for i, m in enumerate(messages) if m.role == "user" and m.content == self.input]
            before = messages[: starts[-1]] if starts else ()
        return tuple(m for m in before if m.role in ("user", "assistant"))

    def replace(self, **changes: Any) -> Context:
        """A copy with some fields changed."""
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data.update(changes)
        return Context(**data)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; ``Context.from_dict`` reads it back (``lessons`` only when there are some)."""
        data: dict[str, Any] = {
            "input": self.input,
            "output": self.output,
            "expected": self.expected,
            "messages": [m.to_dict() for m in self.messages],
            "tool_calls": [c.to_dict() for c in self.tool_calls],
            "sources": list(self.sources),
            "workspace": str(self.workspace) if self.workspace is not None else None,
            "status": self.status,
            "started_at": self.started_at.isoformat() if self.started_at else None,
            "duration": self.duration,
            "metadata": dict(self.metadata),
        }
        if self.lessons:
            data["lessons"] = [lesson.to_dict() for lesson in self.lessons]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Context:
        """Build a Context from a dict such as one line of a recorded-runs JSONL file.

        Raises:
            ValueError: on an unknown key (a typo would otherwise be lost silently).
        """
        known = _CONTEXT_FIELDS if cls is Context else frozenset(f.name for f in fields(cls))
        if not known.issuperset(data):
            unknown = set(data) - known
            raise ValueError(
                f"unknown Context field(s): {', '.join(sorted(unknown))}; valid: {', '.join(sorted(known))}"
            )
        values = dict(data)
        started = values.get("started_at")
        if isinstance(started, str):
            values["started_at"] = datetime.fromisoformat(started)
        for key in ("messages", "tool_calls", "sources", "lessons"):
            if values.get(key) is None:
                values.pop(key, None)
        if values.get("metadata") is None:
            values.pop("metadata", None)
        return cls(**values)


_CONTEXT_FIELDS = frozenset(f.name for f in fields(Context))
"""What ``Context.from_dict`` accepts, computed once (it runs for every record read back from a store)."""


def _coerce_message(value: Message | Mapping[str, Any]) -> Message:
    if isinstance(value, Message):
        return value
    if isinstance(value, Mapping):
        if "role" not in value:
            raise ValueError(f"message {dict(value)!r} has no 'role'")
        content = value.get("content")
        return Message(role=str(value["role"]), content="" if content is None else str(content))
    raise TypeError(f"cannot make a message from {type(value).__name__}: {value!r}")


def iter_contexts_jsonl(lines: Iterable[str], source: str = "<input>") -> Iterator[tuple[int, Context]]:
    """Recorded executions, one JSON object a line, as ``(line number, Context)``, one at a time.

    Each line is read with the input limits (``read_json``: 100 levels, 2,000,000 values).
    ``input``, ``output`` and ``expected`` may be JSON objects or lists (a fixture of an LLM
    operation: ``{"input": {"existing": ..., "incoming": ...}, "expected": {"action": "NOOP"}}``):
    see :func:`structured_fields`.

    Raises:
        ValueError: a line that is not a recorded execution, as ``SOURCE:LINE: problem``.
    """
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = read_json(line)
            if not isinstance(data, Mapping):
                raise TypeError(f"a recorded execution is a JSON object, got {type(data).__name__}")
            yield number, Context.from_dict(structured_fields(data))
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{source}:{number}: {exc}") from exc


STRUCTURED_FIELDS = ("input", "output", "expected")
"""The Context fields a recorded execution may give as JSON objects or lists instead of text."""


def structured_fields(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """A recorded execution whose structured ``input``/``output``/``expected`` are made text.

    Each such value becomes its JSON text (what a judge prompt shows) and stays, as
    written, under ``metadata["structured"][field]`` for judges that compare fields
    (``json.loads(ctx.expected)["action"]`` reads the same). A mapping with none is
    returned as it is.
    """
    structured = {name: data[name] for name in STRUCTURED_FIELDS if isinstance(data.get(name), Mapping | list)}
    if not structured:
        return data
    metadata = data.get("metadata")
    if metadata is not None and not isinstance(metadata, Mapping):
        raise TypeError(f"metadata must be a JSON object, got {type(metadata).__name__}")
    texts = {name: json.dumps(value, ensure_ascii=False) for name, value in structured.items()}
    return {**data, **texts, "metadata": {**(metadata or {}), "structured": structured}}


def contexts_from_jsonl(lines: Iterable[str], source: str = "<input>") -> list[Context]:
    """Parse recorded executions, one JSON object a line; errors name the source and line."""
    return [context for _, context in iter_contexts_jsonl(lines, source)]
