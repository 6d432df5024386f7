"""A run's spans sent while it runs: each case's as the runner takes its record, the run's at the end.

Exporting after the run read every record back from the store (its judgment tree decoded
and rebuilt, 100-200 us a case) only to write it as spans: about a sixth of a big run's
CPU. A ``LiveRun`` is what the runner tells of each finished case (``add``, or ``miss``
when a worker process stored a record this process never saw), so the spans are written
from the record in hand. At the end, ``finish`` sends from the stored records only the
cases the live pass did not send (a resumed run's earlier cases, a worker's), read by
name, so each case of the run has one span. The records are written as spans ``LIVE_BATCH``
at a time (back to back, the writing costs a third less than between the runner's own steps);
on an event loop, a case's spans leave within ``BATCH_SECONDS`` of its end even when no other
case finishes after it (a timer on the loop).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Collection, Iterable, Iterator
from typing import TYPE_CHECKING

from jurybox.core import CaseRecord
from jurybox.traces._exporter import BATCH_SECONDS, case_times

LIVE_BATCH = 256
"""Finished cases a live run keeps before writing their spans in one go.

A case's spans written as the case finishes, between the runner's steps, found the encoder's
code and caches cold: in a 10,000-case run at concurrency 256 they cost 115-130 us a case,
written 256 at a time 67-82 us (and the run's CPU 7% less). The wait adds nothing a reader
sees: spans already wait for a batch of ``BATCH_SPANS`` or ``BATCH_SECONDS``, and cases told
of from plain code (no timer) still go out at the next case past ``BATCH_SECONDS``.
"""

if TYPE_CHECKING:
    from jurybox.traces._exporter import OtlpExporter, RunSpan


class LiveRun:
    """One run's spans as its cases finish (a ``RecordTally`` for the runner).

    Args:
        exporter: Where the spans go.
        run: The run's open span (``OtlpExporter.start_run``).
    """

    def __init__(self, exporter: OtlpExporter, run: RunSpan) -> None:
        self._exporter = exporter
        self._run = run
        # The names sent, to send no case twice at the end (a YAML suite's names are its cases' own strings).
        self._sent: set[str] = set()
        self.passed = 0
        self.missed = 0
        """Cases that finished in a worker process: their spans are sent from the store at the end."""
        self.finished = False
        self._timer: asyncio.TimerHandle | None = None
        self._waiting: list[CaseRecord] = []  # told of, spans not written yet
        self._moments: list[float] = []  # when each waiting record was told of (a case with no start ends then)
        self._due_at = 0.0  # when the waiting records are written, full batch or not

    @property
    def sent(self) -> int:
        """Case spans written so far (handed to the exporter's batches)."""
        return len(self._sent) - len(self._waiting)

    def add(self, record: CaseRecord) -> None:
        """A finished case's record: its spans, with the next ``LIVE_BATCH`` (or within ``BATCH_SECONDS``)."""
        if record.case in self._sent:  # a store keeps one record a case: so does the trace
            return
        self._sent.add(record.case)
        self.passed += record.status.value == "pass"
        waiting = self._waiting
        if not waiting:
            self._due_at = time.monotonic() + BATCH_SECONDS
        waiting.append(record)
        self._moments.append(time.time())
        if len(waiting) >= LIVE_BATCH:
            self.write_waiting()
        elif time.monotonic() >= self._due_at:  # told from plain code, with no timer: they waited long enough
            self.write_waiting()
            self._exporter.send_waiting()
        if self._timer is None:
            self._arm()

    def write_waiting(self) -> None:
        """Write the spans of the cases told of and not written yet (the exporter's ``close`` does it too)."""
        waiting, moments = self._waiting, self._moments
        if not waiting:
            return
        self._waiting, self._moments = [], []
        before = self._exporter.cases
        try:
            self._exporter.export_batch(waiting, self._run, moments)
        except BaseException:
            # The cases after the one that failed were not written: unsent, so ``finish`` sends them from
            # the store, as cases this process never saw.
            for record in waiting[self._exporter.cases - before :]:
                self._sent.discard(record.case)
                self.passed -= record.status.value == "pass"
            raise

    def _arm(self) -> None:
        """Send what waits ``BATCH_SECONDS`` from now, if the caller runs an event loop (the runner does)."""
        try:
            loop = asyncio.get_running_loop()
        except (
            RuntimeError
        ):  # told from plain code: the batch goes when full, at the next case past its time, or at the end
            return
        self._timer = loop.call_later(BATCH_SECONDS, self._due)

    def _due(self) -> None:
        # Armed again by the next case only: an idle run keeps no timer going.
        self._timer = None
        if not self.finished:
            self.write_waiting()
            self._exporter.send_waiting()

    def miss(self, case: str) -> None:
        """A case finished whose record this process never saw (``finish`` sends it from the store)."""
        self.missed += 1

    def finish(self, records: Iterable[CaseRecord] = (), *, run_id: str | None = None) -> int:
        """Send the cases of ``records`` (the run's stored records) not sent yet, then the run's span.

        A case sent live whose record the store lacks (its write failed) keeps its span: it was
        judged. The run's span starts no later than its earliest case (a resumed run's earlier
        cases started before this session) and counts every case sent. Returns how many cases
        were sent here.
        """
        if self.finished:
            return 0
        self.finished = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.write_waiting()
        late = 0
        moment = time.time()
        run = self._run
        for record in _unsent(records, self._sent):
            self._exporter.export_record(record, run)
            self._sent.add(record.case)
            self.passed += record.status.value == "pass"
            late += 1
            start = case_times(record, moment)[0]
            run.start_ns = min(run.start_ns, start)
        run.set_attribute("jurybox.run.id", run_id)
        self._exporter.finish_run(run, passed=self.passed, total=len(self._sent))
        return late


def _unsent(records: Iterable[CaseRecord], sent: Collection[str]) -> Iterator[CaseRecord]:
    """The records of ``records`` whose case is not in ``sent``, decoding no other record when the store can.

    A store's lazy sequence names its cases without reading their judgment trees (``names``) and
    reads only the ones asked for (``only``); a list is filtered as it is.
    """
    names: Callable[[], Iterable[str]] | None = getattr(records, "names", None)
    only: Callable[[Collection[str]], Iterator[CaseRecord]] | None = getattr(records, "only", None)
    if callable(names) and callable(only):
        wanted = [name for name in names() if name not in sent]
        return only(wanted) if wanted else iter(())
    return (record for record in records if record.case not in sent)
