"""What a span is and what it says, under the GenAI semantic conventions or OpenInference.

A span is an agent run, a model call, a tool call, or something else (a chain step,
an HTTP request) that only holds the others. The attribute names are the ones the
OpenTelemetry GenAI conventions (``gen_ai.operation.name``, ``gen_ai.tool.call.arguments``...)
and OpenInference (``openinference.span.kind``, ``tool.name``, ``input.value``...) define,
plus the few that pydantic-ai's instrumentation writes before them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jurybox.core import Message
from jurybox.traces._messages import (
    INPUT_MESSAGES,
    OUTPUT_MESSAGES,
    ModelMessage,
    genai_messages,
    last_text,
    parse_json_text,
    text_of,
)
from jurybox.traces._spans import Span

AGENT = "agent"
MODEL = "model"
TOOL = "tool"
OTHER = "other"

OPERATION = "gen_ai.operation.name"
OPENINFERENCE_KIND = "openinference.span.kind"
_MODEL_OPERATIONS = frozenset({"chat", "text_completion", "generate_content", "completion"})
_GENAI_KEYS = ("gen_ai.", "llm.", "tool.", "input.value", "output.value", OPENINFERENCE_KIND)


def role_of(span: Span) -> str:
    """``agent``, ``model``, ``tool`` or ``other``."""
    attributes = span.attributes
    raw_operation = attributes.get(OPERATION)
    operation = raw_operation if isinstance(raw_operation, str) else None
    if operation == "invoke_agent":
        return AGENT
    if operation == "execute_tool":
        return TOOL
    if operation in _MODEL_OPERATIONS:
        return MODEL
    kind = attributes.get(OPENINFERENCE_KIND)
    if isinstance(kind, str):
        kind = kind.upper()
        if kind == "AGENT":
            return AGENT
        if kind == "TOOL":
            return TOOL
        if kind == "LLM":
            return MODEL
        return OTHER
    if "gen_ai.tool.name" in attributes and ("tool_arguments" in attributes or "gen_ai.tool.call.id" in attributes):
        return TOOL  # pydantic-ai's "running tool" span
    if "gen_ai.agent.name" in attributes and ("final_result" in attributes or "pydantic_ai.all_messages" in attributes):
        return AGENT  # pydantic-ai's "agent run" span
    if operation is None and ("gen_ai.request.model" in attributes or "gen_ai.system" in attributes):
        return MODEL
    return OTHER


def speaks_genai(span: Span) -> bool:
    """True when a span carries any GenAI or OpenInference attribute."""
    return any(key.startswith(_GENAI_KEYS) for key in span.attributes)


def tool_call_of(span: Span) -> dict[str, Any]:
    """A tool span as a tool call: ``name``, ``arguments`` (a mapping), ``result``, ``id``."""
    attributes = span.attributes
    name = _first_text(attributes, "gen_ai.tool.name", "tool.name", "tool_name")
    if not name:
        name = span.name.removeprefix("execute_tool").strip() or span.name or "tool"
    raw_arguments = _first(attributes, "gen_ai.tool.call.arguments", "tool_arguments", "input.value", "tool.parameters")
    raw_result = _first(attributes, "gen_ai.tool.call.result", "tool_response", "output.value")
    call_id = _first_text(attributes, "gen_ai.tool.call.id", "tool.id", "tool_call.id")
    return {
        "name": name,
        "arguments": arguments_mapping(raw_arguments),
        "result": tool_result(parse_json_text(raw_result)),
        "id": call_id or None,
    }


def arguments_mapping(value: Any) -> Mapping[str, Any]:
    """Tool-call arguments as a mapping: JSON text parsed; anything not an object kept under ``input``."""
    parsed = parse_json_text(value)
    if parsed is None or parsed == "":
        return {}
    if isinstance(parsed, Mapping):
        return {str(key): item for key, item in parsed.items()}
    return {"input": parsed}


def usage_of(span: Span) -> dict[str, int]:
    """A model call's token counts: ``input_tokens``, ``output_tokens`` (those it reports)."""
    attributes = span.attributes
    usage: dict[str, int] = {}
    for name, keys in (
        ("input_tokens", ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt")),
        (
            "output_tokens",
            ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens", "llm.token_count.completion"),
        ),
    ):
        value = _first(attributes, *keys)
        number = _count(value)
        if number is not None:
            usage[name] = number
    return usage


def model_of(span: Span) -> str | None:
    return _first_text(span.attributes, "gen_ai.response.model", "gen_ai.request.model", "llm.model_name") or None


def agent_io(span: Span) -> tuple[str | None, str | None]:
    """An agent span's own input and final output, when it records them."""
    attributes = span.attributes
    user: str | None = None
    answer: str | None = None
    if INPUT_MESSAGES in attributes:
        user = last_text(genai_messages(attributes[INPUT_MESSAGES]), "user")
    if OUTPUT_MESSAGES in attributes:
        answer = last_text(genai_messages(attributes[OUTPUT_MESSAGES]), "assistant")
    if user is None and "input.value" in attributes:
        user = readable_input(attributes["input.value"])
    if answer is None and "output.value" in attributes:
        answer = readable_output(attributes["output.value"])
    if answer is None and "final_result" in attributes:
        answer = text_of(parse_json_text(attributes["final_result"])) or None
    return user, answer


def readable_input(value: Any) -> str | None:
    """The user's words in an ``input.value``: the text, or the last user message of a JSON payload."""
    data = parse_json_text(value)
    if isinstance(data, str):
        return data
    if isinstance(data, Mapping):
        messages = data.get("messages")
        if isinstance(messages, list):
            found = _last_user(messages)
            if found:
                return found
        for key in ("input", "query", "question", "prompt", "message", "content"):
            if isinstance(data.get(key), str):
                return str(data[key])
    if isinstance(data, list):
        return _last_user(data)
    return None if data is None else text_of(data) or None


def readable_output(value: Any) -> str | None:
    """The answer in an ``output.value``: the text, or the last assistant message of a JSON payload."""
    data = parse_json_text(value)
    if isinstance(data, str):
        return data
    if isinstance(data, Mapping):
        messages = data.get("messages")
        if isinstance(messages, list) and messages:
            return message_text(messages[-1])
        for key in ("output", "answer", "content", "text", "final_output"):
            if isinstance(data.get(key), str):
                return str(data[key])
    return None if data is None else text_of(data) or None


def message_text(message: Any) -> str | None:
    """The text of one serialized message: ``{"content"}``, LangChain's ``{"type", "data": {"content"}}``
    or ``{"kwargs": {"content"}}``, or a ``[role, text]`` pair."""
    if isinstance(message, list | tuple) and len(message) == 2:
        return text_of(message[1]) or None
    if not isinstance(message, Mapping):
        return None
    for holder in (message, message.get("data"), message.get("kwargs")):
        if isinstance(holder, Mapping) and "content" in holder:
            return text_of(holder["content"]) or None
    return None


def message_role(message: Any) -> str:
    if isinstance(message, list | tuple) and len(message) == 2:
        return str(message[0])
    if isinstance(message, Mapping):
        return str(message.get("role") or message.get("type") or "")
    return ""


def tool_result(value: Any) -> Any:
    """A tool's result: a serialized LangChain ``ToolMessage`` unwrapped to its content, else as it came."""
    if isinstance(value, Mapping) and value.get("type") == "tool":
        text = message_text(value)
        if text is not None:
            return parse_json_text(text)
    return value


def _last_user(messages: list[Any]) -> str | None:
    for message in reversed(messages):
        if message_role(message) in ("user", "human"):
            return message_text(message)
    return None


def error_of(span: Span) -> str | None:
    """Why a span failed (status message, ``error.type`` or an exception event), or None when it did not."""
    if not span.events and span.status != "error" and "error.type" not in span.attributes:
        return None  # most spans: nothing to look through
    exception = next((event for event in span.events if event.name == "exception"), None)
    failed = span.status == "error" or "error.type" in span.attributes or exception is not None
    if not failed:
        return None
    if exception is not None:
        kind = exception.attributes.get("exception.type")
        message = exception.attributes.get("exception.message")
        text = ": ".join(str(part) for part in (kind, message) if part)
        if text:
            return text
    return span.status_message or str(span.attributes.get("error.type") or "error")


def as_jurybox_messages(messages: list[ModelMessage]) -> list[Message]:
    return [Message(m.role, m.text) for m in messages]


def _first(attributes: Mapping[str, Any], *keys: str) -> Any:
    for key in keys:
        if key in attributes and attributes[key] is not None:
            return attributes[key]
    return None


def _first_text(attributes: Mapping[str, Any], *keys: str) -> str:
    value = _first(attributes, *keys)
    return value if isinstance(value, str) else ""


def _count(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    if isinstance(value, str) and value.isdigit() and len(value) < 19:
        return int(value)
    return None
