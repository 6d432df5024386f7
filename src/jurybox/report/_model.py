"""What every report renders: one run's records plus the totals derived from them.

The renderers never recompute anything: they read ``RunReport``, its ``totals``
and the ``CaseSummary`` of each case (``_case.py``), so the console, JSON, JUnit,
Markdown and HTML reports can never disagree about a count. A report read from
the store streams its cases (``_streamed.py``) instead of holding them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from types import MappingProxyType

from jurybox.core import RUN_STATUSES, CaseRecord, RunStatus
from jurybox.report._calibrations import CalibratedJudge
from jurybox.report._case import CaseSummary, summarize_case
from jurybox.report._streamed import RankedSummaries, StreamedSummaries, attention_rank
from jurybox.report._totals import LiveTally, SkippedTier, Tally, TierRate, Totals
from jurybox.store import StoredRecords

__all__ = [
    "LiveTally",
    "RunReport",
    "SkippedTier",
    "TierRate",
    "Totals",
    "compute_totals",
]


@dataclass(frozen=True)
class RunReport:
    """One run of one suite, ready to render.

    Build it from what the runner produced (or what ``store.results.read_all`` returns
    for a finished or resumed run); everything else is derived.

    Attributes:
        suite: Suite name.
        run_id: The store's run id.
        records: One record per case that finished, in suite order.
        started_at: When the run started.
        finished_at: When it ended (None while unknown).
        judge_model: The judge model spec (e.g. ``"openai:gpt-4o-mini"``), None when none was configured.
        status: ``"completed"``, ``"interrupted"`` (stopped early; the report covers what
            finished) or ``"failed"``.
        notes: Run-level messages shown prominently, e.g. why a tier was skipped and how to enable it.
        skipped_tiers: Tier name -> reason for tiers the runner left out for the whole run;
            merged with each case's ``metadata["skipped_tiers"]``.
        planned: How many cases the run was meant to judge, when known (shows what an
            interrupted run is missing).
        metadata: Anything else worth keeping (agent version, git commit...); shown in JSON and HTML.
        calibrations: The run's LLM judges that have a stored calibration: observed and corrected
            pass rates, or why there is no correction (worked out by the caller; see ``CalibratedJudge``).
        tally: The run's totals added up while its records were written (``LiveTally``): a report
            whose records are read from the store takes its totals and failing-first order from it
            when it covers those records, instead of reading every one back. None: it counts them.
    """

    suite: str
    run_id: str
    records: Sequence[CaseRecord]
    started_at: datetime | None = None
    finished_at: datetime | None = None
    judge_model: str | None = None
    status: RunStatus = "completed"
    notes: Sequence[str] = ()
    skipped_tiers: Mapping[str, str] = field(default_factory=dict)
    planned: int | None = None
    metadata: Mapping[str, object] = field(default_factory=dict)
    calibrations: Sequence[CalibratedJudge] = ()
    tally: LiveTally | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.status not in RUN_STATUSES:
            raise ValueError(f"RunReport.status must be one of {', '.join(RUN_STATUSES)}; got {self.status!r}")
        records: Sequence[CaseRecord]
        names: Iterable[str] = ()
        if isinstance(self.records, StoredRecords):
            # Read from the store on each pass: a report of any size renders in flat memory. The store
            # holds one record per case of a run (a unique key), so no set of a million names is made.
            records = self.records
        else:
            records = tuple(self.records)
            for index, record in enumerate(records):
                if not isinstance(record, CaseRecord):
                    raise TypeError(f"RunReport.records[{index}] is a {type(record).__name__}, not a CaseRecord")
            names = (r.case for r in records)
        duplicates = sorted(name for name, count in Counter(names).items() if count > 1)
        if duplicates:
            # A resumed run that wrote a case twice would otherwise be counted twice.
            raise ValueError(f"RunReport has more than one record for case(s): {', '.join(duplicates)}")
        if self.planned is not None and self.planned < len(records):
            raise ValueError(f"RunReport.planned is {self.planned} but there are {len(records)} records")
        object.__setattr__(self, "records", records)
        object.__setattr__(self, "notes", tuple(self.notes))
        object.__setattr__(self, "skipped_tiers", MappingProxyType(dict(self.skipped_tiers)))
        object.__setattr__(self, "metadata", MappingProxyType(dict(self.metadata)))
        object.__setattr__(self, "calibrations", tuple(self.calibrations))

    @property
    def streamed(self) -> bool:
        """True when the records are read from the store on each pass instead of held in memory."""
        return isinstance(self.records, StoredRecords)

    @cached_property
    def cases(self) -> Sequence[CaseSummary]:
        """A summary per record, in record order (computed on each pass for a streamed report)."""
        if isinstance(self.records, StoredRecords):
            return StreamedSummaries(self.records)
        return tuple(summarize_case(record) for record in self.records)

    @cached_property
    def totals(self) -> Totals:
        if isinstance(self.records, StoredRecords):
            return self._streamed_tally[0]
        return compute_totals(self)

    @cached_property
    def _streamed_tally(self) -> tuple[Totals, bytes]:
        if self.tally is not None and isinstance(self.records, StoredRecords):
            live = self.tally.result(self, self.records)
            if live is not None:
                return live
        # One pass over the store gives the totals and the failing-first rank of every case.
        tally = Tally()
        for summary in self.cases:
            tally.add(summary)
        return tally.totals(self), bytes(tally.ranks)

    @property
    def tallied(self) -> bool:
        """True when the totals and the failing-first order are known without another pass over the cases."""
        if not isinstance(self.records, StoredRecords) or "_streamed_tally" in self.__dict__:
            return True
        return self.tally is not None and self.tally.covers(self.records)

    def tally_cases(self) -> Iterator[CaseSummary]:
        """``cases``, adding up the totals and the failing-first order on the way.

        A renderer that needs the totals only after the cases (the JSON report,
        spooling its case lines) iterates this instead of ``cases``: a streamed
        report then reads the store once, not once for the totals and once more
        for the cases. The totals are kept only when the pass runs to the end.
        """
        tally = Tally()
        for summary in self.cases:
            tally.add(summary)
            yield summary
        if self.streamed:
            # cached_property keeps its value in the instance dict: the pass just made is that value.
            self.__dict__.setdefault("_streamed_tally", (tally.totals(self), bytes(tally.ranks)))

    @property
    def ok(self) -> bool:
        """True when the run completed, judged at least one case, every case passed and none is missing.

        A run that judged nothing (a filter that matched no case) is not ok: a CI
        gate must not pass on an empty run. Nor is a completed run with planned
        cases that have no record (a result the store failed to write).
        """
        return (
            self.status == "completed"
            and bool(self.records)
            and not self.missing
            and self.totals.passed == len(self.records)
        )

    @property
    def missing(self) -> int | None:
        """Planned cases with no record (an interrupted run), or None when the plan is unknown."""
        return None if self.planned is None else self.planned - len(self.records)

    def notices(self) -> list[str]:
        """Run-level messages for the top of a report: an incomplete run, skipped tiers, the notes.

        A skipped tier whose reason a note already states is not repeated.
        """
        notices = []
        if self.status != "completed":
            text = f"run {self.status}: this report covers the {len(self.records)} case(s) that finished"
            if self.missing:
                text += f"; {self.missing} of {self.planned} planned case(s) have no result"
            notices.append(text)
        elif self.missing:
            notices.append(f"results lost: {self.missing} of {self.planned} planned case(s) have no result")
        for skipped in self.totals.skipped_tiers.values():
            if not any(skipped.reason in note for note in self.notes):
                count = f" for {skipped.cases} case(s)" if skipped.cases else ""
                notices.append(f"{skipped.tier} tier skipped{count}: {skipped.reason}")
        notices.extend(self.notes)
        return notices

    def failing_first(self) -> Sequence[CaseSummary]:
        """Cases ordered FAIL, ERROR, ABSTAIN, degraded PASS, PASS; suite order within each group."""
        return self._failing_first

    @cached_property
    def _failing_first(self) -> Sequence[CaseSummary]:
        # Kept: several renderers ask, and ranking a streamed report is a pass over the store.
        if isinstance(self.records, StoredRecords):
            return RankedSummaries(self.records, self._streamed_tally[1])
        return tuple(sorted(self.cases, key=attention_rank))


def compute_totals(report: RunReport) -> Totals:
    """Derive the run-level figures from the case records, in one pass (one store read when streamed)."""
    tally = Tally()
    for summary in report.cases:
        tally.add(summary)
    return tally.totals(report)
