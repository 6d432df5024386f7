"""Helpers the bridges share: reading duck-typed objects and framework content shapes."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from jurybox.agents._chat import parse_arguments
from jurybox.core import Context, Message, ToolCall

_MISSING = object()


def get(obj: Any, name: str, default: Any = None) -> Any:
    """``obj.name`` or ``obj[name]``: frameworks hand out both objects and plain dicts."""
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    value = getattr(obj, name, _MISSING)
    return default if value is _MISSING else value


def text_of(content: Any) -> str:
    """Text from a message content: a string, or a list of blocks (``{"type": "text", "text": ...}``)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Iterable) and not isinstance(content, bytes | Mapping):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            else:
                text = get(block, "text")
                if isinstance(text, str):
                    parts.append(text)
        return "".join(parts)
    text = get(content, "text")
    return text if isinstance(text, str) else str(content)


def arguments_of(value: Any) -> dict[str, Any]:
    """Tool-call arguments as a dict, from a dict or a JSON string (unparsable text kept under ``_raw_arguments``)."""
    if isinstance(value, Mapping):
        return dict(value)
    if value is None or isinstance(value, str):
        return parse_arguments(value)  # the chat client's parser: a JSON string is the OpenAI wire form
    return {"_raw_arguments": repr(value)}


def output_text(value: Any) -> str:
    """A final output as text: strings as they are, models and dicts as JSON."""
    if isinstance(value, str):
        return value
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        value = dump(mode="json")
    try:
        return json.dumps(value, sort_keys=True, default=str)
    except TypeError:
        return str(value)


def add_usage(total: dict[str, int], usage: Any) -> None:
    """Add a usage object's token counts (several naming schemes) to ``total``."""
    if usage is None:
        return
    for key, names in (
        ("input_tokens", ("input_tokens", "prompt_tokens", "request_tokens")),
        ("output_tokens", ("output_tokens", "completion_tokens", "response_tokens")),
    ):
        for name in names:
            value = get(usage, name)
            if isinstance(value, int) and not isinstance(value, bool):
                total[key] = total.get(key, 0) + value
                break


def agent_run_context(
    *,
    prompt: str,
    output: str,
    expected: str | None,
    messages: Iterable[Message],
    calls: Iterable[Mapping[str, Any]],
    results: Mapping[Any, Any],
    sources: Iterable[str],
    duration: float | None,
    metadata: dict[str, Any],
    usage: Mapping[str, int],
) -> Context:
    """The Context of one framework run: tool calls joined with their results by call id, usage summed."""
    if usage:
        metadata["usage"] = dict(usage)
        metadata["tokens"] = sum(usage.values())
    return Context(
        input=prompt,
        output=output,
        expected=expected,
        messages=tuple(messages),
        tool_calls=tuple(
            ToolCall(name=str(c["name"]), arguments=c["arguments"], result=results.get(c["id"]), id=c["id"])
            for c in calls
        ),
        sources=tuple(sources),
        duration=duration,
        metadata=metadata,
    )
