"""Scripted stub replies from a YAML file: ``python -m jurybox.stubs openai --script replies.yaml``.

A script lists replies in order, or rules matched against each request, so an
agent can be tested against a stub that calls a tool and then answers with the
tool's result, without writing Python::

    replies:                      # one per request, in order
      - tool_call: {name: get_current_time, arguments: {timezone: Europe/Paris}}
      - "In Paris it is {tool_result}."

    rules:                        # the first rule whose `when` holds answers
      - when: {after_tool: true}
        reply: "In Paris it is {tool_result}."
      - when: {user_contains: time}
        reply: {tool_call: {name: get_current_time, arguments: {timezone: Europe/Paris}}}
      - reply: "I can only tell the time."

The same script serves chat completions, the Responses API, Anthropic
messages and Ollama: the stub reads the last user message and the last tool
result from whichever request shape arrives.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jurybox.inputs import InputError, Lines, read_text, read_yaml
from jurybox.stubs._replies import StubReply, StubToolCall

_PLACEHOLDERS = re.compile(r"\{(tool_result|user_message)\}")
_REPLY_KEYS = frozenset({"text", "tool_call", "tool_calls", "finish_reason", "input_tokens", "output_tokens"})
_WHEN_KEYS = frozenset({"user_contains", "user_matches", "after_tool"})


class ScriptError(ValueError):
    """A script file is malformed; the message reads ``file:line: field: problem``."""


@dataclass(frozen=True)
class Exchange:
    """What a script can see of a request: the last user message and the last tool result."""

    user_message: str = ""
    tool_result: str | None = None
    after_tool: bool = False


@dataclass(frozen=True)
class _Rule:
    reply: StubReply
    contains: tuple[str, ...] = ()
    pattern: re.Pattern[str] | None = None
    after_tool: bool | None = None

    def matches(self, exchange: Exchange) -> bool:
        text = exchange.user_message.casefold()
        if self.contains and not any(word.casefold() in text for word in self.contains):
            return False
        if self.pattern is not None and not self.pattern.search(exchange.user_message):
            return False
        return self.after_tool is None or self.after_tool == exchange.after_tool


@dataclass
class Script:
    """A loaded script; call it with a request body (it is a stub reply function)."""

    file: str
    replies: tuple[StubReply, ...] = ()
    rules: tuple[_Rule, ...] = ()
    repeat: bool = False
    _position: int = field(default=0, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def __call__(self, body: dict[str, Any]) -> StubReply:
        exchange = read_exchange(body)
        if self.rules:
            rule = next((r for r in self.rules if r.matches(exchange)), None)
            if rule is None:
                raise LookupError(
                    f"{self.file}: no rule matches {exchange.user_message[:80]!r}; add a rule without when"
                )
            return _filled(rule.reply, exchange)
        with self._lock:
            if self._position >= len(self.replies):
                if not self.repeat:
                    raise LookupError(f"{self.file}: all {len(self.replies)} replies used (repeat: true starts over)")
                self._position = 0
            reply = self.replies[self._position]
            self._position += 1
        return _filled(reply, exchange)


def _fill(text: str, exchange: Exchange) -> str:
    values = {"tool_result": exchange.tool_result or "", "user_message": exchange.user_message}
    return _PLACEHOLDERS.sub(lambda match: values[match.group(1)], text)


def _fill_value(value: Any, exchange: Exchange) -> Any:
    if isinstance(value, str):
        return _fill(value, exchange)
    if isinstance(value, Mapping):
        return {key: _fill_value(item, exchange) for key, item in value.items()}
    if isinstance(value, list):
        return [_fill_value(item, exchange) for item in value]
    return value


def _filled(reply: StubReply, exchange: Exchange) -> StubReply:
    calls = tuple(StubToolCall(c.name, _fill_value(dict(c.arguments), exchange), c.id) for c in reply.tool_calls)
    return StubReply(
        text=_fill(reply.text, exchange),
        tool_calls=calls,
        finish_reason=reply.finish_reason,
        input_tokens=reply.input_tokens,
        output_tokens=reply.output_tokens,
    )


# ---------------------------------------------------------------- reading a request


def _text(content: Any) -> str:
    """Text of a message content: a string, or the text of its parts (text, input_text, tool_result blocks)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    pieces = []
    for part in content:
        if isinstance(part, str):
            pieces.append(part)
        elif isinstance(part, Mapping):
            if isinstance(part.get("text"), str):
                pieces.append(part["text"])
            elif part.get("type") == "tool_result":
                pieces.append(_text(part.get("content")))
    return "".join(pieces)


def _is_tool_result(item: Any) -> bool:
    if not isinstance(item, Mapping):
        return False
    if item.get("role") == "tool" or item.get("type") == "function_call_output":
        return True
    content = item.get("content")
    return isinstance(content, list) and any(isinstance(p, Mapping) and p.get("type") == "tool_result" for p in content)


def read_exchange(body: Mapping[str, Any]) -> Exchange:
    """The last user message and last tool result of a chat, Responses, Anthropic or Ollama request."""
    items: Any = body.get("messages", body.get("input"))
    if isinstance(items, str):
        return Exchange(user_message=items)
    if not isinstance(items, list):
        prompt = body.get("prompt")
        return Exchange(user_message=prompt if isinstance(prompt, str) else "")
    user, result = "", None
    for item in items:
        if _is_tool_result(item):
            result = _text(item.get("output", item.get("content")))
        elif isinstance(item, Mapping) and item.get("role") == "user":
            user = _text(item.get("content"))
    return Exchange(user_message=user, tool_result=result, after_tool=bool(items) and _is_tool_result(items[-1]))


# ---------------------------------------------------------------- loading a script file


class _Located:
    """The parsed file with the line of every value, for ``file:line: field`` errors."""

    def __init__(self, file: str, lines: Lines) -> None:
        self.file = file
        self.lines = lines

    def error(self, path: Sequence[str | int], problem: str) -> ScriptError:
        line = self.lines.nearest(path) or 1
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")
        return ScriptError(f"{self.file}:{line}: {where or '(top)'}: {problem}")


def load_script(path: str | Path) -> Script:
    """Read and check a script file.

    Raises:
        ScriptError: the file is missing, not YAML, or not a script; the message names file, line and field.
    """
    file = str(path)
    try:
        document = read_yaml(read_text(path), file)
    except InputError as exc:
        line = f"{exc.line}:" if exc.line is not None else ""
        problem = f" invalid YAML: {exc.problem}" if exc.syntax else f" {exc.problem}"
        raise ScriptError(f"{file}:{line}{problem}") from None
    return _script(document.data, _Located(file, document.lines))


def _script(data: Any, where: _Located) -> Script:
    if isinstance(data, list):
        data = {"replies": data}
    if not isinstance(data, Mapping):
        raise where.error((), "expected 'replies: [...]' (in order) or 'rules: [...]' (matched per request)")
    unknown = sorted(str(k) for k in data if k not in ("replies", "rules", "repeat"))
    if unknown:
        raise where.error((unknown[0],), "unknown key; valid: replies, rules, repeat")
    if ("replies" in data) == ("rules" in data):
        raise where.error((), "give exactly one of 'replies' (in order) and 'rules' (matched per request)")
    repeat = data.get("repeat", False)
    if not isinstance(repeat, bool):
        raise where.error(("repeat",), f"expected true or false, got {repeat!r}")
    key = "replies" if "replies" in data else "rules"
    items = data[key]
    if not isinstance(items, list) or not items:
        raise where.error((key,), "expected a non-empty list")
    if key == "replies":
        replies = tuple(_reply(item, ("replies", i), where) for i, item in enumerate(items))
        return Script(where.file, replies=replies, repeat=repeat)
    if "repeat" in data:
        raise where.error(("repeat",), "only for 'replies' (rules answer every request)")
    return Script(where.file, rules=tuple(_rule(item, ("rules", i), where) for i, item in enumerate(items)))


def _rule(item: Any, path: tuple[str | int, ...], where: _Located) -> _Rule:
    if not isinstance(item, Mapping) or "reply" not in item:
        raise where.error(path, "expected {when: {...}, reply: ...} (a rule without when matches every request)")
    unknown = sorted(str(k) for k in item if k not in ("when", "reply"))
    if unknown:
        raise where.error((*path, unknown[0]), "unknown key; valid: when, reply")
    reply = _reply(item["reply"], (*path, "reply"), where)
    when = item.get("when") or {}
    if not isinstance(when, Mapping):
        raise where.error((*path, "when"), f"expected a mapping of {', '.join(sorted(_WHEN_KEYS))}")
    unknown = sorted(str(k) for k in when if k not in _WHEN_KEYS)
    if unknown:
        raise where.error((*path, "when", unknown[0]), f"unknown condition; valid: {', '.join(sorted(_WHEN_KEYS))}")
    contains = when.get("user_contains", ())
    contains = (contains,) if isinstance(contains, str) else contains
    if not isinstance(contains, list | tuple) or not all(isinstance(w, str) and w for w in contains):
        raise where.error((*path, "when", "user_contains"), "expected a word or a list of words")
    pattern = None
    if "user_matches" in when:
        try:
            pattern = re.compile(str(when["user_matches"]))
        except re.error as exc:
            raise where.error((*path, "when", "user_matches"), f"not a regular expression: {exc}") from None
    after_tool = when.get("after_tool")
    if after_tool is not None and not isinstance(after_tool, bool):
        raise where.error((*path, "when", "after_tool"), f"expected true or false, got {after_tool!r}")
    return _Rule(reply, tuple(contains), pattern, after_tool)


def _reply(item: Any, path: tuple[str | int, ...], where: _Located) -> StubReply:
    if isinstance(item, str):
        return StubReply(text=item)
    if not isinstance(item, Mapping):
        raise where.error(path, "expected a text or {text, tool_call | tool_calls, finish_reason}")
    unknown = sorted(str(k) for k in item if k not in _REPLY_KEYS)
    if unknown:
        raise where.error((*path, unknown[0]), f"unknown key; valid: {', '.join(sorted(_REPLY_KEYS))}")
    if "tool_call" in item and "tool_calls" in item:
        raise where.error((*path, "tool_call"), "give tool_call (one) or tool_calls (a list), not both")
    text = item.get("text", "")
    if not isinstance(text, str):
        raise where.error((*path, "text"), f"expected a string, got {type(text).__name__}")
    calls_key = "tool_call" if "tool_call" in item else "tool_calls"
    raw_calls = [item["tool_call"]] if "tool_call" in item else item.get("tool_calls", [])
    if not isinstance(raw_calls, list):
        raise where.error((*path, calls_key), "expected a list of {name, arguments}")
    calls = []
    for index, call in enumerate(raw_calls):
        at = (*path, calls_key) if calls_key == "tool_call" else (*path, calls_key, index)
        if not isinstance(call, Mapping) or not isinstance(call.get("name"), str) or not call["name"]:
            raise where.error(at, "expected {name, arguments} with a tool name")
        extra = sorted(str(k) for k in call if k not in ("name", "arguments", "id"))
        if extra:
            raise where.error((*at, extra[0]), "unknown key; valid: name, arguments, id")
        arguments = call.get("arguments") or {}
        if not isinstance(arguments, Mapping):
            raise where.error((*at, "arguments"), f"expected a mapping, got {type(arguments).__name__}")
        call_id = call.get("id")
        calls.append(StubToolCall(call["name"], dict(arguments), None if call_id is None else str(call_id)))
    if not text and not calls:
        raise where.error(path, "a reply needs text or a tool call")
    numbers = {}
    for key in ("input_tokens", "output_tokens"):
        value = item.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
            raise where.error((*path, key), f"expected a count >= 0, got {value!r}")
        numbers[key] = value
    finish = item.get("finish_reason")
    if finish is not None and not isinstance(finish, str):
        raise where.error((*path, "finish_reason"), f"expected a string such as stop or length, got {finish!r}")
    return StubReply(text=text, tool_calls=tuple(calls), finish_reason=finish, **numbers)
