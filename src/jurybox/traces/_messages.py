"""The messages of a model call, in every form instrumentations write them.

- GenAI semantic conventions: ``gen_ai.input.messages`` / ``gen_ai.output.messages``
  (``[{"role", "parts": [{"type": "text", "content"}, {"type": "tool_call", ...}]}]``,
  as JSON text or as a structured value) and ``gen_ai.system_instructions``; the older
  message events (``gen_ai.user.message``, ``gen_ai.choice``...) and flattened
  ``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*`` attributes.
- OpenInference: ``llm.input_messages.N.message.*`` and ``llm.output_messages.N.message.*``,
  tool calls under ``message.tool_calls.M.tool_call.*``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from jurybox.core import MAX_INPUT_DEPTH, MAX_INPUT_NODES, InputLimitError, read_json
from jurybox.traces import _fast_json
from jurybox.traces._spans import Span

INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
_EVENT_ROLES = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}


@dataclass(frozen=True, slots=True)
class ModelMessage:
    """One message of a model call: role, text, the tool calls it asks for and the call it answers."""

    role: str
    text: str
    tool_calls: tuple[Mapping[str, Any], ...] = ()
    tool_call_id: str | None = None


def parse_json_text(value: Any) -> Any:
    """A JSON attribute's value: parsed within the input limits when it is JSON text, else as it came."""
    if isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] in ("{", "[", '"') or stripped in ("true", "false", "null") or _is_number(stripped):
            try:
                # read_json's own first test, without its call: too few brackets to nest past the
                # depth limit, too short to hold more values than the node limit
                if len(stripped) <= MAX_INPUT_DEPTH or (
                    len(stripped) < MAX_INPUT_NODES and stripped.count("[") + stripped.count("{") <= MAX_INPUT_DEPTH
                ):
                    return _fast_json.loads(stripped)
                return read_json(stripped)
            except (InputLimitError, json.JSONDecodeError, RecursionError):
                return value
    return value


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return bool(text) and text[0] in "-0123456789"


def text_of(value: Any) -> str:
    """The readable text of a content value: a string, a list of parts, or a ``{"text"|"content"}`` object."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        for key in ("content", "text", "message_content.text", "value"):
            if key in value:
                return text_of(value[key])
        return ""
    if isinstance(value, list):
        return "".join(text_of(part) for part in value if not _is_tool_part(part))
    return str(value)


def _is_tool_part(part: Any) -> bool:
    return isinstance(part, Mapping) and str(part.get("type", "")) in ("tool_call", "tool_call_response")


_PARSED_MESSAGES: dict[str, tuple[ModelMessage, ...]] = {}
_CACHED_TEXTS = 512
_CACHED_TEXT_CHARS = 64 * 1024


def genai_messages(value: Any) -> list[ModelMessage]:
    """Messages from a ``gen_ai.input.messages``/``gen_ai.output.messages`` value (JSON text or structured).

    A trace repeats the same text (the agent span's input is its first model call's, each call resends
    the conversation): a text read lately is not parsed again. The cache is small and holds short texts only.
    """
    if type(value) is str and len(value) <= _CACHED_TEXT_CHARS:
        cached = _PARSED_MESSAGES.get(value)
        if cached is None:
            if len(_PARSED_MESSAGES) >= _CACHED_TEXTS:
                _PARSED_MESSAGES.clear()
            cached = _PARSED_MESSAGES[value] = tuple(_genai_messages(value))
        return list(cached)
    return _genai_messages(value)


def _genai_messages(value: Any) -> list[ModelMessage]:
    data = parse_json_text(value)
    if not isinstance(data, list):
        return []
    messages = []
    for item in data:
        if item.__class__ is not dict and not isinstance(item, Mapping):
            continue
        role = str(item.get("role") or "")
        parts = item.get("parts")
        calls: list[Mapping[str, Any]] = []
        answered: str | None = None
        texts: list[str] = []
        if isinstance(parts, list):
            for part in parts:
                if part.__class__ is not dict and not isinstance(part, Mapping):
                    continue
                kind = str(part.get("type") or "")
                if kind == "tool_call":
                    calls.append({"name": part.get("name"), "arguments": part.get("arguments"), "id": part.get("id")})
                elif kind == "tool_call_response":
                    answered = _text_id(part.get("id"))
                    texts.append(text_of(part.get("response", part.get("result"))))
                elif kind in ("text", "") or "content" in part:
                    texts.append(text_of(part.get("content")))
        else:
            texts.append(text_of(item.get("content")))
            calls.extend(_openai_style_calls(item.get("tool_calls")))
            answered = _text_id(item.get("tool_call_id"))
        messages.append(ModelMessage(role or "user", "".join(texts), tuple(calls), answered))
    return messages


def _text_id(value: Any) -> str | None:
    return str(value) if isinstance(value, str | int) and not isinstance(value, bool) else None


def _openai_style_calls(value: Any) -> list[Mapping[str, Any]]:
    calls: list[Mapping[str, Any]] = []
    for call in value if isinstance(value, list) else []:
        if not isinstance(call, Mapping):
            continue
        inner = call.get("function")
        function: Mapping[str, Any] = inner if isinstance(inner, Mapping) else call
        calls.append({"name": function.get("name"), "arguments": function.get("arguments"), "id": call.get("id")})
    return calls


def system_instructions(span: Span) -> list[ModelMessage]:
    value = span.attributes.get(SYSTEM_INSTRUCTIONS)
    if value is None:
        return []
    text = text_of(parse_json_text(value))
    return [ModelMessage("system", text)] if text else []


def flattened(attributes: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """``prefix.N.rest`` attributes regrouped as a list of dicts keyed by ``rest``, in index order."""
    groups: dict[int, dict[str, Any]] = {}
    dotted = prefix + "."
    for key, value in attributes.items():
        if not key.startswith(dotted):
            continue
        index, _, rest = key[len(dotted) :].partition(".")
        if index.isdigit() and rest and len(index) < 7:
            groups.setdefault(int(index), {})[rest] = value
    return [groups[i] for i in sorted(groups)]


def openinference_messages(attributes: Mapping[str, Any], prefix: str) -> list[ModelMessage]:
    """Messages from OpenInference's flattened ``llm.input_messages``/``llm.output_messages``."""
    messages = []
    for group in flattened(attributes, prefix):
        role = str(group.get("message.role") or "")
        text = group.get("message.content")
        if text is None:
            contents = flattened(group, "message.contents")
            text = "".join(str(c.get("message_content.text") or "") for c in contents)
        calls = [
            {
                "name": call.get("tool_call.function.name"),
                "arguments": call.get("tool_call.function.arguments"),
                "id": call.get("tool_call.id"),
            }
            for call in flattened(group, "message.tool_calls")
        ]
        messages.append(
            ModelMessage(role or "user", text_of(text), tuple(calls), _text_id(group.get("message.tool_call_id")))
        )
    return messages


def openllmetry_messages(attributes: Mapping[str, Any], prefix: str) -> list[ModelMessage]:
    """Messages from the older flattened ``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*`` attributes."""
    messages = []
    for group in flattened(attributes, prefix):
        calls = [
            {"name": call.get("name"), "arguments": call.get("arguments"), "id": call.get("id")}
            for call in flattened(group, "tool_calls")
        ]
        role = str(group.get("role") or ("assistant" if prefix.endswith("completion") else "user"))
        messages.append(
            ModelMessage(role, text_of(group.get("content")), tuple(calls), _text_id(group.get("tool_call_id")))
        )
    return messages


def event_messages(span: Span) -> tuple[list[ModelMessage], list[ModelMessage]]:
    """(input, output) messages from GenAI message events recorded on the span."""
    inputs: list[ModelMessage] = []
    outputs: list[ModelMessage] = []
    for event in span.events:
        attributes = event.attributes
        body = parse_json_text(attributes.get("gen_ai.event.content", attributes.get("content")))
        if event.name in _EVENT_ROLES:
            content = body.get("content") if isinstance(body, Mapping) else body
            calls = _openai_style_calls(body.get("tool_calls")) if isinstance(body, Mapping) else []
            answered = (
                _text_id(body.get("id")) if isinstance(body, Mapping) and event.name == "gen_ai.tool.message" else None
            )
            inputs.append(ModelMessage(_EVENT_ROLES[event.name], text_of(content), tuple(calls), answered))
        elif event.name == "gen_ai.choice":
            message = parse_json_text(attributes.get("message", body))
            if isinstance(message, Mapping):
                outputs.append(
                    ModelMessage(
                        str(message.get("role") or "assistant"),
                        text_of(message.get("content")),
                        tuple(_openai_style_calls(message.get("tool_calls"))),
                    )
                )
            elif message is not None:
                outputs.append(ModelMessage("assistant", text_of(message)))
    return inputs, outputs


def call_messages(span: Span) -> tuple[list[ModelMessage], list[ModelMessage]]:
    """(input, output) messages of a model-call span, from whichever form it carries."""
    attributes = span.attributes
    if INPUT_MESSAGES in attributes or OUTPUT_MESSAGES in attributes:
        inputs = genai_messages(attributes.get(INPUT_MESSAGES))
        if SYSTEM_INSTRUCTIONS in attributes:
            inputs = system_instructions(span) + inputs
        return inputs, genai_messages(attributes.get(OUTPUT_MESSAGES))
    if any(key.startswith("llm.input_messages.") or key.startswith("llm.output_messages.") for key in attributes):
        return (
            openinference_messages(attributes, "llm.input_messages"),
            openinference_messages(attributes, "llm.output_messages"),
        )
    if any(key.startswith("gen_ai.prompt.") or key.startswith("gen_ai.completion.") for key in attributes):
        return openllmetry_messages(attributes, "gen_ai.prompt"), openllmetry_messages(attributes, "gen_ai.completion")
    return event_messages(span)


def last_text(messages: Sequence[ModelMessage], role: str) -> str | None:
    """The text of the last message of ``role`` that has text, or None."""
    for message in reversed(messages):
        if message.role == role and message.text:
            return message.text
    return None
