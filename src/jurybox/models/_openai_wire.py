"""Chat Completions JSON: the body sent for a request, and the reply read back.

``chat_completions_body`` builds the body from a ``GenerateRequest`` (the ``json_schema``
response format, the tools); a reply is a completion (``from_completion``) or, streamed,
its chunks (``from_chunks``), both read into a ``ModelResponse`` with the text, the tool
calls, the usage and the finish reason. A body that is not a JSON object is an unusable
response.
"""

from __future__ import annotations

import contextlib
import datetime
import re
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from jurybox.core import ToolCall, compact_encoder, read_json
from jurybox.models._errors import EmptyResponseError, ProviderError
from jurybox.models._tool_calls import tool_call
from jurybox.models._types import GenerateRequest, ModelResponse, Usage, plain

_SCHEMA_NAME = re.compile(r"[^a-zA-Z0-9_-]")


def chat_completions_body(
    request: GenerateRequest,
    *,
    model: str,
    max_tokens_param: str,
    structured_output: bool,
    stream: bool,
    params: Mapping[str, Any],
) -> dict[str, Any]:
    """The Chat Completions arguments for ``request`` (``extra_body`` holds ``params``, as the SDK takes them)."""
    body: dict[str, Any] = {
        "model": model,
        "messages": [m.to_dict() for m in request.messages],
        "temperature": request.temperature,
    }
    if request.max_tokens is not None:
        body[max_tokens_param] = request.max_tokens
    if request.seed is not None:
        body["seed"] = request.seed
    if request.json_schema is not None and structured_output:
        body["response_format"] = {"type": "json_schema", "json_schema": schema_format(request.json_schema)}
    if request.tools:
        body["tools"] = [{"type": "function", "function": tool.to_dict()} for tool in request.tools]
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    if params:
        body["extra_body"] = dict(params)
    return body


def schema_format(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The ``json_schema`` member of a ``response_format`` for ``schema``.

    A judge's schema is one read-only mapping shared by all its calls. It is copied into
    plain dicts (which the SDK's encoder needs, and which json.dumps encodes without calling
    ``default`` for every nested mapping: 13 us of a call's 31 us of encoding) once per
    schema object, not once per call, and its JSON text is kept with it (``encode_body``
    writes that text instead of encoding the same schema on every call).
    """
    if type(schema) is not MappingProxyType:  # a mutable dict may change between calls
        return _new_schema_format(schema)
    known = _SCHEMA_FORMATS.get(id(schema))
    if known is not None and known[0] is schema:
        return known[1]
    if len(_SCHEMA_FORMATS) >= _SCHEMA_FORMATS_KEPT:
        _SCHEMA_FORMATS.clear()
        _FORMAT_TEXTS.clear()
    formatted = _new_schema_format(schema)
    # The schema is kept alongside its copy so that its id cannot be reused by another object.
    _SCHEMA_FORMATS[id(schema)] = (schema, formatted)
    with contextlib.suppress(TypeError, ValueError, RecursionError):  # encode_body says so where the body is sent
        _FORMAT_TEXTS[id(formatted)] = (formatted, _ENCODE(formatted))
    return formatted


_SCHEMA_FORMATS: dict[int, tuple[Mapping[str, Any], dict[str, Any]]] = {}
_SCHEMA_FORMATS_KEPT = 64
# A kept schema format's JSON text, by the format's id (the format kept alive beside it). The
# formats are this module's own copies, handed out only inside bodies it builds.
_FORMAT_TEXTS: dict[int, tuple[dict[str, Any], str]] = {}


def _new_schema_format(schema: Mapping[str, Any]) -> dict[str, Any]:
    title = schema.get("title")
    name = _SCHEMA_NAME.sub("_", str(title))[:64] if title else "response"
    return {"name": name or "response", "schema": plain(schema), "strict": False}


def encode_body(body: Mapping[str, Any]) -> bytes:
    """The bytes the SDK sends for ``body`` (openai._utils._json.openapi_dumps, without its pydantic extras).

    A ``response_format`` whose schema ``schema_format`` keeps is written from its kept text;
    the rest of the body is encoded around it, in the body's own key order.
    """
    response_format = body.get("response_format")
    schema_text = _kept_format_text(response_format)
    if schema_text is None:
        return _ENCODE(body).encode()
    before: dict[str, Any] = {}
    after: dict[str, Any] = {}
    part = before
    for key, value in body.items():
        if key == "response_format":
            part = after
        else:
            part[key] = value
    head = _ENCODE(before)[:-1] if before else "{"
    tail = _ENCODE(after)[1:] if after else "}"
    middle = '"response_format":{"type":"json_schema","json_schema":' + schema_text + "}"
    text = head + ("," if before else "") + middle + ("," if after else "") + tail
    return text.encode()


def _kept_format_text(response_format: Any) -> str | None:
    """The kept JSON text of a ``{"type": "json_schema", "json_schema": <kept format>}``, else None."""
    if type(response_format) is not dict or len(response_format) != 2:
        return None
    items = iter(response_format.items())
    if next(items) != ("type", "json_schema"):
        return None
    key, formatted = next(items)
    if key != "json_schema":
        return None
    known = _FORMAT_TEXTS.get(id(formatted))
    return known[1] if known is not None and known[0] is formatted else None


def _json_default(value: Any) -> Any:
    """What ``json.dumps`` cannot encode itself, encoded as the openai SDK's encoder would."""
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, datetime.datetime | datetime.date):
        return value.isoformat()
    model_dump = getattr(value, "model_dump", None)  # a pydantic model in params
    if callable(model_dump):
        return model_dump(mode="json")
    raise TypeError(f"openai: cannot send a {type(value).__name__} as JSON")


_ENCODE = compact_encoder(_json_default)  # json.dumps with the SDK's settings, its encoder built once


def json_object(content: bytes, text: Callable[[], str]) -> dict[str, Any]:
    """The reply body parsed: a JSON object, else an EmptyResponseError or ProviderError (``text`` for the message)."""
    if not content.strip():
        raise EmptyResponseError("empty response body", provider="openai")
    try:
        data = read_json(content)
    except ValueError as error:
        raise ProviderError(
            f"invalid JSON from the model: the body is not JSON ({error})",
            provider="openai",
            provider_message=text()[:500],
        ) from error
    if not isinstance(data, dict):
        raise ProviderError("unusable response: the body is not a JSON object", provider="openai")
    return data


def from_completion(data: dict[str, Any]) -> ModelResponse:
    """The ModelResponse of a (non-streamed) completion."""
    choices = data.get("choices")
    if not choices or not isinstance(choices, list) or not isinstance(choices[0], dict):
        raise ProviderError("the reply has no choices", provider="openai", provider_message=str(data)[:500])
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise ProviderError("the reply's choice has no message", provider="openai", provider_message=str(data)[:500])
    text = _content_text(message.get("content"))
    finish = choice.get("finish_reason")
    refusal = message.get("refusal")
    if refusal:
        # A refusal is the model's answer; keep it visible as text so the judge can ABSTAIN on it.
        text, finish = str(refusal), "refusal"
    calls = message.get("tool_calls")
    return ModelResponse(
        text=text,
        usage=_usage(data.get("usage")),
        finish_reason=finish,
        raw=data,
        tool_calls=_tool_calls(calls) if calls else (),
    )


def _content_text(content: Any) -> str:
    """The message text: a string, or (some compatible servers) a list of ``{"type": "text", "text": ...}``."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part["text"] for part in content if isinstance(part, dict) and isinstance(part.get("text"), str))
    raise ProviderError(f"unusable response: message content is a {type(content).__name__}", provider="openai")


def _tool_calls(calls: Any) -> tuple[ToolCall, ...]:
    if not isinstance(calls, list) or not all(isinstance(call, dict) for call in calls):
        raise ProviderError("unusable response: the message's tool_calls are not a list of objects", provider="openai")
    return tuple(_tool_call(call) for call in calls)


def _tool_call(call: dict[str, Any]) -> ToolCall:
    function = call.get("function")
    if not isinstance(function, dict):
        raise ProviderError("unusable response: a tool call has no function", provider="openai")
    return tool_call(function.get("name"), function.get("arguments"), call.get("id"), provider="openai")


def from_chunks(chunks: list[dict[str, Any]]) -> ModelResponse:
    """The ModelResponse of a streamed completion, from its chunks in order."""
    parts: list[str] = []
    refusal: list[str] = []
    finish: str | None = None
    usage: Any = None
    calls: dict[int, dict[str, Any]] = {}  # by the delta's index: id, name and argument pieces
    for chunk in chunks:
        if chunk.get("usage"):
            usage = chunk["usage"]
        for choice in chunk.get("choices") or []:
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            parts.append(delta.get("content") or "")
            refusal.append(delta.get("refusal") or "")
            finish = choice.get("finish_reason") or finish
            for piece in delta.get("tool_calls") or ():
                _add_tool_call_piece(calls, piece)
    text = "".join(parts)
    if "".join(refusal):
        text, finish = "".join(refusal), "refusal"
    assembled = tuple(
        tool_call(call.get("name"), "".join(call["arguments"]), call.get("id"), provider="openai")
        for _, call in sorted(calls.items())
    )
    return ModelResponse(
        text=text, usage=_usage(usage), finish_reason=finish, raw={"stream": chunks}, tool_calls=assembled
    )


def _add_tool_call_piece(calls: dict[int, dict[str, Any]], piece: Any) -> None:
    """One streamed tool-call delta: the first of an index brings id and name, each brings a piece of the arguments."""
    if not isinstance(piece, dict) or not isinstance(piece.get("index", 0), int):
        raise ProviderError("unusable response: a streamed tool call is not an object with an index", provider="openai")
    call = calls.setdefault(piece.get("index", 0), {"arguments": []})
    if piece.get("id"):
        call["id"] = piece["id"]
    function = piece.get("function") or {}
    if not isinstance(function, dict):
        raise ProviderError("unusable response: a streamed tool call's function is not an object", provider="openai")
    if function.get("name"):
        call["name"] = function["name"]
    arguments = function.get("arguments")
    if arguments:
        if not isinstance(arguments, str):
            raise ProviderError("unusable response: streamed tool call arguments are not text", provider="openai")
        call["arguments"].append(arguments)


def _usage(data: Any) -> Usage:
    if not isinstance(data, Mapping):
        return Usage()
    return Usage(data.get("prompt_tokens"), data.get("completion_tokens"))
