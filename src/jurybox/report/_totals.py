"""A run's totals, and the tally that adds them up one case at a time.

``Tally`` is the pass every report makes over its cases (``RunReport.totals``).
``LiveTally`` is the same pass made while a run writes its records (``jurybox run``
hands one to the runner), so the report of a stored run does not read every record
back from the store only to count it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

from jurybox.core import SKIPPED_TIERS_KEY, TIERS, CaseRecord, Status
from jurybox.report._case import degraded_counts, tier_verdicts
from jurybox.report._streamed import PASS_RANK, rank_of
from jurybox.store import DEFAULT_TARGETS, StoredRecords

if TYPE_CHECKING:
    from jurybox.report._case import CaseSummary
    from jurybox.report._model import RunReport

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


class ExactSum:
    """A running sum of floats, correctly rounded whatever the order of its terms (``math.fsum``, kept as it goes).

    A live tally adds a run's cases in the order they finished, a report read from the store in
    plan order: both must print the same cost and case time, to the last digit of the JSON.
    """

    __slots__ = ("_partials", "_special")

    def __init__(self) -> None:
        self._partials: list[float] = []  # non-overlapping, smallest first: their exact sum is the sum
        self._special = 0.0  # infinities and NaN, summed plainly: they have no exact sum to keep

    def add(self, value: float) -> None:
        if not math.isfinite(value):
            self._special += value
            return
        partials = self._partials
        kept = 0
        for kept_value in partials:
            small, value = (value, kept_value) if abs(value) < abs(kept_value) else (kept_value, value)
            high = value + small
            low = small - (high - value)
            if low:
                partials[kept] = low
                kept += 1
            value = high
        partials[kept:] = [value]

    @property
    def value(self) -> float:
        total = math.fsum(self._partials)
        return total + self._special if self._special else total


class Tally:
    """The run-level figures, added up one case at a time; also each case's ``attention_rank``, in order."""

    def __init__(self) -> None:
        self.by_status = dict.fromkeys(_STATUS_ORDER, 0)
        self.cases = 0
        self.tokens = self.tokens_known = 0
        self.cost = ExactSum()
        self.cost_known = self.judge_calls = self.degraded_judgments = self.degraded_cases = 0
        self.case_time = ExactSum()
        self.tiers: dict[str, list[int]] = {}
        # Tiers the records say were left out: the first reason given for each, and how many cases.
        self.skipped_reasons: dict[str, str] = {}
        self.skipped_counts: dict[str, int] = {}
        self.ranks = bytearray()
        self.calls: dict[str, dict[str, int]] = {}

    def add(self, summary: CaseSummary) -> None:
        self.add_record(summary.record, summary.degraded, summary.degraded_judgments)

    def add_record(self, record: CaseRecord, degraded: bool, degraded_judgments: int) -> int:
        """Count one case (``degraded_counts`` of it given); its ``attention_rank``."""
        self.cases += 1
        self.by_status[record.status] += 1
        if record.tokens is not None:
            self.tokens += record.tokens
            self.tokens_known += 1
        if record.cost is not None:
            self.cost.add(record.cost)
            self.cost_known += 1
        self.case_time.add(record.duration)
        self.judge_calls += record.judge_calls
        self.degraded_judgments += degraded_judgments
        self.degraded_cases += degraded
        rank = rank_of(record.status, degraded)
        self.ranks.append(rank)
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
        return rank

    def totals(self, report: RunReport) -> Totals:
        """The figures of ``report``: its times give the duration, its own skipped tiers come first."""
        cases, by_status = self.cases, dict(self.by_status)
        tokens_known, cost_known, tiers = self.tokens_known, self.cost_known, self.tiers
        # The report's reasons win; a tier only the records name keeps the first record's reason.
        skipped_reasons = dict(report.skipped_tiers)
        skipped_counts = dict.fromkeys(report.skipped_tiers, 0)
        for tier, reason in self.skipped_reasons.items():
            skipped_reasons.setdefault(tier, reason)
            skipped_counts[tier] = skipped_counts.get(tier, 0) + self.skipped_counts[tier]
        case_time = self.case_time.value
        if report.started_at is not None and report.finished_at is not None:
            duration: float | None = max(0.0, (report.finished_at - report.started_at).total_seconds())
        else:
            duration = case_time if cases else None
        return Totals(
            cases=cases,
            by_status=MappingProxyType(by_status),
            pass_rate=by_status[Status.PASS] / cases if cases else None,
            tokens=self.tokens if tokens_known else None,
            tokens_unknown=cases - tokens_known,
            cost=self.cost.value if cost_known else None,
            cost_unknown=cases - cost_known,
            judge_calls=self.judge_calls,
            duration=duration,
            case_time=case_time,
            # In run order (deterministic, similarity, llm_operations, llm_judge).
            tiers=MappingProxyType({tier: TierRate(tier, *tiers[tier]) for tier in sorted(tiers, key=_tier_position)}),
            degraded_judgments=self.degraded_judgments,
            degraded_cases=self.degraded_cases,
            skipped_tiers=MappingProxyType(
                {tier: SkippedTier(tier, skipped_reasons[tier], skipped_counts[tier]) for tier in skipped_reasons}
            ),
            calls=MappingProxyType({who: MappingProxyType(dict(counts)) for who, counts in self.calls.items()}),
        )


class LiveTally:
    """A run's totals and failing-first ranks, added up as its records are written.

    ``jurybox run`` hands one to the runner, which adds each record as its case finishes,
    and then to the run's ``RunReport``. A report of a stored run would otherwise read
    every record back from the store (its judgment trees decoded and rebuilt) only to
    count it: about a tenth of a 10,000-case run's CPU. The report uses the tally only
    when it covers exactly the records the store holds for the run (same number, same
    statuses, every failing-first rank for a case the store has, no case finished out of
    its sight); else it makes its own pass, as without one. Only the cases that are not
    plain passes are kept by name.
    """

    def __init__(self) -> None:
        self._tally = Tally()
        self._ranks: dict[str, int] = {}
        self.missed = 0
        """Cases that finished without their record reaching this process (a worker process stored them)."""

    @property
    def cases(self) -> int:
        """Records added."""
        return self._tally.cases

    def add(self, record: CaseRecord) -> None:
        """Count one finished case."""
        degraded, leaves = degraded_counts(record)
        rank = self._tally.add_record(record, degraded, leaves)
        if rank != PASS_RANK:
            self._ranks[record.case] = rank

    def miss(self, case: str) -> None:
        """A case finished whose record this process did not see: the tally no longer covers the run."""
        self.missed += 1

    def covers(self, records: StoredRecords) -> bool:
        """Whether the tally saw the records ``records`` reads back: as many, with the same statuses."""
        if self.missed or self._tally.cases != len(records):
            return False
        counted = {status: count for status, count in self._tally.by_status.items() if count}
        return counted == {status: count for status, count in records.status_counts().items() if count}

    def result(self, report: RunReport, records: StoredRecords) -> tuple[Totals, bytes] | None:
        """``report``'s totals and each of ``records``' failing-first rank, in order; None unless it covers them."""
        if not self.covers(records):
            return None
        names = records.names()
        ranked = sum(1 for name in names if name in self._ranks)
        if ranked != len(self._ranks):  # a case it ranked is not in the store: not the same records
            return None
        ranks = bytes(self._ranks.get(name, PASS_RANK) for name in names)
        return self._tally.totals(report), ranks


def _tier_position(tier: str) -> int:
    """Known tiers in the order they run; a tier of a user's own cascade after them."""
    return TIERS.index(tier) if tier in TIERS else len(TIERS)
