"""Spans as jurybox reads them: one shape for OTLP/JSON, OTLP protobuf and in-memory SDK spans."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

STATUS_UNSET = "unset"
STATUS_OK = "ok"
STATUS_ERROR = "error"
_STATUS_CODES = {0: STATUS_UNSET, 1: STATUS_OK, 2: STATUS_ERROR}

MAX_PROBLEMS_KEPT = 20
"""Problems a read keeps word for word (the rest are only counted)."""


def status_name(code: Any) -> str:
    """``unset``/``ok``/``error`` from an OTLP status code (a number, or the enum's name in JSON)."""
    if isinstance(code, str):
        upper = code.upper()
        if upper.endswith("ERROR"):
            return STATUS_ERROR
        if upper.endswith("OK"):
            return STATUS_OK
        return STATUS_UNSET
    if isinstance(code, int) and not isinstance(code, bool):
        return _STATUS_CODES.get(code, STATUS_UNSET)
    return STATUS_UNSET


@dataclass(frozen=True, slots=True)
class SpanEvent:
    """A span event (``gen_ai.user.message``, ``exception``...): its name, time and attributes."""

    name: str
    time_ns: int
    attributes: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Span:
    """One span: ids as lower-case hex, times in nanoseconds since the epoch, attributes as plain values.

    Attributes:
        trace_id: The trace's id (32 hex digits).
        span_id: The span's id (16 hex digits).
        parent_id: The parent span's id, or None for a root span.
        name: The span's name (``invoke_agent travel``, ``chat gpt-4o``, ``execute_tool search``).
        start_ns: Start time.
        end_ns: End time.
        attributes: The span's attributes (arrays as lists, key-value lists as dicts).
        events: The span's events, in order.
        status: ``unset``, ``ok`` or ``error``.
        status_message: The status description, if any.
        service: The resource's ``service.name``, if any.
    """

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start_ns: int
    end_ns: int
    attributes: Mapping[str, Any]
    events: tuple[SpanEvent, ...] = ()
    status: str = STATUS_UNSET
    status_message: str = ""
    service: str | None = None

    @property
    def duration(self) -> float:
        """Seconds from start to end (0 when the times are missing or reversed)."""
        return max(0, self.end_ns - self.start_ns) / 1e9


@dataclass
class ReadStats:
    """What a read saw: spans, traces, and what it skipped and why (counted, never raised).

    Attributes:
        batches: Export requests read (lines of an OTLP/JSON file, messages of a protobuf file).
        spans: Spans read.
        traces: Traces handed on.
        contexts: Contexts built.
        skipped: Why something was left out -> how many times (``malformed line``,
            ``span without ids``, ``trace with no GenAI or OpenInference span``...).
        problems: The first problems word for word, as ``SOURCE:LINE: problem``.
    """

    batches: int = 0
    spans: int = 0
    traces: int = 0
    contexts: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)

    def skip(self, reason: str, problem: str | None = None, count: int = 1) -> None:
        """Count ``count`` things left out for ``reason``; keep ``problem`` while fewer than the cap are kept."""
        self.skipped[reason] += count
        if problem is not None and len(self.problems) < MAX_PROBLEMS_KEPT:
            self.problems.append(problem)

    @property
    def skipped_total(self) -> int:
        return sum(self.skipped.values())

    def summary(self) -> str:
        """``3 traces, 41 spans -> 3 contexts; skipped: 2 malformed line``."""
        text = f"{self.traces:,} trace(s), {self.spans:,} span(s) -> {self.contexts:,} context(s)"
        if self.skipped:
            text += "; skipped: " + ", ".join(f"{n:,} {reason}" for reason, n in sorted(self.skipped.items()))
        return text
