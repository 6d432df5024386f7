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

from jurybox.core import RUN_STATUSES, SKIPPED_TIERS_KEY, TIERS, CaseRecord, RunStatus, Status
from jurybox.report._calibrations import CalibratedJudge
from jurybox.report._case import CaseSummary, summarize_case, tier_verdicts
from jurybox.report._streamed import RankedSummaries, StreamedSummaries, attention_rank
from jurybox.store import DEFAULT_TARGETS, StoredRecords

_STATUS_ORDER = (Status.PASS, Status.FAIL, Status.ERROR, Status.ABSTAIN)


@dataclass(frozen=True)
class SkippedTier:
    """A judge tier that did not run for some cases.

    Attributes:
        tier: The tier's name, e.g. ``"llm_judge"``.
        reason: Why it did not run (e.g. no judge model configured, and how to configure one).
        cases: How many cases would have used it.
    """

    tier: str
    reason: str
    cases: int


@dataclass(frozen=True)
class TierRate:
    """How one cascade tier did over the run.

    Attributes:
        tier: The tier's name (key of a top-level child of a cascade verdict).
        ran: Verdicts this tier gave (one per case, or per round for multi-round cases).
        passed: How many of them were PASS. ABSTAIN and ERROR count as not passed.
        decided: How many case or round verdicts this tier settled (``decided_by``).
    """

    tier: str
    ran: int
    passed: int
    decided: int

    @property
    def rate(self) -> float | None:
        """``passed / ran``, or None when the tier never ran (never a made-up 0)."""
        return self.passed / self.ran if self.ran else None

    @property
    def target(self) -> float | None:
        """The pass rate this tier should reach (deterministic 95%, llm_operations 80%, llm_judge 70%)."""
        return DEFAULT_TARGETS.get(self.tier)

    @property
    def target_met(self) -> bool | None:
        """Whether the rate reaches the target; None when the tier has no target or never ran."""
        rate, target = self.rate, self.target
        return None if rate is None or target is None else rate >= target - 1e-9


#: How a case's ``metadata["calls"]`` names a judge fleet's endpoint (``judge@http://host:8000/v1``).
ENDPOINT_PREFIX = "judge@"


@dataclass(frozen=True)
class Totals:
    """Run-level figures derived from the records.

    Attributes:
        cases: Number of case records.
        by_status: Count per status (all four keys always present).
        pass_rate: PASS / cases, or None for an empty run.
        tokens: Sum of the known token counts, or None when no case reported any.
        tokens_unknown: Cases whose token count is unknown.
        cost: Sum of the known costs in USD, or None when no case's cost is known.
        cost_unknown: Cases whose cost is unknown; a report shows them, never as 0.
        judge_calls: Model calls made by judges.
        duration: Wall time of the run in seconds (finished - started), else the sum of case times.
        case_time: Sum of the case durations in seconds.
        tiers: Per-tier pass rates, in first-seen order.
        degraded_judgments: Individual judge verdicts produced by a fallback policy.
        degraded_cases: Cases with at least one degraded verdict.
        skipped_tiers: Tiers left out for some cases, with the reason (not tiers a cascade did not need).
        calls: Agent and judge calls under faults: ``{"agent": {"attempts", "retries", "failures"},
            "judge": {"calls", "attempts", "retries", "failures", "cache_hits"}}`` summed over the cases that
            recorded them (``metadata["calls"]``); ``judge_calls`` counts calls, these count requests.
            A judge fleet adds ``"judge@<endpoint URL>": {"calls", "errors"}`` per endpoint.
    """

    cases: int
    by_status: Mapping[Status, int]
    pass_rate: float | None
    tokens: int | None
    tokens_unknown: int
    cost: float | None
    cost_unknown: int
    judge_calls: int
    duration: float | None
    case_time: float
    tiers: Mapping[str, TierRate]
    degraded_judgments: int
    degraded_cases: int
    skipped_tiers: Mapping[str, SkippedTier]
    calls: Mapping[str, Mapping[str, int]] = field(default_factory=dict)

    @property
    def passed(self) -> int:
        return self.by_status[Status.PASS]

    @property
    def judge_endpoints(self) -> dict[str, Mapping[str, int]]:
        """A judge fleet's requests per endpoint URL (``calls`` answered, ``errors``); empty without a fleet."""
        return {
            who[len(ENDPOINT_PREFIX) :]: counts for who, counts in self.calls.items() if who.startswith(ENDPOINT_PREFIX)
        }

    @property
    def judge_cache_hits(self) -> int | None:
        """Judge calls answered from the response cache (no request sent, nothing spent).

        None when no case recorded it (a run stored before jurybox counted cache hits per case).
        """
        return self.calls.get("judge", {}).get("cache_hits")

    @property
    def failed(self) -> int:
        return self.by_status[Status.FAIL]

    @property
    def errored(self) -> int:
        return self.by_status[Status.ERROR]

    @property
    def abstained(self) -> int:
        return self.by_status[Status.ABSTAIN]

    @property
    def not_passed(self) -> int:
        """FAIL + ERROR + ABSTAIN: every case that is not a pass."""
        return self.cases - self.passed


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
        # One pass over the store gives the totals and the failing-first rank of every case.
        tally = _Tally(self)
        for summary in self.cases:
            tally.add(summary)
        return tally.totals(), bytes(tally.ranks)

    @property
    def tallied(self) -> bool:
        """True when the totals and the failing-first order are known without another pass over the cases."""
        return not self.streamed or "_streamed_tally" in self.__dict__

    def tally_cases(self) -> Iterator[CaseSummary]:
        """``cases``, adding up the totals and the failing-first order on the way.

        A renderer that needs the totals only after the cases (the JSON report,
        spooling its case lines) iterates this instead of ``cases``: a streamed
        report then reads the store once, not once for the totals and once more
        for the cases. The totals are kept only when the pass runs to the end.
        """
        tally = _Tally(self)
        for summary in self.cases:
            tally.add(summary)
            yield summary
        if self.streamed:
            # cached_property keeps its value in the instance dict: the pass just made is that value.
            self.__dict__.setdefault("_streamed_tally", (tally.totals(), bytes(tally.ranks)))

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
    tally = _Tally(report)
    for summary in report.cases:
        tally.add(summary)
    return tally.totals()


class _Tally:
    """The run-level figures, added up one case at a time; also each case's ``attention_rank``, in order."""

    def __init__(self, report: RunReport) -> None:
        self.report = report
        self.by_status = dict.fromkeys(_STATUS_ORDER, 0)
        self.cases = 0
        self.tokens = self.tokens_known = 0
        self.cost = 0.0
        self.cost_known = self.judge_calls = self.degraded_judgments = self.degraded_cases = 0
        self.case_time = 0.0
        self.tiers: dict[str, list[int]] = {}
        self.skipped_reasons = dict(report.skipped_tiers)
        self.skipped_counts = dict.fromkeys(report.skipped_tiers, 0)
        self.ranks = bytearray()
        self.calls: dict[str, dict[str, int]] = {}

    def add(self, summary: CaseSummary) -> None:
        record = summary.record
        self.cases += 1
        self.by_status[record.status] += 1
        if record.tokens is not None:
            self.tokens += record.tokens
            self.tokens_known += 1
        if record.cost is not None:
            self.cost += record.cost
            self.cost_known += 1
        self.case_time += record.duration
        self.judge_calls += record.judge_calls
        self.degraded_judgments += summary.degraded_judgments
        self.degraded_cases += summary.degraded
        self.ranks.append(attention_rank(summary))
        for tier, verdict, decided in tier_verdicts(record):
            counts = self.tiers.setdefault(tier, [0, 0, 0])
            counts[0] += 1
            counts[1] += verdict.status is Status.PASS
            counts[2] += decided
        counted = record.metadata.get("calls")
        if isinstance(counted, Mapping):
            for who, counts in counted.items():
                if isinstance(counts, Mapping):
                    into = self.calls.setdefault(str(who), {})
                    for name, value in counts.items():
                        if isinstance(value, int) and not isinstance(value, bool):
                            into[str(name)] = into.get(str(name), 0) + value
        configured = record.metadata.get(SKIPPED_TIERS_KEY)
        if isinstance(configured, Mapping):
            for tier, reason in configured.items():
                self.skipped_reasons.setdefault(str(tier), str(reason))
                self.skipped_counts[str(tier)] = self.skipped_counts.get(str(tier), 0) + 1

    def totals(self) -> Totals:
        report, cases, by_status = self.report, self.cases, self.by_status
        tokens_known, cost_known, tiers = self.tokens_known, self.cost_known, self.tiers
        skipped_reasons, skipped_counts = self.skipped_reasons, self.skipped_counts
        if report.started_at is not None and report.finished_at is not None:
            duration: float | None = max(0.0, (report.finished_at - report.started_at).total_seconds())
        else:
            duration = self.case_time if cases else None
        return Totals(
            cases=cases,
            by_status=MappingProxyType(by_status),
            pass_rate=by_status[Status.PASS] / cases if cases else None,
            tokens=self.tokens if tokens_known else None,
            tokens_unknown=cases - tokens_known,
            cost=self.cost if cost_known else None,
            cost_unknown=cases - cost_known,
            judge_calls=self.judge_calls,
            duration=duration,
            case_time=self.case_time,
            # In run order (deterministic, similarity, llm_operations, llm_judge).
            tiers=MappingProxyType({tier: TierRate(tier, *tiers[tier]) for tier in sorted(tiers, key=_tier_position)}),
            degraded_judgments=self.degraded_judgments,
            degraded_cases=self.degraded_cases,
            skipped_tiers=MappingProxyType(
                {tier: SkippedTier(tier, skipped_reasons[tier], skipped_counts[tier]) for tier in skipped_reasons}
            ),
            calls=MappingProxyType({who: MappingProxyType(counts) for who, counts in self.calls.items()}),
        )


def _tier_position(tier: str) -> int:
    """Known tiers in the order they run; a tier of a user's own cascade after them."""
    return TIERS.index(tier) if tier in TIERS else len(TIERS)
