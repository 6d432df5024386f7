"""OTLP protobuf trace exports -> spans (needs the ``otel`` extra: ``opentelemetry-proto``).

A file is what the Collector's file exporter writes with ``format: proto`` (each
``ExportTraceServiceRequest`` after its length as 4 big-endian bytes) or one bare
request (an exporter's HTTP body saved to a file). A message that does not parse is
counted and reading stops there: past a broken length nothing can be trusted.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import IO, Any

from jurybox.core import MAX_INPUT_BYTES, MAX_INPUT_DEPTH
from jurybox.traces._spans import ReadStats, Span, SpanEvent, status_name

MAX_MESSAGE_BYTES = 64 * 1024 * 1024
"""The largest single export request read from a protobuf file or body."""
_PREFIX = struct.Struct(">I")


class ProtobufUnavailableError(ImportError):
    """The ``otel`` extra is not installed: protobuf OTLP cannot be read."""


def _request_class() -> Any:
    try:
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
    except ImportError as exc:
        raise ProtobufUnavailableError(
            "reading OTLP protobuf needs opentelemetry-proto: pip install 'jurybox[otel]'"
        ) from exc
    return trace_service_pb2.ExportTraceServiceRequest


def spans_from_proto_bytes(body: bytes, stats: ReadStats, where: str = "<body>") -> list[Span]:
    """The spans of one serialized ``ExportTraceServiceRequest``.

    Raises:
        ValueError: the bytes are not such a message, or it is too big.
        ProtobufUnavailableError: the ``otel`` extra is not installed.
    """
    if len(body) > MAX_MESSAGE_BYTES:
        raise ValueError(f"{where}: refused: a message of {len(body):,} bytes, over {MAX_MESSAGE_BYTES:,}")
    request = _request_class()()
    try:
        request.ParseFromString(body)
    except Exception as exc:  # protobuf's DecodeError, or a RecursionError on a hostile nesting
        raise ValueError(f"{where}: not an OTLP ExportTraceServiceRequest: {type(exc).__name__}") from None
    stats.batches += 1
    return list(_spans(request, stats, where))


def read_proto_file(handle: IO[bytes], stats: ReadStats, source: str) -> Iterator[Span]:
    """Spans from an OTLP protobuf file: length-prefixed requests, or one bare request."""
    head = handle.read(_PREFIX.size)
    if len(head) < _PREFIX.size:
        if head:
            stats.skip("malformed file", f"{source}: too short to be OTLP protobuf")
        return
    (size,) = _PREFIX.unpack(head)
    first = handle.read(size) if size <= MAX_MESSAGE_BYTES else b""
    if size > MAX_MESSAGE_BYTES or len(first) < size or not _parses(first):
        yield from _bare(head + first, handle, stats, source)
        return
    number, offset = 1, 0
    message = first
    while True:
        try:
            yield from spans_from_proto_bytes(message, stats, f"{source}: message {number} at byte {offset}")
        except ValueError as exc:
            stats.skip("malformed message", str(exc))
            return
        offset += _PREFIX.size + len(message)
        head = handle.read(_PREFIX.size)
        if not head:
            return
        if len(head) < _PREFIX.size:
            stats.skip("malformed message", f"{source}: a cut-off length at byte {offset}")
            return
        (size,) = _PREFIX.unpack(head)
        if size > MAX_MESSAGE_BYTES:
            stats.skip("oversized message", f"{source}: message {number + 1} claims {size:,} bytes")
            return
        message = handle.read(size)
        number += 1
        if len(message) < size:
            stats.skip("malformed message", f"{source}: message {number} is cut off at byte {offset}")
            return


def _parses(body: bytes) -> bool:
    request = _request_class()()
    try:
        request.ParseFromString(body)
    except Exception:  # not a length-prefixed stream: the caller tries the whole file as one message
        return False
    return len(request.resource_spans) > 0


def _bare(start: bytes, handle: IO[bytes], stats: ReadStats, source: str) -> Iterator[Span]:
    body = start + handle.read(MAX_INPUT_BYTES + 1 - len(start))
    if len(body) > MAX_INPUT_BYTES:
        stats.skip("oversized file", f"{source}: refused: one protobuf message over {MAX_INPUT_BYTES // 2**20} MB")
        return
    try:
        yield from spans_from_proto_bytes(body, stats, source)
    except ValueError as exc:
        stats.skip("malformed file", str(exc))


def _spans(request: Any, stats: ReadStats, where: str) -> Iterator[Span]:
    for resource_spans in request.resource_spans:
        resource = _attributes(resource_spans.resource.attributes)
        service = resource.get("service.name")
        service_name = service if isinstance(service, str) else None
        for scope_spans in resource_spans.scope_spans:
            for raw in scope_spans.spans:
                if len(raw.trace_id) != 16 or len(raw.span_id) != 8:
                    stats.skip("malformed span", f"{where}: a span without a 16-byte trace id and 8-byte span id")
                    continue
                parent = raw.parent_span_id.hex() if len(raw.parent_span_id) == 8 else None
                stats.spans += 1
                yield Span(
                    trace_id=raw.trace_id.hex(),
                    span_id=raw.span_id.hex(),
                    parent_id=None if parent in (None, "0" * 16) else parent,
                    name=raw.name,
                    start_ns=raw.start_time_unix_nano,
                    end_ns=raw.end_time_unix_nano,
                    attributes=_attributes(raw.attributes),
                    events=tuple(
                        SpanEvent(event.name, event.time_unix_nano, _attributes(event.attributes))
                        for event in raw.events
                    ),
                    status=status_name(raw.status.code),
                    status_message=raw.status.message,
                    service=service_name,
                )


def _attributes(pairs: Any) -> dict[str, Any]:
    return {pair.key: _value(pair.value, 1) for pair in pairs}


def _value(value: Any, depth: int) -> Any:
    if depth > MAX_INPUT_DEPTH:
        return None
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [_value(item, depth + 1) for item in value.array_value.values]
    if kind == "kvlist_value":
        return {pair.key: _value(pair.value, depth + 1) for pair in value.kvlist_value.values}
    if kind == "bytes_value":
        return value.bytes_value.hex()
    return getattr(value, kind)
