"""Spans the OpenTelemetry SDK holds in memory (``ReadableSpan``) as jurybox Spans.

Duck-typed on purpose: nothing here imports the SDK, so ``jurybox.traces`` loads
without the ``otel`` extra; ``capture: otel`` hands in what its span processor collected.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from jurybox.traces._spans import Span, SpanEvent, status_name


def span_from_sdk(span: Any) -> Span:
    """One SDK ``ReadableSpan`` as a Span."""
    context = span.context
    parent = span.parent
    resource = getattr(span, "resource", None)
    service = getattr(resource, "attributes", {}).get("service.name") if resource is not None else None
    status = span.status
    return Span(
        trace_id=f"{context.trace_id:032x}",
        span_id=f"{context.span_id:016x}",
        parent_id=f"{parent.span_id:016x}" if parent is not None else None,
        name=str(span.name),
        start_ns=int(span.start_time or 0),
        end_ns=int(span.end_time or 0),
        attributes=_plain(span.attributes),
        events=tuple(SpanEvent(str(e.name), int(e.timestamp or 0), _plain(e.attributes)) for e in span.events),
        status=status_name(getattr(status.status_code, "value", 0)),
        status_message=str(status.description or ""),
        service=service if isinstance(service, str) else None,
    )


def spans_from_sdk(spans: Iterable[Any]) -> list[Span]:
    """The OpenTelemetry SDK's finished spans (``ReadableSpan``, e.g. from an in-memory exporter) as jurybox spans."""
    return [span_from_sdk(span) for span in spans]


def _plain(attributes: Mapping[str, Any] | None) -> dict[str, Any]:
    return {key: list(value) if isinstance(value, tuple) else value for key, value in (attributes or {}).items()}
