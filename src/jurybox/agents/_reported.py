"""Tool calls a service reports it ran internally, read from its response as hostile input.

A service behind an OpenAI-compatible endpoint often runs its tools itself and
answers with the final text only, so the trace would show no tool calls. It can
report them in a response field (``metadata.tool_calls`` by default): a list of
``{name, arguments, result?, id?}`` (arguments an object or a JSON object
string), OpenAI's ``{id, type: function, function: {name, arguments}}`` or the
Responses API's ``{type: function_call, call_id, name, arguments}``. The list
may also come as one JSON string (the Responses API's ``metadata`` holds only
strings). Whatever the service sends is bounded in count and size, and a
malformed entry is an error naming the field -- never a crash, never a guess.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from jurybox.core import ToolCall, read_json

DEFAULT_TOOL_CALLS_PATH = "metadata.tool_calls"
MAX_REPORTED_CALLS = 256
MAX_CALL_CHARS = 64_000
MAX_LIST_CHARS = 1_000_000
MAX_NAME_CHARS = 200


def reported_tool_calls(value: Any, *, field: str) -> tuple[ToolCall, ...]:
    """The tool calls in ``value`` (a list, a JSON string holding one, or None for none).

    Raises:
        ValueError: the value is not a list of tool calls; the message starts with the field
            (``metadata.tool_calls[2].arguments: ...``).
    """
    if value is None:
        return ()
    if isinstance(value, str):
        if len(value) > MAX_LIST_CHARS:
            raise ValueError(f"{field}: {len(value)} characters, over the {MAX_LIST_CHARS} limit")
        try:
            value = read_json(value) if value.strip() else []
        except ValueError as exc:
            raise ValueError(f"{field}: a string that is not a JSON list ({exc})") from None
    if not isinstance(value, list):
        raise ValueError(f"{field}: expected a list of tool calls, got {type(value).__name__}")
    if len(value) > MAX_REPORTED_CALLS:
        raise ValueError(f"{field}: {len(value)} tool calls, over the limit of {MAX_REPORTED_CALLS}")
    return tuple(_call(item, f"{field}[{index}]") for index, item in enumerate(value))


def _call(item: Any, where: str) -> ToolCall:
    if not isinstance(item, Mapping):
        raise ValueError(f"{where}: expected an object {{name, arguments}}, got {type(item).__name__}")
    try:
        size = len(json.dumps(item, default=str))
    except (ValueError, RecursionError):
        raise ValueError(f"{where}: not JSON-serializable (nested too deep?)") from None
    if size > MAX_CALL_CHARS:
        raise ValueError(f"{where}: {size} characters of JSON, over the {MAX_CALL_CHARS} limit for one call")
    function = item.get("function")
    if function is not None and not isinstance(function, Mapping):
        raise ValueError(f"{where}.function: expected an object {{name, arguments}}, got {type(function).__name__}")
    source, prefix = (function, f"{where}.function") if function is not None else (item, where)
    name = source.get("name")
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME_CHARS:
        raise ValueError(f"{prefix}.name: expected a tool name (1-{MAX_NAME_CHARS} characters), got {name!r:.80}")
    arguments = _arguments(source.get("arguments", source.get("args")), f"{prefix}.arguments")
    result = item.get("result", item.get("output"))
    call_id = item.get("call_id", item.get("id"))  # a Responses call is answered by its call_id
    if call_id is not None and not isinstance(call_id, str | int):
        raise ValueError(f"{where}.id: expected a string, got {type(call_id).__name__}")
    return ToolCall(name=name, arguments=arguments, result=result, id=None if call_id is None else str(call_id))


def _arguments(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if isinstance(value, str):
        if not value.strip():
            return {}
        try:
            value = read_json(value)
        except ValueError:
            raise ValueError(f"{where}: a string that is not JSON: {value!r:.80}") from None
    if not isinstance(value, Mapping):
        raise ValueError(f"{where}: expected an object (or a JSON object string), got {type(value).__name__}")
    return {str(key): argument for key, argument in value.items()}
