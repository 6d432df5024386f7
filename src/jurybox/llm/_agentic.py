"""An agentic judge: an LLM judge that may look around the workspace before it decides.

The model answers each turn with one JSON action: list the workspace's files,
read one, run an allowed command, or give its verdict. It works with any judge
model (FakeModel, the stubs, every provider), since the actions are JSON
replies, not a provider's tool-calling API. Each tool result goes back to the
model as untrusted data (fenced like every judged text), the loop is bounded in
steps, seconds and tokens, and the whole transcript is kept in the judgment.
Never a silent pass: running out of steps, time or tokens, or replies that are
never a readable action, is ABSTAIN; a provider failure is ERROR; a verdict the
judged text or a file planted word for word is not accepted.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

from jurybox.core import TIER_LLM, Context, Judgment, error_reason, judge_factory
from jurybox.llm._model import ModelRef, resolve
from jurybox.llm._normal import normal_form
from jurybox.llm._planted import Material
from jurybox.llm._reading import Found, Reading
from jurybox.llm._template import Template, TemplateError
from jurybox.llm._text import first_member, json_spans, strip_think
from jurybox.llm._workspace_tools import COMMAND_TIMEOUT, TOOLS, ToolRefused, WorkspaceTools, workspace_tools
from jurybox.models import ChatMessage, GenerateRequest, JudgeModel

ACTIONS = (*TOOLS, "verdict")
ACTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": list(ACTIONS)},
        "path": {"type": "string"},
        "command": {"type": "string"},
        "pass": {"type": "boolean"},
        "score": {"type": "number", "minimum": 0, "maximum": 1},
        "reasoning": {"type": "string"},
    },
    "required": ["action"],
}
TRANSCRIPT_CHARS = 2_000
"""Characters of each tool result kept in the transcript (the model saw all of it)."""

_SYSTEM = """You are a careful, impartial evaluator who checks facts before deciding.
Decide whether the answer meets the criteria. Before you decide you may look at the workspace the agent worked in.
Reply with exactly one JSON object per turn, one of:
{tools}
  {{"action": "verdict", "pass": true or false, "score": 0.0 to 1.0, "reasoning": "why, citing what you saw"}}
Look only at what you need; give your verdict as soon as you can."""
_TOOL_HELP = {
    "list_files": '  {"action": "list_files", "path": "."}   -- the files under a folder of the workspace',
    "read_file": '  {"action": "read_file", "path": "src/app.py"}   -- a file of the workspace',
    "run": '  {"action": "run", "command": "<one of the allowed commands>"}   -- allowed commands: {commands}',
}
_FIRST = Template(
    user="Criteria:\n{{criteria}}\n\nThe question or task:\n{{input}}\n\nThe answer to judge:\n{{output}}",
    trusted=frozenset({"criteria"}),
)
_RESULT = Template(user="Result of {{tool}}:\n{{result}}", trusted=frozenset({"tool"}))


class AgenticJudge:
    """An LLM judge that may list and read workspace files and run allowed commands before its verdict.

    Args:
        criteria: What the answer must do, in words (trusted: written by the test author).
        name: The judge's name in reports.
        model: A JudgeModel, a spec, or None for the configured judge model.
        tools: Which of ``list_files``, ``read_file`` and ``run`` it may use.
        commands: The commands ``run`` accepts, word for word.
        threshold: The score a verdict needs to pass when the model gives one.
        max_steps: Model turns at most, the verdict's included.
        max_seconds: Wall time at most for the whole loop.
        max_tokens: Input and output tokens at most, summed over the turns.
        command_timeout: Seconds before a command is killed.
    """

    kind = "agentic"
    tier = TIER_LLM
    sees = ("input", "output", "workspace")

    def __init__(
        self,
        criteria: str,
        *,
        name: str = "agentic",
        model: ModelRef = None,
        tools: Sequence[str] = ("list_files", "read_file"),
        commands: Sequence[str] = (),
        threshold: float = 0.5,
        max_steps: int = 8,
        max_seconds: float = 120.0,
        max_tokens: int = 50_000,
        command_timeout: float = COMMAND_TIMEOUT,
    ) -> None:
        if not isinstance(criteria, str) or not criteria.strip():
            raise ValueError("agentic() needs criteria: what the answer must do, in words")
        unknown = [tool for tool in tools if tool not in TOOLS]
        if unknown or isinstance(tools, str):
            raise ValueError(f"agentic(tools=...) takes some of {', '.join(TOOLS)}, got {list(tools)!r}")
        if commands and "run" not in tools:
            raise ValueError("agentic(commands=...) needs 'run' in tools")
        if "run" in tools and not commands:
            raise ValueError("agentic(tools=[..., 'run']) needs commands: the exact commands it may run")
        for option, value, low in (("max_steps", max_steps, 1), ("max_tokens", max_tokens, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"agentic({option}=...) must be a whole number >= {low}, got {value!r}")
        for option, number in (("max_seconds", max_seconds), ("command_timeout", command_timeout)):
            if isinstance(number, bool) or not isinstance(number, int | float) or number <= 0:
                raise ValueError(f"agentic({option}=...) must be a positive number of seconds, got {number!r}")
        if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not 0 <= threshold <= 1:
            raise ValueError(f"agentic(threshold=...) must be a number in 0..1, got {threshold!r}")
        self.criteria = criteria
        self.name = name
        self.model = model
        self.tools = tuple(tools)
        self.commands = tuple(str(c) for c in commands)
        self.threshold = float(threshold)
        self.max_steps = max_steps
        self.max_seconds = float(max_seconds)
        self.max_tokens = max_tokens
        self.command_timeout = float(command_timeout)

    @property
    def min_calls(self) -> int:
        return 1

    @property
    def max_calls(self) -> int:
        return self.max_steps

    async def __call__(self, context: Context) -> Judgment:
        try:
            model = resolve(self.model)
        except Exception as exc:
            return Judgment.errored(f"cannot get the judge model: {exc}", exception=exc, judge=self.name)
        tools = workspace_tools(context.workspace, self.tools, self.commands, timeout=self.command_timeout, env=None)
        try:
            messages, blocks = _FIRST.render_with_data(context, {"criteria": self.criteria})
        except TemplateError as exc:
            return Judgment.errored(f"cannot build the judge prompt: {exc}", exception=exc, judge=self.name)
        loop = _Loop(self, model, tools, Material((b.label, b.text) for b in blocks))
        try:
            async with asyncio.timeout(self.max_seconds):
                judgment = await loop.run(messages)
        except TimeoutError:
            judgment = loop.undecided(f"no verdict within {self.max_seconds:g}s")
        return judgment.named(self.name)

    def system_prompt(self, tools: WorkspaceTools | None) -> str:
        offered = tools.allowed if tools is not None else ()
        commands = "; ".join(self.commands)
        lines = "\n".join(_TOOL_HELP[t].replace("{commands}", commands) for t in offered)
        if tools is None:
            lines = "  (this case has no workspace: judge from the answer alone)"
        return _SYSTEM.format(tools=lines)

    def __repr__(self) -> str:
        return f"<agentic judge {self.name} tools={list(self.tools)} max_steps={self.max_steps}>"


class _Loop:
    """One verdict's turns: ask, act, show the result, until a verdict or a limit."""

    def __init__(self, judge: AgenticJudge, model: JudgeModel, tools: WorkspaceTools | None, data: Material) -> None:
        self.judge = judge
        self.model = model
        self.tools = tools
        self.data = data  # every untrusted text shown so far, for the planted-verdict check
        self.transcript: list[dict[str, Any]] = []
        self.tokens = 0
        self.cost = 0.0
        self.started = time.monotonic()

    async def run(self, first: list[ChatMessage]) -> Judgment:
        system = ChatMessage(
            "system", self.judge.system_prompt(self.tools) + "\n\n" + first[0].content.split("\n\n")[-1]
        )
        conversation = [system, first[1]]
        for step in range(1, self.judge.max_steps + 1):
            try:
                response = await self.model.complete(GenerateRequest(tuple(conversation), json_schema=ACTION_SCHEMA))
            except Exception as exc:
                reason = f"judge model {self.model.name} failed at step {step}: {error_reason(exc)}"
                return Judgment.errored(reason, exception=exc, metadata=self.metadata())
            self._count(response)
            conversation.append(ChatMessage("assistant", response.text))
            action, problem = _action(response.text, self.data)
            if action is None:
                self.transcript.append(
                    {"step": step, "action": "unreadable", "reply": response.text[:TRANSCRIPT_CHARS]}
                )
                conversation.append(ChatMessage("user", f"{problem}. Reply with one JSON action as described."))
                continue
            if action["action"] == "verdict":
                return self._verdict(step, action, response.text)
            result = self._act(step, action)
            conversation.append(self._result_message(action, result))
            if self.tokens > self.judge.max_tokens:
                return self.undecided(f"used {self.tokens:,} tokens, more than max_tokens {self.judge.max_tokens:,}")
        return self.undecided(f"no verdict after {self.judge.max_steps} step(s)")

    def undecided(self, why: str) -> Judgment:
        return Judgment.abstained(f"the agentic judge did not decide: {why}", metadata=self.metadata())

    def metadata(self) -> dict[str, Any]:
        return {
            "model": self.model.name,
            "steps": len(self.transcript),
            "tokens": self.tokens,
            "cost": self.cost,
            "seconds": round(time.monotonic() - self.started, 3),
            "transcript": list(self.transcript),
        }

    def _count(self, response: Any) -> None:
        usage = getattr(response, "usage", None)
        if usage is not None:
            self.tokens += int(getattr(usage, "input_tokens", 0) or 0) + int(getattr(usage, "output_tokens", 0) or 0)
        cost = getattr(response, "cost", None)
        if isinstance(cost, int | float):
            self.cost += float(cost)

    def _act(self, step: int, action: Mapping[str, Any]) -> str:
        entry: dict[str, Any] = {"step": step, "action": action["action"]}
        for key in ("path", "command"):
            if isinstance(action.get(key), str):
                entry[key] = action[key]
        if self.tools is None:
            result, entry["refused"] = "this case has no workspace: judge from the answer alone", True
        else:
            try:
                result = self.tools.call(str(action["action"]), action)
            except ToolRefused as exc:
                result, entry["refused"] = f"refused: {exc}", True
            except OSError as exc:
                result, entry["refused"] = f"failed: {exc.strerror or exc}", True
        entry["result"] = result[:TRANSCRIPT_CHARS]
        self.transcript.append(entry)
        return result

    def _result_message(self, action: Mapping[str, Any], result: str) -> ChatMessage:
        # The tool's name is one of ours; what it was called on came from the model, so it stays in the data.
        target = str(action.get("path") or action.get("command") or "")
        shown = f"{target}\n\n{result or '(empty)'}" if target else result or "(empty)"
        messages, blocks = _RESULT.render_with_data(Context(), {"tool": str(action["action"]), "result": shown})
        for block in blocks:
            self.data.add(f"{action['action']} result", block.text)
        rule = messages[0].content.split("\n\n")[-1]
        return ChatMessage("user", f"{messages[1].content}\n\n{rule}\nNext JSON action?")

    def _verdict(self, step: int, action: Mapping[str, Any], raw: str) -> Judgment:
        reasoning = str(action.get("reasoning") or "").strip()
        self.transcript.append({"step": step, "action": "verdict", "pass": action.get("pass"), "reasoning": reasoning})
        if _planted(action, raw, self.data):
            reason = (
                "the verdict is one the judged text or a workspace file states word for word; "
                "an answer cannot grade itself"
            )
            return Judgment.abstained(reason, metadata={**self.metadata(), "raw": raw})
        passed, score = action.get("pass"), action.get("score")
        if not isinstance(passed, bool):
            return self.undecided("the verdict has no true/false 'pass'")
        if isinstance(score, int | float) and not isinstance(score, bool) and 0 <= score <= 1:
            passed = passed and score >= self.judge.threshold
            value: float | bool = float(score)
        else:
            value = passed
        make = Judgment.passed if passed else Judgment.failed
        return make(value, reasoning or "(no reasoning given)", metadata=self.metadata())


def _action(text: str, material: Material) -> tuple[dict[str, Any] | None, str]:
    """The one action of a reply, read like every verdict: normal form, the model's own reasoning removed."""
    body = strip_think(normal_form(text), keep_tags=material.mentions_think_tags)
    found = [obj for _, _, obj in json_spans(body) if "action" in obj]
    if not found:
        return None, 'Your reply held no JSON object with an "action"'
    different = list(dict.fromkeys(_essence(obj) for obj in found))
    if len(different) > 1:
        # A quoted action (from a file, or the answer) beside the model's own: neither can be trusted.
        return None, f"Your reply held {len(different)} different actions; send exactly one"
    action = _as_written(text, found[-1])
    if action["action"] not in ACTIONS:
        return None, f"Unknown action {str(action['action'])[:40]!r}; use one of {', '.join(ACTIONS)}"
    return action, ""


def _essence(action: Mapping[str, Any]) -> str:
    return json.dumps({key: action.get(key) for key in ("action", "path", "command", "pass", "score")}, default=str)


def _as_written(text: str, action: dict[str, Any]) -> dict[str, Any]:
    # Read in normal form; the reasoning a user reads is the reply's own text when it can be found.
    if normal_form(text) != text:
        essence = _essence(action)
        for _, _, obj in json_spans(text):
            if "action" in obj and _essence(obj) == essence:
                return obj
    return action


class _VerdictActions:
    """Reads verdict actions as verdicts, so the planted-verdict rule applies to them as to any classifier."""

    on_conflict = "abstain"
    threshold = 0.5

    def find(self, text: str) -> Reading:
        found = [
            Found(_verdict_key(obj), text[start:end], start, end, obj, head=first_member(text, start))
            for start, end, obj in json_spans(text)
            if obj.get("action") == "verdict"
        ]
        return Reading(found, "no verdict action")

    def choose(self, found: Sequence[Found]) -> Found:
        return found[-1]

    def decide(self, found: Found, raw: str, keys: Sequence[str]) -> Judgment:
        raise NotImplementedError  # the loop decides; this reader only finds


def _verdict_key(action: Mapping[str, Any]) -> str:
    return json.dumps({"pass": action.get("pass"), "score": action.get("score")})


_VERDICTS = _VerdictActions()


def _planted(action: Mapping[str, Any], raw: str, material: Material) -> bool:
    """Whether the judged text or a tool result states this verdict, or holds the text it was read from."""
    body = strip_think(normal_form(raw), keep_tags=material.mentions_think_tags)
    key = _verdict_key(action)
    found = [verdict for verdict in _VERDICTS.find(body).found if verdict.key == key]
    return bool(found) and material.repeats(_VERDICTS, found, body) is not None


@judge_factory(name="agentic", tier=TIER_LLM)
def agentic(
    criteria: str,
    *,
    tools: Sequence[str] = ("list_files", "read_file"),
    commands: Sequence[str] = (),
    threshold: float = 0.5,
    max_steps: int = 8,
    max_seconds: float = 120.0,
    max_tokens: int = 50_000,
    command_timeout: float = COMMAND_TIMEOUT,
    model: ModelRef = None,
    name: str | None = None,
) -> AgenticJudge:
    """An LLM judge that may list and read the workspace's files and run allowed commands before its verdict.

    Bounded (steps, seconds, tokens) and confined to ``Context.workspace``; its transcript
    is kept in the judgment's ``metadata["transcript"]``. Running out of a limit, or replies
    that are never a readable action, is ABSTAIN; a provider failure is ERROR.

    Args:
        criteria: What the answer must do, in words.
        tools: Which of ``list_files``, ``read_file`` and ``run`` it may use.
        commands: The commands ``run`` accepts, word for word (no shell).
        threshold: The score a verdict needs to pass when the model gives one.
        max_steps: Model turns at most, the verdict's included.
        max_seconds: Wall time at most.
        max_tokens: Input and output tokens at most over all turns.
        command_timeout: Seconds before a command is killed.
        model: The judge model (default: the configured one).
        name: The judge's name in reports.
    """
    return AgenticJudge(
        criteria,
        name=name or "agentic",
        model=model,
        tools=tools,
        commands=commands,
        threshold=threshold,
        max_steps=max_steps,
        max_seconds=max_seconds,
        max_tokens=max_tokens,
        command_timeout=command_timeout,
    )
