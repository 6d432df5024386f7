"""``jurybox run --otel-endpoint``: each suite's run sent as spans while it runs, its cases as they finish.

The exporter is told of each case the runner takes, beside the report's ``LiveTally``, so
its spans are written from the record in hand instead of from the record read back from
the store after the run. An exporter plug-in without live runs exports each run when it ends.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

from jurybox import runs
from jurybox.core import CaseRecord
from jurybox.engine import RecordTally, RunResult


class Tallies:
    """Tells several tallies of each case the runner takes (the report's totals, the exporter's spans)."""

    __slots__ = ("_tallies",)

    def __init__(self, *tallies: RecordTally) -> None:
        self._tallies = tallies

    def add(self, record: CaseRecord) -> None:
        for tally in self._tallies:
            tally.add(record)

    def miss(self, case: str) -> None:
        for tally in self._tallies:
            tally.miss(case)


class RunExport:
    """The ``--otel-endpoint`` exporter of one ``jurybox run``: a live run per suite run (an experiment's variant each).

    Args:
        exporter: The ``otlp`` exporter plug-in (``otel_exporter``).
    """

    def __init__(self, exporter: Any) -> None:
        self._exporter = exporter
        self._live: dict[int, Any] = {}  # id(planned) -> its LiveRun, until its run ends

    def tally(self, planned: runs.PlannedSuite, tally: RecordTally) -> RecordTally:
        """What the runner of ``planned`` tells of each case: ``tally``, and the exporter too when it exports live."""
        live_run = getattr(self._exporter, "live_run", None)
        if not callable(live_run):
            return tally
        live = self._live[id(planned)] = live_run(planned.suite.name)
        return Tallies(tally, live)

    def finished(self, planned: runs.PlannedSuite, result: RunResult) -> None:
        """``planned``'s run ended: the cases not sent live (a resumed run's earlier, a worker's), then its span."""
        live = self._live.pop(id(planned), None)
        if live is not None:
            live.finish(result.records, run_id=result.run_id)
            return
        # A resumed run's earlier cases started before this session: their records say when.
        start = None if result.resumed else int(result.started_at.timestamp() * 1e9)
        self._exporter.export_records(result.records, run_name=result.suite, run_id=result.run_id, start_ns=start)

    def close(self) -> None:
        """Send what is left: a run that stopped without a result (an error) gets its span over the cases it sent."""
        for live in self._live.values():
            live.finish()
        self._live.clear()
        self._exporter.close()

    def summary(self) -> str | None:
        """What was sent, where, and what it cost (after ``close``); None for an exporter that keeps no counts."""
        exporter = self._exporter
        spans, requests, cases = (getattr(exporter, name, None) for name in ("spans", "requests", "cases"))
        cpu = getattr(exporter, "cpu_seconds", None)
        counted = isinstance(spans, int) and isinstance(requests, int) and isinstance(cases, int)
        if not counted or not isinstance(cpu, float):
            return None
        endpoint = getattr(exporter, "endpoint", None)
        where = shown_endpoint(endpoint) if isinstance(endpoint, str) and endpoint else "the span exporter"
        sent = f"{requests:,} request{'s' if requests != 1 else ''}"
        size = getattr(exporter, "bytes_sent", 0)
        if isinstance(size, int) and size:
            sent += f" ({size / 1e6:.1f} MB)"
        each = f", {cpu / cases * 1e6:,.0f} us a case" if cases else ""
        line = f"OTLP export: {spans:,} spans of {cases:,} case(s) in {sent} to {where}; {cpu:.2f} s of CPU{each}"
        failed = getattr(exporter, "failed_batches", 0)
        if isinstance(failed, int) and failed:
            line += f"; {failed:,} batch(es) not accepted (see the log)"
        return line


def shown_endpoint(url: str) -> str:
    """``url`` without what may be a secret: its user and password, its query (an API key) and fragment."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    hidden = "?..." if parts.query else ""
    return urlunsplit((parts.scheme, host, parts.path, "", "")) + hidden
