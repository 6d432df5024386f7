"""Reading a trace export file into Contexts, one trace at a time, in memory bounded by what is pending.

Spans of one trace may come in several export batches; a trace is handed on once its
root span has been read and ``settle`` more batches have passed (exporters send a span
when it ends, so a root comes after its children), and at the end of the file.
A span that comes for a trace already handed on is counted, not lost silently.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from jurybox.core import Context
from jurybox.traces._contexts import contexts_of_trace
from jurybox.traces._otlp_json import read_json_lines
from jurybox.traces._otlp_proto import read_proto_file
from jurybox.traces._spans import ReadStats, Span

Format = Literal["auto", "json", "protobuf"]
JSON_SUFFIXES = frozenset({".json", ".jsonl", ".ndjson"})
PROTOBUF_SUFFIXES = frozenset({".pb", ".proto", ".binpb", ".protobuf", ".otlp"})
SETTLE_BATCHES = 64
"""Batches read after a trace's root before the trace is judged complete."""
MAX_PENDING_SPANS = 1_000_000
"""Spans held waiting for their trace to complete; past this the oldest traces are handed on early."""
MAX_DONE_REMEMBERED = 100_000
_READ_BUFFER = 1024 * 1024  # an export line is ~100 KB: the default 8 KB buffer reads it in many pieces


@dataclass(slots=True)
class _Pending:
    order: int
    spans: list[Span] = field(default_factory=list)
    rooted_at: int | None = None


class TraceAssembler:
    """Groups spans into traces and hands each trace on when it is complete (see the module docstring)."""

    def __init__(self, stats: ReadStats, *, settle: int = SETTLE_BATCHES) -> None:
        self.stats = stats
        self.settle = settle
        self._pending: OrderedDict[str, _Pending] = OrderedDict()
        self._held = 0
        self._done: OrderedDict[str, None] = OrderedDict()
        self._batch = 0
        self._opened = 0
        # Rooted traces in the order their roots came (so by batch): the ready ones are at its front,
        # found without walking every pending trace at every batch.
        self._rooted: deque[tuple[int, str]] = deque()

    def add(self, span: Span) -> None:
        trace_id = span.trace_id
        if trace_id in self._done:
            self.stats.skip("span after its trace was judged complete")
            return
        pending = self._pending.get(trace_id)
        if pending is None:
            self._opened += 1
            pending = self._pending[trace_id] = _Pending(self._opened)
        pending.spans.append(span)
        self._held += 1
        if span.parent_id is None and pending.rooted_at is None:
            pending.rooted_at = self._batch
            self._rooted.append((self._batch, trace_id))

    def next_batch(self) -> Iterator[list[Span]]:
        """Mark the end of one export batch; the traces now complete (in the order they were first seen)."""
        self._batch += 1
        ready: list[str] = []
        rooted = self._rooted
        while rooted and self._batch - rooted[0][0] >= self.settle:
            batch, trace_id = rooted.popleft()
            pending = self._pending.get(trace_id)
            if pending is not None and pending.rooted_at == batch:  # not handed on early
                ready.append(trace_id)
        ready.sort(key=lambda trace_id: self._pending[trace_id].order)
        if self._held > MAX_PENDING_SPANS:
            chosen = set(ready)
            for oldest in self._pending:
                if self._held <= MAX_PENDING_SPANS or len(ready) >= len(self._pending):
                    break
                if oldest not in chosen:
                    ready.append(oldest)
                    chosen.add(oldest)
                    self._held -= len(self._pending[oldest].spans)
        for trace_id in ready:
            yield self._take(trace_id)

    def finish(self) -> Iterator[list[Span]]:
        """Every trace still pending (the end of the input)."""
        for trace_id in list(self._pending):
            yield self._take(trace_id)

    def _take(self, trace_id: str) -> list[Span]:
        pending = self._pending.pop(trace_id)
        self._held = max(0, self._held - len(pending.spans))
        self._done[trace_id] = None
        if len(self._done) > MAX_DONE_REMEMBERED:
            self._done.popitem(last=False)
        return pending.spans


def file_format(path: Path, first: bytes) -> Literal["json", "protobuf"]:
    """The format of an export file: by its suffix, else by its first byte (JSON starts with ``{``)."""
    suffix = path.suffix.lower()
    if suffix in JSON_SUFFIXES:
        return "json"
    if suffix in PROTOBUF_SUFFIXES:
        return "protobuf"
    return "json" if first.lstrip()[:1] in (b"{", b"") else "protobuf"


def read_spans(path: str | Path, stats: ReadStats, *, format: Format = "auto") -> Iterator[Span | None]:
    """Every span of an export file, with None after each export batch (the assembler's clock).

    Raises:
        OSError: the file cannot be opened.
    """
    file = Path(path)
    with file.open("rb", buffering=_READ_BUFFER) as handle:
        chosen = (
            format if format != "auto" else file_format(file, handle.peek(64)[:64] if hasattr(handle, "peek") else b"")
        )
        reader = (
            read_json_lines(handle, stats, str(file)) if chosen == "json" else read_proto_file(handle, stats, str(file))
        )
        batches = stats.batches
        for span in reader:
            if stats.batches != batches:
                batches = stats.batches
                yield None
            yield span
    yield None


def read_traces(
    path: str | Path, *, stats: ReadStats | None = None, format: Format = "auto", settle: int = SETTLE_BATCHES
) -> Iterator[Context]:
    """The Contexts of an OTLP trace export (OTLP/JSON lines or protobuf), one trace at a time.

    Args:
        path: The export file.
        stats: Filled as it reads: spans, traces, contexts, and what was skipped and why.
        format: ``json``, ``protobuf``, or ``auto`` (by suffix, else by the first byte).
        settle: Batches to wait after a trace's root span before judging the trace complete.

    Raises:
        OSError: the file cannot be opened.
        jurybox.traces.ProtobufUnavailableError: a protobuf file without the ``otel`` extra.
    """
    stats = stats if stats is not None else ReadStats()
    assembler = TraceAssembler(stats, settle=settle)
    for span in read_spans(path, stats, format=format):
        if span is None:
            for trace in assembler.next_batch():
                yield from contexts_of_trace(trace, stats)
        else:
            assembler.add(span)
    for trace in assembler.finish():
        yield from contexts_of_trace(trace, stats)


def contexts_from_spans(spans: Iterable[Span], *, stats: ReadStats | None = None) -> list[Context]:
    """The Contexts of spans already in memory (a request body, an in-memory exporter), grouped by trace."""
    stats = stats if stats is not None else ReadStats()
    traces: dict[str, list[Span]] = {}
    for span in spans:
        stats.spans += 1
        traces.setdefault(span.trace_id, []).append(span)
    return [context for trace in traces.values() for context in contexts_of_trace(trace, stats)]
