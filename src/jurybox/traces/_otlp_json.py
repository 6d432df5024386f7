"""OTLP/JSON trace exports -> spans, one export request at a time, within the input limits.

The OpenTelemetry Collector's file exporter writes one ``ExportTraceServiceRequest``
a line; a file may also hold one request pretty-printed over many lines (what
``/v1/traces`` receives as ``application/json``). Every line goes through
``jurybox.core.read_json`` (depth and value limits) and no line longer than
``max_line_bytes`` is ever held whole: it is skipped, counted and named.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator, Mapping
from typing import IO, Any

from jurybox.core import MAX_INPUT_BYTES, MAX_INPUT_DEPTH, MAX_INPUT_NODES, InputLimitError, read_json
from jurybox.traces import _fast_json
from jurybox.traces._otlp_json_fast import deeper_than, fast_request_spans
from jurybox.traces._otlp_values import (
    field_of,
    hex_id,
    items,
    key_values,
    mapping,
    nanoseconds,
    optional_parent,
)
from jurybox.traces._spans import ReadStats, Span, SpanEvent, status_name

MAX_LINE_BYTES = 16 * 1024 * 1024
"""The longest line of an OTLP/JSON file read (one export batch); a longer one is skipped and counted."""
_CHUNK = 1024 * 1024


def spans_from_request(data: Any, stats: ReadStats, where: str) -> Iterator[Span]:
    """The spans of one decoded ``ExportTraceServiceRequest``; a malformed span is counted and skipped."""
    try:
        request = mapping(data, "an export request")
        resource_spans = items(field_of(request, "resourceSpans", "resource_spans"), "resourceSpans")
    except ValueError as exc:
        stats.skip("malformed export request", f"{where}: {exc}")
        return
    stats.batches += 1
    for resource_entry in resource_spans:
        try:
            entry = mapping(resource_entry, "resourceSpans[]")
            resource = field_of(entry, "resource") or {}
            resource_attributes = key_values(mapping(resource, "resource").get("attributes"))
            scopes = items(field_of(entry, "scopeSpans", "scope_spans"), "scopeSpans")
        except ValueError as exc:
            stats.skip("malformed resource", f"{where}: {exc}")
            continue
        service = resource_attributes.get("service.name")
        service_name = service if isinstance(service, str) else None
        for scope_entry in scopes:
            try:
                raw_spans = items(mapping(scope_entry, "scopeSpans[]").get("spans"), "spans")
            except ValueError as exc:
                stats.skip("malformed scope", f"{where}: {exc}")
                continue
            for raw in raw_spans:
                try:
                    span = span_from_json(raw, service_name)
                except (ValueError, TypeError, OverflowError) as exc:
                    stats.skip("malformed span", f"{where}: {exc}")
                    continue
                stats.spans += 1
                yield span


def span_from_json(raw: Any, service: str | None) -> Span:
    """One OTLP/JSON span object as a Span.

    Raises:
        ValueError: a missing id or a field of the wrong type, named.
    """
    data = mapping(raw, "a span")
    get = data.get
    # OTLP/JSON's camelCase first; a protobuf-JSON mapper's snake_case only when it is missing.
    status = get("status") or {}
    status_map: Mapping[str, Any] = status if isinstance(status, Mapping) else {}
    raw_events = get("events")
    events = (
        tuple(
            SpanEvent(
                name=str(mapping(event, "an event").get("name") or ""),
                time_ns=nanoseconds(field_of(event, "timeUnixNano", "time_unix_nano"), "event timeUnixNano"),
                attributes=key_values(event.get("attributes")),
            )
            for event in items(raw_events, "events")
        )
        if raw_events is not None
        else ()
    )
    name = get("name")
    message = status_map.get("message")
    trace_id = get("traceId")
    span_id = get("spanId")
    parent_id = get("parentSpanId")
    start = get("startTimeUnixNano")
    end = get("endTimeUnixNano")
    return Span(
        trace_id=hex_id(trace_id if trace_id is not None else get("trace_id"), 32, "traceId"),
        span_id=hex_id(span_id if span_id is not None else get("span_id"), 16, "spanId"),
        parent_id=optional_parent(parent_id if parent_id is not None else get("parent_span_id")),
        name=name if isinstance(name, str) else "",
        start_ns=nanoseconds(start if start is not None else get("start_time_unix_nano"), "startTimeUnixNano"),
        end_ns=nanoseconds(end if end is not None else get("end_time_unix_nano"), "endTimeUnixNano"),
        attributes=key_values(get("attributes")),
        events=events,
        status=status_name(status_map.get("code")),
        status_message=message if isinstance(message, str) else "",
        service=service,
    )


def spans_from_json_bytes(body: bytes, stats: ReadStats, where: str = "<body>") -> list[Span]:
    """The spans of one OTLP/JSON request body (what ``/v1/traces`` receives as JSON).

    Raises:
        ValueError: the body is not JSON, or breaks the depth or value limits.
    """
    try:
        data = read_json(body, source=where)
    except InputLimitError:
        raise
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{where}: not JSON: {exc}") from None
    return list(spans_from_request(data, stats, where))


def read_json_lines(
    handle: IO[bytes], stats: ReadStats, source: str, *, max_line_bytes: int = MAX_LINE_BYTES
) -> Iterator[Span]:
    """Spans from an OTLP/JSON file opened in binary, one export request a line (or one request in all).

    A line that is not JSON, breaks a limit or is longer than ``max_line_bytes`` is
    counted and named in ``stats``; reading goes on with the next line. A file whose
    first line is not JSON on its own is read as one pretty-printed request instead
    (within ``MAX_INPUT_BYTES``).
    """
    number = 0
    while True:
        line = handle.readline(max_line_bytes + 1)
        if not line:
            return
        number += 1
        if len(line) > max_line_bytes and not line.endswith(b"\n"):
            _skip_rest_of_line(handle)
            stats.skip("oversized line", f"{source}:{number}: refused: a line over {max_line_bytes:,} bytes")
            continue
        if line.isspace():
            continue
        where = f"{source}:{number}"
        try:
            data, spans = _load_line_spans_paused(line, where)
        except InputLimitError as exc:
            stats.skip("line over the input limits", str(exc))
            continue
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            if number == 1 and line.lstrip().startswith(b"{"):
                yield from _read_whole(handle, line, stats, source)
                return
            stats.skip("malformed line", f"{where}: not JSON: {exc}")
            continue
        if spans is None:
            yield from spans_from_request(data, stats, where)
        else:
            stats.batches += 1
            stats.spans += len(spans)
            yield from spans


def load_line(line: bytes, source: str) -> Any:
    """``read_json(line)``, the same answer, without measuring a big line's text in Python first.

    An export line holds thousands of brackets, so ``read_json`` walks its text outside strings
    for the depth, a few times slower than parsing it. When the line is few enough values to
    build (counted at C speed, as ``read_json`` counts), it is parsed first and its depth measured
    on what was built; anything unusual (not JSON, too deep to parse) goes through ``read_json``,
    so the error and its wording stay the same.
    """
    return _load_line_spans(line, source, convert=False)[0]


def _load_line_spans_paused(line: bytes, source: str) -> tuple[Any, list[Span] | None]:
    """``_load_line_spans`` with the garbage collector paused (unless it was off already).

    A line builds a few hundred thousand containers, none in a cycle, and most are gone once its
    spans are made: collections meanwhile would only walk them again and again.
    """
    if not gc.isenabled():
        return _load_line_spans(line, source)
    gc.disable()
    try:
        data, spans = _load_line_spans(line, source)
        if spans is not None:
            data = None  # gone before the collector is back, or its next pass would walk it all
        return data, spans
    finally:
        gc.enable()


def _load_line_spans(line: bytes, source: str, *, convert: bool = True) -> tuple[Any, list[Span] | None]:
    """``load_line``'s answer and, when the line is an export request of the usual shape, its spans.

    The spans come from ``fast_request_spans`` (one pass that both converts and bounds the depth),
    and the data is then not checked again; otherwise (None) the caller reads the checked data
    with ``spans_from_request``.
    """
    if _few_brackets_or_too_many_values(line):
        return read_json(line, source=source), None  # its quick answer, or its exact count of the values
    try:
        data = _fast_json.loads_fast(line)
    except (ValueError, RecursionError):
        return read_json(line, source=source), None
    if convert:
        spans = fast_request_spans(data)
        if spans is not None:
            return data, spans
    return _checked(data, line, source), None


def _few_brackets_or_too_many_values(line: bytes) -> bool:
    """``read_json``'s first test (brackets within the depth limit, or brackets and commas past the node
    limit), counting only what can change the answer: every value takes a byte, so a line shorter than
    the node limit cannot break it."""
    opens = line.count(b"{")
    if opens <= MAX_INPUT_DEPTH:
        opens += line.count(b"[")
        if opens <= MAX_INPUT_DEPTH:
            return True
    if len(line) < MAX_INPUT_NODES:
        return False
    return line.count(b"{") + line.count(b"[") + line.count(b",") >= MAX_INPUT_NODES


def _checked(data: Any, line: bytes, source: str) -> Any:
    """What ``read_json(line)`` answers, given the line as ``loads_fast`` parsed it."""
    deep = deeper_than(data, MAX_INPUT_DEPTH)
    if deep:
        raise InputLimitError(f"{source}: refused: nested deeper than {MAX_INPUT_DEPTH} levels")
    if deep is None:  # a float of 2**63 or more: maybe orjson's reading of a big integer; json.loads is exact
        return json.loads(line)
    return data


def _skip_rest_of_line(handle: IO[bytes]) -> None:
    while True:
        chunk = handle.readline(_CHUNK)
        if not chunk or chunk.endswith(b"\n"):
            return


def _read_whole(handle: IO[bytes], first: bytes, stats: ReadStats, source: str) -> Iterator[Span]:
    rest = handle.read(MAX_INPUT_BYTES + 1 - len(first))
    body = first + rest
    if len(body) > MAX_INPUT_BYTES:
        stats.skip(
            "oversized file",
            f"{source}: refused: one JSON document over {MAX_INPUT_BYTES // 2**20} MB; "
            "write one export request a line (the Collector's file exporter does)",
        )
        return
    try:
        yield from spans_from_json_bytes(body, stats, source)
    except ValueError as exc:
        stats.skip("malformed file", str(exc))
