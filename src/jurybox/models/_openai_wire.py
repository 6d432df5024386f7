"""Chat Completions JSON: the ``json_schema`` response format sent, and the reply read back.

A reply is a completion (``_from_completion``) or, streamed, its chunks
(``_from_chunks``); both become a ``ModelResponse`` with the text, the usage and
the finish reason. A body that is not a JSON object is an unusable response.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from jurybox.core import read_json
from jurybox.models._cache import plain
from jurybox.models._errors import EmptyResponseError, ProviderError
from jurybox.models._types import ModelResponse, Usage

_SCHEMA_NAME = re.compile(r"[^a-zA-Z0-9_-]")


def _schema_format(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The ``json_schema`` response format for ``schema``, as plain dicts.

    A judge's schema is one read-only mapping shared by all its calls. It is copied into
    plain dicts (which the SDK's encoder needs, and which json.dumps encodes without calling
    ``default`` for every nested mapping: 13 us of a call's 31 us of encoding) once per
    schema object, not once per call.
    """
    if type(schema) is not MappingProxyType:  # a mutable dict may change between calls
        return _new_schema_format(schema)
    known = _SCHEMA_FORMATS.get(id(schema))
    if known is not None and known[0] is schema:
        return known[1]
    if len(_SCHEMA_FORMATS) >= _SCHEMA_FORMATS_KEPT:
        _SCHEMA_FORMATS.clear()
    formatted = _new_schema_format(schema)
    # The schema is kept alongside its copy so that its id cannot be reused by another object.
    _SCHEMA_FORMATS[id(schema)] = (schema, formatted)
    return formatted


_SCHEMA_FORMATS: dict[int, tuple[Mapping[str, Any], dict[str, Any]]] = {}
_SCHEMA_FORMATS_KEPT = 64


def _new_schema_format(schema: Mapping[str, Any]) -> dict[str, Any]:
    title = schema.get("title")
    name = _SCHEMA_NAME.sub("_", str(title))[:64] if title else "response"
    return {"name": name or "response", "schema": plain(schema), "strict": False}


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


def _json_body(content: bytes, text: Callable[[], str]) -> dict[str, Any]:
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


def _from_completion(data: dict[str, Any]) -> ModelResponse:
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
    return ModelResponse(text=text, usage=_usage(data.get("usage")), finish_reason=finish, raw=data)


def _content_text(content: Any) -> str:
    """The message text: a string, or (some compatible servers) a list of ``{"type": "text", "text": ...}``."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part["text"] for part in content if isinstance(part, dict) and isinstance(part.get("text"), str))
    raise ProviderError(f"unusable response: message content is a {type(content).__name__}", provider="openai")


def _from_chunks(chunks: list[dict[str, Any]]) -> ModelResponse:
    parts: list[str] = []
    refusal: list[str] = []
    finish: str | None = None
    usage: Any = None
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
    text = "".join(parts)
    if "".join(refusal):
        text, finish = "".join(refusal), "refusal"
    return ModelResponse(text=text, usage=_usage(usage), finish_reason=finish, raw={"stream": chunks})


def _usage(data: Any) -> Usage:
    if not isinstance(data, Mapping):
        return Usage()
    return Usage(data.get("prompt_tokens"), data.get("completion_tokens"))
