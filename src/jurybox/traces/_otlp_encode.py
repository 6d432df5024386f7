"""Spans written straight into OTLP protobuf bytes (``ExportTraceServiceRequest``), without the SDK's objects.

The exporter sends a few spans per judged case; building them as OpenTelemetry SDK spans
(attribute validation, locks, ``ReadableSpan`` copies) and then encoding them through the
protobuf classes cost about as much CPU as judging the case. Here a span is a plain record
and its bytes are written field by field (the wire format is stable and small: the field
numbers below are ``opentelemetry/proto/trace/v1/trace.proto``'s). An attribute's bytes
are remembered when its value is short, since most repeat (span kinds, labels, judge names).
Attribute values follow the SDK's rules: str, bool, int (64-bit), float, or a list of one of
them; anything else is left out, as the SDK leaves it out.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from typing import Any

SPAN_KIND_INTERNAL = 1
STATUS_UNSET, STATUS_OK, STATUS_ERROR = 0, 1, 2
FLAGS_HAS_IS_REMOTE = 0x100
FLAGS_IS_REMOTE = 0x200
_INT64 = 1 << 63
_CACHED_VALUE_CHARS = 80
_CACHE_ENTRIES = 8192
_kv_cache: dict[tuple[str, Any], tuple[type, bytes]] = {}  # shared by threads: a lost entry is only a miss


class SpanRecord:
    """One finished span, as plain values (ids as integers, times in ns since the epoch)."""

    __slots__ = (
        "attributes",
        "bodies",
        "end_ns",
        "event_bodies",
        "events",
        "links",
        "name",
        "parent_id",
        "remember_name",
        "span_id",
        "start_ns",
        "status",
        "trace_id",
    )

    def __init__(
        self,
        trace_id: int,
        span_id: int,
        parent_id: int | None,
        name: str,
        start_ns: int,
        end_ns: int,
        attributes: Mapping[str, Any],
        events: Sequence[tuple[str, int, Mapping[str, Any]]] = (),
        links: Sequence[tuple[int, int, Mapping[str, Any]]] = (),
        status: tuple[int, str] | None = None,
        *,
        bodies: list[bytes] | None = None,
        event_bodies: Sequence[list[bytes]] | None = None,
        remember_name: bool = True,
    ) -> None:
        self.trace_id = trace_id
        self.span_id = span_id
        self.parent_id = parent_id
        self.name = name
        self.start_ns = start_ns
        self.end_ns = end_ns
        self.attributes = attributes
        self.events = events  # (name, time, attributes): the attributes may be the span's own mapping
        self.links = links  # (trace id, span id, attributes) of a remote span
        self.status = status  # (code, message), None: unset
        self.bodies = bodies  # ``attribute_bodies(attributes)`` when the caller has them already
        self.event_bodies = event_bodies  # each event's ``attribute_bodies``, likewise
        self.remember_name = remember_name  # False: a name said once (a case's), not worth a cache entry


def _varint(number: int) -> bytes:
    if number < 0x80:
        return _SMALL[number]
    out = bytearray()
    while number >= 0x80:
        out.append((number & 0x7F) | 0x80)
        number >>= 7
    out.append(number)
    return bytes(out)


_SMALL = [bytes((n,)) for n in range(0x80)]


def _field(tag: bytes, data: bytes) -> bytes:
    """A length-delimited field: its tag, the length, the bytes."""
    return tag + _varint(len(data)) + data


def any_value(value: Any) -> bytes | None:
    """An ``AnyValue`` message's bytes, or None for a value the SDK would not take."""
    if isinstance(value, str):
        return _field(b"\x0a", value.encode("utf-8", "surrogatepass"))
    if isinstance(value, bool):
        return b"\x10\x01" if value else b"\x10\x00"
    if isinstance(value, int):
        if not -_INT64 <= value < _INT64:
            return None
        return b"\x18" + _varint(value & 0xFFFFFFFFFFFFFFFF)
    if isinstance(value, float):
        return b"\x21" + struct.pack("<d", value)
    if isinstance(value, list | tuple):
        items = [any_value(item) for item in value]
        if any(item is None for item in items) or len({type(item) for item in value}) > 1:
            return None  # the SDK takes a list of one primitive type only
        inner = b"".join(_field(b"\x0a", item) for item in items if item is not None)
        return _field(b"\x2a", inner)
    return None


def key_value(key: str, value: Any) -> bytes:
    """A ``KeyValue`` message's bytes (b"" for a value left out)."""
    encoded = any_value(value)
    if encoded is None:
        return b""
    return _field(b"\x0a", key.encode("utf-8", "surrogatepass")) + _field(b"\x12", encoded)


_key_fields: dict[str, bytes] = {}  # a key's field 1 of ``KeyValue``: keys are few and repeat
# (key, value, body) of the last long string, swapped whole (threads share it): a case's
# explanation is both its span's attribute and its event's.
_last_long: list[tuple[str, Any, bytes]] = [("", None, b"")]


def _key_field(key: str) -> bytes:
    found = _key_fields.get(key)
    if found is None:
        found = _field(b"\x0a", key.encode("utf-8", "surrogatepass"))
        if len(_key_fields) < _CACHE_ENTRIES:
            _key_fields[key] = found
    return found


def _body(key: str, value: Any) -> bytes:
    """A ``KeyValue``'s bytes with its length before them (b"" for a value left out)."""
    if value.__class__ is str:  # the common case, without any_value's calls
        data = value.encode("utf-8", "surrogatepass")
        size = len(data)
        inner = (b"\x0a" + _SMALL[size] if size < 0x80 else b"\x0a" + _varint(size)) + data
        size = len(inner)
        kv = _key_field(key) + (b"\x12" + _SMALL[size] if size < 0x80 else b"\x12" + _varint(size)) + inner
    else:
        encoded = any_value(value)
        if encoded is None:
            return b""
        kv = _key_field(key) + _field(b"\x12", encoded)
    size = len(kv)
    return (_SMALL[size] if size < 0x80 else _varint(size)) + kv


def attribute_bodies(values: Mapping[str, Any]) -> list[bytes]:
    """Each attribute's ``KeyValue`` with its length before it: a repeated field less its tag.

    The same bodies serve a span's attributes and its event's (only the tag differs), and a
    short one is remembered: most attributes repeat from span to span. The cache is looked up
    by the ``(key, value)`` pair itself, and an entry names its value's type (``True == 1``).
    """
    out = []
    cache = _kv_cache
    for item in values.items():
        value = item[1]
        cls = value.__class__
        if cls is list or cls is tuple or (cls is float and value == 0.0):
            # Never remembered: equal keys can need other bytes, (1,) == (True,) and 0.0 == -0.0.
            body = _body(item[0], value)
            if body:
                out.append(body)
            continue
        try:
            found = cache.get(item)
            hashable = True
        except TypeError:  # an unhashable value of another type: left out below as the SDK leaves it
            found, hashable = None, False
        if found is not None and found[0] is cls:
            if found[1]:
                out.append(found[1])
            continue
        if cls is str and len(value) > _CACHED_VALUE_CHARS:
            last_key, last_value, body = _last_long[0]
            if last_value is not value or last_key != item[0]:
                body = _body(item[0], value)
                _last_long[0] = (item[0], value, body)
            out.append(body)
            continue
        body = _body(item[0], value)
        if hashable:
            if len(cache) >= _CACHE_ENTRIES:
                cache.clear()
            cache[item] = (cls, body)
        if body:
            out.append(body)
    return out


def fresh_bodies(values: Mapping[str, Any]) -> list[bytes]:
    """``attribute_bodies`` of values said once (a case's name, its start): written, not remembered."""
    out = []
    for key, value in values.items():
        body = _body(key, value)
        if body:
            out.append(body)
    return out


def repeated(tag: bytes, bodies: list[bytes]) -> bytes:
    """``bodies`` as a repeated field with ``tag``: each body after its tag (b"" for none)."""
    return tag + tag.join(bodies) if bodies else b""


def attributes(values: Mapping[str, Any], tag: bytes) -> bytes:
    """Every attribute as a repeated ``KeyValue`` field with ``tag``."""
    return repeated(tag, attribute_bodies(values))


_HEAD = struct.Struct(">HQQHQ")  # trace id (field 1) and span id (field 2), each with its tag and length
_PARENT = struct.Struct(">HQ")  # parent span id (field 4)
_TIMES = struct.Struct("<BQBQ")  # start and end (fields 7 and 8, fixed64)
_EVENT_TIME = struct.Struct("<BQ")
_LOW64 = (1 << 64) - 1
_KIND = b"\x30\x01"  # field 6: SPAN_KIND_INTERNAL
_LINK_FLAGS = b"\x35" + struct.pack("<I", FLAGS_HAS_IS_REMOTE | FLAGS_IS_REMOTE)
_FLAGS = b"\x85\x01" + struct.pack("<I", FLAGS_HAS_IS_REMOTE)  # field 16, fixed32: a local parent
_UNSET_TAIL = b"\x7a\x00" + _FLAGS  # an empty status (field 15), present as the SDK's encoder writes it
_names: dict[tuple[bytes, str], bytes] = {}


def _text(tag: bytes, text: str) -> bytes:
    """A string field; a short one remembered (span and event names repeat)."""
    found = _names.get((tag, text))
    if found is None:
        found = _field(tag, text.encode("utf-8", "surrogatepass"))
        if len(text) <= _CACHED_VALUE_CHARS:
            if len(_names) >= _CACHE_ENTRIES:
                _names.clear()
            _names[(tag, text)] = found
    return found


def span_bytes(span: SpanRecord) -> bytes:
    """One ``Span`` message's bytes."""
    values = span.attributes
    bodies = span.bodies if span.bodies is not None else attribute_bodies(values)
    trace_id = span.trace_id
    parts = [_HEAD.pack(0x0A10, trace_id >> 64, trace_id & _LOW64, 0x1208, span.span_id)]
    if span.parent_id is not None:
        parts.append(_PARENT.pack(0x2208, span.parent_id))
    parts += [
        _text(b"\x2a", span.name)
        if span.remember_name
        else _field(b"\x2a", span.name.encode("utf-8", "surrogatepass")),
        _KIND,
        _TIMES.pack(0x39, span.start_ns, 0x41, span.end_ns),
    ]
    if bodies:
        parts.append(b"\x4a" + b"\x4a".join(bodies))  # field 9
    known = span.event_bodies
    for index, (name, moment, event_values) in enumerate(span.events):  # field 11
        inner = _EVENT_TIME.pack(0x09, moment) + _text(b"\x12", name)
        if known is not None:
            event_bodies = known[index]
        else:
            event_bodies = bodies if event_values is values else attribute_bodies(event_values)
        if event_bodies:
            inner += b"\x1a" + b"\x1a".join(event_bodies)  # field 3
        size = len(inner)
        parts.append((b"\x5a" + _SMALL[size] if size < 0x80 else b"\x5a" + _varint(size)) + inner)
    _add_tail(parts, span.links, span.status)
    return b"".join(parts)


def _add_tail(
    parts: list[bytes], links: Sequence[tuple[int, int, Mapping[str, Any]]], status: tuple[int, str] | None
) -> None:
    """A span's links (field 13), status (15) and flags (16), appended to ``parts``."""
    for link_trace, link_span, values in links:
        inner = _HEAD.pack(0x0A10, link_trace >> 64, link_trace & _LOW64, 0x1208, link_span)
        inner += attributes(values, b"\x22") + _LINK_FLAGS
        parts.append(_field(b"\x6a", inner))
    if status is None:
        parts.append(_UNSET_TAIL)
    else:
        code, message = status
        written = (_field(b"\x12", message.encode("utf-8", "surrogatepass")) if message else b"") + (
            b"\x18" + _varint(code) if code else b""
        )
        parts += [_field(b"\x7a", written), _FLAGS]


def event_span_bytes(
    ids: tuple[int, int, int],
    name: str,
    times: tuple[int, int],
    attribute_fields: bytes,
    event: tuple[str, int, bytes],
    links: Sequence[tuple[int, int, Mapping[str, Any]]] = (),
    status: tuple[int, str] | None = None,
) -> bytes:
    """A ``Span`` message with one event, from its attributes' and its event's fields already written.

    What ``span_bytes`` writes for a span with a parent, a name said once and one event, given
    ``ids`` (trace, span, parent), ``times`` (start, end), ``attribute_fields`` (``repeated(b"\\x4a",
    bodies)``) and ``event`` (name, time, ``repeated(b"\\x1a", its bodies)``): a caller that keeps the
    repeated parts of those fields written packs only what is new.
    """
    trace_id, span_id, parent_id = ids
    event_name, moment, event_fields = event
    inner = _EVENT_TIME.pack(0x09, moment) + _text(b"\x12", event_name) + event_fields
    size = len(inner)
    parts = [
        _IDS.pack(0x0A10, trace_id >> 64, trace_id & _LOW64, 0x1208, span_id, 0x2208, parent_id),
        _field(b"\x2a", name.encode("utf-8", "surrogatepass")),
        _KIND,
        _TIMES.pack(0x39, times[0], 0x41, times[1]),
        attribute_fields,
        (b"\x5a" + _SMALL[size] if size < 0x80 else b"\x5a" + _varint(size)) + inner,  # field 11
    ]
    _add_tail(parts, links, status)
    return b"".join(parts)


_IDS = struct.Struct(">HQQHQHQ")  # trace id, span id and parent span id (fields 1, 2 and 4)
_FIXED64 = struct.Struct("<Q")


class SpanTemplate:
    """A repeated span's bytes but for its ids and times (``span_bytes`` writes the same).

    For a span with a parent, a fixed name and attributes, no link, its status unset and at
    most one event, at the span's end, with the span's own attributes (a judgment's span):
    the constant parts are written once, each span packs only its ids and times between them.
    """

    __slots__ = ("_event", "_head", "_middle", "_tail")

    def __init__(self, name: str, bodies: list[bytes], event: str | None = None) -> None:
        self._head = _text(b"\x2a", name) + _KIND
        attributes = b"\x4a" + b"\x4a".join(bodies) if bodies else b""
        self._event = event is not None
        if event is None:
            self._middle, self._tail = attributes, _UNSET_TAIL
            return
        rest = _text(b"\x12", event) + (b"\x1a" + b"\x1a".join(bodies) if bodies else b"")
        size = 9 + len(rest)  # the event's time (tag and fixed64), then its name and attributes
        self._middle = attributes + b"\x5a" + _varint(size) + b"\x09"
        self._tail = rest + _UNSET_TAIL

    def span(self, trace_id: int, span_id: int, parent_id: int, start_ns: int, end_ns: int) -> bytes:
        """The ``Span`` message's bytes with these ids and times (the event, if any, at ``end_ns``)."""
        ids = _IDS.pack(0x0A10, trace_id >> 64, trace_id & _LOW64, 0x1208, span_id, 0x2208, parent_id)
        times = _TIMES.pack(0x39, start_ns, 0x41, end_ns)
        if self._event:
            return b"".join((ids, self._head, times, self._middle, _FIXED64.pack(end_ns), self._tail))
        return b"".join((ids, self._head, times, self._middle, self._tail))


def export_request(resource: Mapping[str, Any], scope: str, spans: Sequence[SpanRecord | bytes]) -> bytes:
    """An ``ExportTraceServiceRequest`` of ``spans`` (records, or their ``span_bytes``) under one resource and scope.

    Written as parts joined once: a request of 2 MB is copied once, not once per enclosing message.
    """
    parts = [b"", b"", b"", _field(b"\x0a", _field(b"\x0a", scope.encode("utf-8")))]  # ScopeSpans.scope{name}
    size = len(parts[3])
    for span in spans:
        data = span if isinstance(span, bytes) else span_bytes(span)
        length = len(data)
        head = b"\x12" + _SMALL[length] if length < 0x80 else b"\x12" + _varint(length)
        parts += (head, data)
        size += len(head) + length
    resource_field = _field(b"\x0a", attributes(resource, b"\x0a"))
    scope_head = b"\x12" + _varint(size)
    parts[1], parts[2] = resource_field, scope_head
    parts[0] = b"\x0a" + _varint(len(resource_field) + len(scope_head) + size)  # ResourceSpans
    return b"".join(parts)
