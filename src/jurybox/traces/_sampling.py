"""Which production traces are judged: a rate, and filters on service, root span name and attributes.

The rate is decided from the trace id alone (as OpenTelemetry's ``TraceIdRatioBased``
sampler does), so every part of a trace gets the same answer in every request and
every process; a trace left out by the rate is never stored. The filters need the
root span, so they are applied once the trace is complete.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

from jurybox.traces._spans import Span, SpanEvent


@dataclass(frozen=True)
class Sampler:
    """Picks the traces to judge.

    Attributes:
        rate: The share of traces kept, 0 to 1, by trace id.
        services: Keep only traces whose root span's ``service.name`` matches one of these globs.
        root_names: Keep only traces whose root span's name matches one of these globs.
        attributes: Keep only traces whose root span has each of these attributes with this value.
    """

    rate: float = 1.0
    services: tuple[str, ...] = ()
    root_names: tuple[str, ...] = ()
    attributes: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not 0.0 <= self.rate <= 1.0:
            raise ValueError(f"the sample rate is between 0 and 1, got {self.rate!r}")

    def keeps_id(self, trace_id: str) -> bool:
        """Whether the rate keeps this trace (the low 64 bits of its id, as TraceIdRatioBased reads them)."""
        if self.rate >= 1.0:
            return True
        try:
            low = int(trace_id[-16:], 16)
        except ValueError:
            return False
        return low < int(self.rate * 2**64)

    def matches(self, spans: Sequence[Span]) -> bool:
        """Whether a complete trace passes the filters (no filter: every trace does)."""
        if not (self.services or self.root_names or self.attributes):
            return True
        ids = {span.span_id for span in spans}
        roots = [span for span in spans if span.parent_id is None or span.parent_id not in ids]
        return any(self._root_matches(root) for root in roots)

    def _root_matches(self, root: Span) -> bool:
        if self.services and not any(fnmatchcase(root.service or "", pattern) for pattern in self.services):
            return False
        if self.root_names and not any(fnmatchcase(root.name, pattern) for pattern in self.root_names):
            return False
        return all(str(root.attributes.get(key)) == value for key, value in self.attributes.items())


def span_to_dict(span: Span) -> dict[str, Any]:
    """A Span as JSON-ready data (what the trace queue stores)."""
    return {
        "trace_id": span.trace_id,
        "span_id": span.span_id,
        "parent_id": span.parent_id,
        "name": span.name,
        "start_ns": span.start_ns,
        "end_ns": span.end_ns,
        "attributes": dict(span.attributes),
        "events": [{"name": e.name, "time_ns": e.time_ns, "attributes": dict(e.attributes)} for e in span.events],
        "status": span.status,
        "status_message": span.status_message,
        "service": span.service,
    }


def span_from_dict(data: Mapping[str, Any]) -> Span:
    """A Span back from ``span_to_dict``'s data."""
    return Span(
        trace_id=str(data["trace_id"]),
        span_id=str(data["span_id"]),
        parent_id=data.get("parent_id"),
        name=str(data.get("name") or ""),
        start_ns=int(data.get("start_ns") or 0),
        end_ns=int(data.get("end_ns") or 0),
        attributes=dict(data.get("attributes") or {}),
        events=tuple(
            SpanEvent(str(e.get("name") or ""), int(e.get("time_ns") or 0), dict(e.get("attributes") or {}))
            for e in data.get("events") or ()
        ),
        status=str(data.get("status") or "unset"),
        status_message=str(data.get("status_message") or ""),
        service=data.get("service"),
    )


def by_trace(spans: Iterable[Span]) -> dict[str, list[Span]]:
    """Spans grouped by trace id, in the order they came."""
    grouped: dict[str, list[Span]] = {}
    for span in spans:
        grouped.setdefault(span.trace_id, []).append(span)
    return grouped
