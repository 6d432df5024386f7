"""OTLP/JSON export requests of the usual shape -> spans in one pass, with the depth bounded on the way.

The careful reader (``_otlp_json.spans_from_request``) walks the whole parsed line for its depth
first, then converts it field by field, with a check and an error message for each. The lines
a Collector writes are the same few shapes over and over, so here one pass converts a request
of exactly those shapes (camelCase keys, hex or base64 ids, times as decimal strings or
integers, attribute values of one known kind) and measures the depth only where the shape does
not fix it (array and key-value-list attributes, links, unknown scope fields). Anything else (an
unknown key, a value of another type, a float that may be orjson's reading of an integer past
64 bits, a span the careful reader would skip) makes it answer None, and the careful reader
reads the line: both give the same spans, the same counts and the same errors.
"""

from __future__ import annotations

from typing import Any

from jurybox.core import MAX_INPUT_DEPTH
from jurybox.traces import _fast_json
from jurybox.traces._otlp_values import any_value, hex_id, key_values
from jurybox.traces._spans import STATUS_UNSET, Span, SpanEvent, status_name

_REQUEST_KEYS = frozenset({"resourceSpans"})
_RESOURCE_SPANS_KEYS = frozenset({"resource", "scopeSpans", "schemaUrl"})
_SCOPE_SPANS_KEYS = frozenset({"scope", "spans", "schemaUrl"})
_READ_SPAN_KEYS = frozenset(
    (
        "traceId",
        "spanId",
        "parentSpanId",
        "name",
        "startTimeUnixNano",
        "endTimeUnixNano",
        "attributes",
        "status",
        "events",
    )
)
_SPAN_KEYS = _READ_SPAN_KEYS | {
    "kind",
    "flags",
    "traceState",
    "links",
    "droppedAttributesCount",
    "droppedEventsCount",
    "droppedLinksCount",
}
_USUAL_SPAN_KEYS = _READ_SPAN_KEYS | {"kind"}
_EVENT_KEYS = frozenset({"timeUnixNano", "name", "attributes", "droppedAttributesCount"})
_STATUS_KEYS = frozenset({"code", "message"})
_NO_PARENT = "0" * 16
# Levels of nesting where each part of a request sits (the request object is level 1): a value
# whose own nesting is not fixed by the shape may nest ``MAX_INPUT_DEPTH - level + 1`` levels.
_RESOURCE_LEVEL = 4
_SCOPE_LEVEL = 6
_SPAN_FIELD_LEVEL = 8
_SPAN_VALUE_LEVEL = 11  # span > attributes > key-value > AnyValue > the value inside
_EVENT_VALUE_LEVEL = 13  # span > events > event > attributes > key-value > AnyValue > the value inside


class _UnusualError(Exception):
    """Raised inside the pass: the careful reader reads this request."""


def fast_request_spans(data: Any) -> list[Span] | None:
    """The spans of one parsed export request of the usual shape, or None for the careful reader.

    None whenever the careful reader might answer differently: an unknown or snake_case key,
    a field of an unexpected type, a malformed span, a nesting deeper than the limit.
    """
    try:
        return _request(data)
    except (_UnusualError, LookupError, ValueError, TypeError, AttributeError, OverflowError):
        return None  # a shape the pass does not take, found by the type error it caused: the careful reader's turn


def _request(data: Any) -> list[Span]:
    if data.__class__ is not dict or not data.keys() <= _REQUEST_KEYS:
        raise _UnusualError
    resource_spans = data.get("resourceSpans")
    if resource_spans is None:
        return []
    if resource_spans.__class__ is not list:
        raise _UnusualError
    out: list[Span] = []
    for entry in resource_spans:
        if entry.__class__ is not dict or not entry.keys() <= _RESOURCE_SPANS_KEYS:
            raise _UnusualError
        _unread(entry.get("schemaUrl"), _RESOURCE_LEVEL)
        resource = entry.get("resource")
        service = None
        if resource:
            # A resource is small and comes once a batch: measured whole (a float that may be a
            # huge integer read as one changes how a ``service.name`` reads, so it is unusual too).
            budget = MAX_INPUT_DEPTH - _RESOURCE_LEVEL + 1
            if resource.__class__ is not dict or deeper_than(resource, budget) is not False:
                raise _UnusualError
            name = key_values(resource.get("attributes")).get("service.name")
            service = name if name.__class__ is str else None
        scopes = entry.get("scopeSpans")
        if scopes is None:
            continue
        if scopes.__class__ is not list:
            raise _UnusualError
        for scope_entry in scopes:
            if scope_entry.__class__ is not dict or not scope_entry.keys() <= _SCOPE_SPANS_KEYS:
                raise _UnusualError
            _unread(scope_entry.get("schemaUrl"), _SCOPE_LEVEL)
            _unread(scope_entry.get("scope"), _SCOPE_LEVEL)
            spans = scope_entry.get("spans")
            if spans is None:
                continue
            if spans.__class__ is not list:
                raise _UnusualError
            append = out.append
            for raw in spans:
                append(_span(raw, service))
    return out


def _unread(value: Any, level: int) -> None:
    """A value the conversion does not read: only its nesting matters."""
    if (value.__class__ is dict or value.__class__ is list) and deeper_than(value, MAX_INPUT_DEPTH - level + 1):
        raise _UnusualError


_LOWER_HEX = "0123456789abcdef"


def _span(raw: Any, service: str | None) -> Span:
    if raw.__class__ is not dict:
        raise _UnusualError
    get = raw.get
    keys = raw.keys()
    if keys <= _USUAL_SPAN_KEYS:
        kind = get("kind")
        if kind.__class__ is dict or kind.__class__ is list:
            _unread(kind, _SPAN_FIELD_LEVEL)
    elif keys <= _SPAN_KEYS:
        for key in keys - _READ_SPAN_KEYS:
            _unread(raw[key], _SPAN_FIELD_LEVEL)
    else:
        raise _UnusualError
    value = get("traceId")
    if value.__class__ is str and len(value) == 32 and not value.strip(_LOWER_HEX):
        trace_id = value  # already as it is read: 32 lower-case hex digits
    else:
        trace_id = hex_id(value, 32, "traceId")
    value = get("spanId")
    if value.__class__ is str and len(value) == 16 and not value.strip(_LOWER_HEX):
        span_id = value  # already as it is read: 16 lower-case hex digits
    else:
        span_id = hex_id(value, 16, "spanId")
    value = get("parentSpanId")
    if value is None or value == "":
        parent_id = None
    else:
        if value.__class__ is str and len(value) == 16 and not value.strip(_LOWER_HEX):
            parent_id = value
        else:
            parent_id = hex_id(value, 16, "parentSpanId")
        if parent_id == _NO_PARENT:
            parent_id = None
    name = get("name")
    if name.__class__ is not str:
        if name is not None:
            raise _UnusualError
        name = ""
    raw_status = get("status")
    status = STATUS_UNSET
    message = ""
    if raw_status:  # the careful reader reads any false value as no status, as OTLP/JSON writes ``{}``
        if raw_status.__class__ is not dict or not raw_status.keys() <= _STATUS_KEYS:
            raise _UnusualError
        code = raw_status.get("code")
        if code is not None:
            if code.__class__ is not int and code.__class__ is not str:
                raise _UnusualError
            status = status_name(code)
        text = raw_status.get("message")
        if text is not None:
            if text.__class__ is not str:
                raise _UnusualError
            message = text
    raw_events = get("events")
    events: tuple[SpanEvent, ...] = ()
    if raw_events is not None:
        if raw_events.__class__ is not list:
            raise _UnusualError
        events = tuple(_event(event) for event in raw_events)
    return Span(
        trace_id,
        span_id,
        parent_id,
        name,
        _time(get("startTimeUnixNano")),
        _time(get("endTimeUnixNano")),
        _attributes(get("attributes"), _SPAN_VALUE_LEVEL),
        events,
        status,
        message,
        service,
    )


def _event(raw: Any) -> SpanEvent:
    if raw.__class__ is not dict or not raw.keys() <= _EVENT_KEYS:
        raise _UnusualError
    name = raw.get("name")
    if name.__class__ is not str:
        if name is not None:
            raise _UnusualError
        name = ""
    _unread(raw.get("droppedAttributesCount"), _SPAN_FIELD_LEVEL + 2)
    return SpanEvent(name, _time(raw.get("timeUnixNano")), _attributes(raw.get("attributes"), _EVENT_VALUE_LEVEL))


def _time(value: Any) -> int:
    """``_otlp_values.nanoseconds`` for the shapes it takes without complaint."""
    if value.__class__ is str:
        number = int(value)
    elif value.__class__ is int:
        number = value
    elif value is None:
        return 0
    else:
        raise _UnusualError
    if number < 0:
        raise _UnusualError
    return number


_HUGE = _fast_json.HUGE
_TEXT_KINDS = frozenset({"stringValue", "bytesValue"})
_NESTED_KINDS = frozenset({"arrayValue", "kvlistValue"})


def _attributes(raw: Any, level: int) -> dict[str, Any]:
    """``key_values`` for entries of one key and one AnyValue of a known kind."""
    if raw is None:
        return {}
    if raw.__class__ is not list:
        raise _UnusualError
    out: dict[str, Any] = {}
    for entry in raw:
        # Anything but {"key": str, "value": {kind: inner}} fails one of these (a key or type error).
        if len(entry) != 2:
            raise _UnusualError
        key = entry["key"]
        value = entry["value"]
        ((kind, inner),) = value.items()
        if key.__class__ is not str:
            raise _UnusualError
        cls = inner.__class__
        if cls is str:
            if kind in _TEXT_KINDS:
                out[key] = inner
            elif kind == "intValue":
                out[key] = int(inner)
            else:
                raise _UnusualError
        elif (cls is int and kind == "intValue") or (cls is bool and kind == "boolValue"):
            out[key] = inner
        elif kind == "doubleValue" and (cls is float or cls is int) and -_HUGE < inner < _HUGE:
            out[key] = float(inner)
        elif cls is dict and kind in _NESTED_KINDS:
            if deeper_than(inner, MAX_INPUT_DEPTH - level + 1) is not False:
                raise _UnusualError  # too deep, or holding a float that may be a huge integer
            out[key] = any_value(value)
        else:
            raise _UnusualError
    return out


def deeper_than(value: Any, limit: int) -> bool | None:
    """True when arrays and objects nest more than ``limit`` levels in ``value``; level by level, no recursion.

    None (when not too deep) when a float in it is at or past ``_fast_json.HUGE``.
    """
    huge = _fast_json.HUGE
    suspect = False
    level = [value] if type(value) is dict or type(value) is list else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return True
        below = []
        for container in level:
            for child in container.values() if type(container) is dict else container:
                if type(child) is dict or type(child) is list:
                    below.append(child)
                elif type(child) is float and not -huge < child < huge:
                    suspect = True
        level = below
    return None if suspect else False
