"""OTLP/JSON's building blocks: AnyValue, key-value lists, ids and times, decoded into plain Python values.

OTLP/JSON writes ids as hex and 64-bit integers as strings; a protobuf-JSON mapper
(``MessageToJson``) writes ids as base64 and may use snake_case keys. Both are read.
Anything of the wrong type raises ``ValueError`` naming the field, for the caller to count.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Mapping
from typing import Any

_HEX = re.compile(r"[0-9a-fA-F]+")


def field_of(data: Mapping[str, Any], camel: str, snake: str | None = None) -> Any:
    """``data[camel]``, else ``data[snake]`` (protobuf JSON parsers accept either spelling)."""
    if camel in data:
        return data[camel]
    return data.get(snake) if snake is not None else None


def mapping(value: Any, what: str) -> Mapping[str, Any]:
    if type(value) is dict:
        return value
    if not isinstance(value, Mapping):
        raise ValueError(f"{what} must be an object, got {type(value).__name__}")
    return value


def items(value: Any, what: str) -> list[Any]:
    if type(value) is list:
        return value
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError(f"{what} must be an array, got {type(value).__name__}")
    return value


def any_value(value: Any) -> Any:
    """An OTLP AnyValue object as a Python value (None for an empty or unknown one)."""
    if type(value) is dict and len(value) == 1:  # the usual shape, one key: a table lookup, not a walk
        for key, inner in value.items():
            decode = _DECODERS.get(key)
            return decode(inner) if decode is not None else None
    if not isinstance(value, Mapping):
        return None
    for camel, snake in _PRECEDENCE:  # more than one key (hostile or odd): the first in this order wins
        for key in (camel, snake):
            if key in value:
                return _DECODERS[key](value[key])
    return None


def _string(text: Any) -> str:
    return text if type(text) is str else str(text)


def _array(inner: Any) -> list[Any]:
    values = inner.get("values") if isinstance(inner, Mapping) else None
    return [any_value(item) for item in items(values, "arrayValue.values")]


def _kvlist(inner: Any) -> dict[str, Any]:
    values = inner.get("values") if isinstance(inner, Mapping) else None
    return key_values(values)


_PRECEDENCE = (
    ("stringValue", "string_value"),
    ("boolValue", "bool_value"),
    ("intValue", "int_value"),
    ("doubleValue", "double_value"),
    ("arrayValue", "array_value"),
    ("kvlistValue", "kvlist_value"),
    ("bytesValue", "bytes_value"),
)
_DECODERS: dict[str, Callable[[Any], Any]] = {
    "stringValue": _string,
    "boolValue": bool,
    "intValue": int,
    "doubleValue": float,
    "arrayValue": _array,
    "kvlistValue": _kvlist,
    "bytesValue": str,  # base64 text: kept as written, never decoded into the record
}
_DECODERS.update({snake: _DECODERS[camel] for camel, snake in _PRECEDENCE})


def key_values(value: Any) -> dict[str, Any]:
    """A list of ``{"key": ..., "value": AnyValue}`` as a dict (a repeated key keeps its last value).

    An entry that is not such an object is left out: one bad attribute does not lose the span.
    """
    out: dict[str, Any] = {}
    for entry in items(value, "attributes"):
        if entry.__class__ is dict and "value" in entry:  # the usual shape, a string value: read by subscript
            key = entry.get("key")
            raw = entry["value"]
            if key.__class__ is str and raw.__class__ is dict and len(raw) == 1 and "stringValue" in raw:
                text = raw["stringValue"]
                if text.__class__ is str:
                    out[key] = text
                    continue
        if type(entry) is dict or isinstance(entry, Mapping):
            key = entry.get("key")
            if type(key) is str:
                try:
                    out[key] = any_value(entry.get("value"))
                except (ValueError, TypeError, OverflowError):
                    continue
    return out


def hex_id(value: Any, length: int, what: str) -> str:
    """An id as ``length`` lower-case hex digits, from hex (OTLP/JSON) or base64 (protobuf JSON)."""
    if value.__class__ is str:
        found = _checked_ids.get(value)  # a trace id comes with each of its spans, a parent id with each child
        if found is not None and len(found) == length:
            return found
    if not isinstance(value, str) or not value:
        raise ValueError(f"{what} is missing")
    checked = _checked_id(value, length, what)
    if len(_checked_ids) >= _CHECKED_IDS:
        _checked_ids.clear()
    _checked_ids[value] = checked
    return checked


_checked_ids: dict[str, str] = {}
_CHECKED_IDS = 65_536


def _checked_id(value: str, length: int, what: str) -> str:
    if len(value) == length and _HEX.fullmatch(value):
        return value.lower()
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError(f"{what} is neither {length} hex digits nor base64: {value[:40]!r}") from None
    if len(raw) * 2 != length:
        raise ValueError(f"{what} has {len(raw)} bytes, expected {length // 2}")
    return raw.hex()


def optional_parent(value: Any) -> str | None:
    """A parent span id, or None for a root (missing, empty or all zeros)."""
    if value in (None, ""):
        return None
    parent = hex_id(value, 16, "parentSpanId")
    return None if parent == "0" * 16 else parent


def nanoseconds(value: Any, what: str) -> int:
    """A time in nanoseconds since the epoch (a number, or a decimal string as OTLP/JSON writes 64-bit ints)."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError(f"{what} must be an integer, got {type(value).__name__}")
    number = int(value)
    if number < 0:
        raise ValueError(f"{what} must not be negative")
    return number
