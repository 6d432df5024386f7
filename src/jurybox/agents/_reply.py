"""AgentReply, and turning whatever an agent returned into one (or a clear AgentError)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from jurybox.agents._errors import AgentError
from jurybox.core import Context, ToolCall, freeze_mapping

REPLY_KEYS = frozenset({"reply", "tool_calls", "sources", "usage"})


@dataclass(frozen=True)
class AgentReply:
    """What an agent said in answer to one message.

    Attributes:
        text: The reply text the user would see.
        tool_calls: Tools the agent called while answering, in order.
        sources: Documents the agent retrieved for this answer.
        usage: Token counts and cost as the agent reported them
            (``input_tokens``, ``output_tokens``, ``cost``...).
        raw: The agent's reply as it came back, for debugging.
    """

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    sources: tuple[str, ...] = ()
    usage: Mapping[str, Any] = field(default_factory=dict)
    raw: Any = None

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise TypeError(f"AgentReply.text must be a string, got {type(self.text).__name__}")
        object.__setattr__(self, "tool_calls", tuple(ToolCall.coerce(c) for c in self.tool_calls))
        object.__setattr__(self, "sources", tuple(str(s) for s in self.sources))
        object.__setattr__(self, "usage", freeze_mapping(self.usage))


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 200 else text[:197] + "..."


def coerce_reply(value: Any, *, agent: str) -> AgentReply:
    """Turn an agent's return value into an AgentReply.

    Accepted: a string; a dict with ``reply`` (string) and optional
    ``tool_calls`` (names, ``{"name", "arguments"}`` dicts or ToolCalls),
    ``sources`` (list of strings) and ``usage`` (mapping); a Context with status
    ``completed`` (what the framework bridges build); or an AgentReply.

    Raises:
        AgentError: for anything else, naming the agent and what came back.
    """
    if isinstance(value, AgentReply):
        return value
    if isinstance(value, str):
        return AgentReply(text=value, raw=value)
    if isinstance(value, Context):
        if value.status != "completed":
            # The agent says its run did not finish: its output is not an answer to judge.
            raise AgentError(
                f"agent {agent} returned a Context with status {value.status!r} "
                f"(output {_describe(value.output)}); only a completed execution is a reply"
            )
        usage = value.metadata.get("usage")
        return AgentReply(
            text=value.output,
            tool_calls=value.tool_calls,
            sources=value.sources,
            usage=usage if isinstance(usage, Mapping) else {},
            raw=value,
        )
    if isinstance(value, Mapping):
        return _reply_from_mapping(value, agent=agent)
    raise AgentError(
        f"agent {agent} returned {type(value).__name__} {_describe(value)}; expected a string "
        "or a dict with 'reply' (and optional 'tool_calls', 'sources', 'usage')"
    )


def _reply_from_mapping(value: Mapping[str, Any], *, agent: str) -> AgentReply:
    unknown = sorted(str(key) for key in value if key not in REPLY_KEYS)
    if "reply" not in value:
        raise AgentError(
            f"agent {agent} returned a dict without 'reply' (keys: {sorted(map(str, value))}); "
            f"expected keys {sorted(REPLY_KEYS)}"
        )
    if unknown:
        raise AgentError(f"agent {agent} returned unknown reply key(s) {unknown}; valid: {sorted(REPLY_KEYS)}")
    text = value["reply"]
    if not isinstance(text, str):
        raise AgentError(
            f"agent {agent} returned 'reply' of type {type(text).__name__} {_describe(text)}; expected a string"
        )
    calls = value.get("tool_calls") or ()
    sources = value.get("sources") or ()
    usage = value.get("usage") or {}
    if isinstance(calls, str | bytes) or not isinstance(calls, Sequence):
        raise AgentError(f"agent {agent} returned 'tool_calls' as {type(calls).__name__}; expected a list")
    if isinstance(sources, str | bytes) or not isinstance(sources, Sequence):
        raise AgentError(f"agent {agent} returned 'sources' as {type(sources).__name__}; expected a list of strings")
    if not isinstance(usage, Mapping):
        raise AgentError(f"agent {agent} returned 'usage' as {type(usage).__name__}; expected a mapping")
    try:
        tool_calls = tuple(ToolCall.coerce(call) for call in calls)
    except (TypeError, ValueError) as exc:
        raise AgentError(f"agent {agent} returned a malformed tool call: {exc}") from exc
    return AgentReply(text=text, tool_calls=tool_calls, sources=tuple(map(str, sources)), usage=usage, raw=dict(value))
