"""What the store browser returns: pages of rows, run stats, case rows, comparisons and trend points.

Plain frozen dataclasses, built by the browser's parts (``_browse_*.py``) and
read by the dashboard and by scripts; nothing here touches the database.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, Literal, TypeVar

from jurybox.core import Judgment, Status
from jurybox.store._compare import Latency
from jurybox.store._models import Rate, RunInfo

T = TypeVar("T")

MAX_PAGE = 500
"""The most rows one page may ask for; bigger requests are cut to it."""

CaseSort = Literal["attention", "name", "status", "score", "duration", "cost", "plan"]
CASE_SORTS: tuple[str, ...] = ("attention", "name", "status", "score", "duration", "cost", "plan")

CompareKind = Literal["broke", "fixed", "still_failing", "scores", "new_errors", "status", "only_a", "only_b"]
COMPARE_KINDS: tuple[str, ...] = (
    "broke",
    "fixed",
    "still_failing",
    "scores",
    "new_errors",
    "status",
    "only_a",
    "only_b",
)


SHOWN_FIRST: tuple[str, ...] = ("broke", "new_errors", "fixed", "scores", "still_failing", "status", "only_b", "only_a")
"""Which kind of change a comparison lists when none is asked for: the first of these it has."""


def first_kind(counts: dict[str, int]) -> str:
    """The kind of change a comparison with these counts lists first."""
    return next((kind for kind in SHOWN_FIRST if counts.get(kind)), SHOWN_FIRST[0])


def page_bounds(offset: int, limit: int) -> tuple[int, int]:
    """``(offset, limit)`` kept to a non-negative offset and 1..``MAX_PAGE`` rows."""
    return max(0, int(offset)), max(1, min(int(limit), MAX_PAGE))


def tag_list(value: Any) -> list[str]:
    """A result's ``tags`` column as a list, whether the driver decoded the JSON or left it as text."""
    if isinstance(value, list):
        items = value
    elif not value:
        return []
    else:
        try:
            items = json.loads(value)
        except ValueError:
            return []
        if not isinstance(items, list):
            return []
    return [str(tag) for tag in items]


@dataclass(frozen=True)
class Paged(Generic[T]):
    """One page of rows and how many rows match in all."""

    items: list[T]
    total: int
    offset: int
    limit: int


@dataclass(frozen=True)
class TierStats:
    """One cascade tier in one run: how many verdicts reached it, passed it, and its mean score."""

    name: str
    ran: int
    passed: int
    mean_score: float | None
    decided: int
    not_needed: int
    """Cascade verdicts that never reached this tier because an earlier tier decided."""

    @property
    def rate(self) -> float | None:
        return self.passed / self.ran if self.ran else None


@dataclass(frozen=True)
class JudgeStats:
    """One judge (a node path of the verdict trees) in one run."""

    path: str
    judge: str
    ran: int
    passed: int
    mean_score: float | None

    @property
    def rate(self) -> float | None:
        return self.passed / self.ran if self.ran else None


@dataclass(frozen=True)
class RunStats:
    """The aggregates of one run that need a pass over its rows (cached once the run is final)."""

    metrics: dict[str, Rate]
    """``overall`` and one per tier: exactly what ``store.metrics.rates`` and the gate compute."""
    tiers: tuple[TierStats, ...]
    judges: tuple[JudgeStats, ...]
    latency: Latency
    tags: tuple[str, ...]
    last_recorded: datetime | None


@dataclass(frozen=True)
class CaseRow:
    """One case of a run as a table shows it: no trees beyond the verdict, texts cut short."""

    case: str
    status: Status
    score: float | None
    reasoning: str
    error: str | None
    decided_by: str | None
    duration: float
    tokens: int | None
    cost: float | None
    tags: tuple[str, ...]
    judgment: Judgment
    unpriced_calls: int | None = None
    """Judge calls of the case with no known price: ``cost`` is then only the known part."""


@dataclass(frozen=True)
class CaseQuery:
    """Filters and order of a run's case table."""

    status: str | None = None
    tag: str | None = None
    search: str | None = None
    min_score: float | None = None
    max_score: float | None = None
    sort: str = "attention"
    descending: bool = False
    offset: int = 0
    limit: int = 50


@dataclass(frozen=True)
class ComparedSide:
    """A case's status, score and duration in one run of a comparison."""

    status: Status
    score: float | None
    duration: float


@dataclass(frozen=True)
class ComparedCase:
    """One case in run A and run B (either side None when the case is only in the other run)."""

    case: str
    a: ComparedSide | None
    b: ComparedSide | None

    @property
    def score_delta(self) -> float | None:
        if self.a is None or self.b is None or self.a.score is None or self.b.score is None:
            return None
        return self.b.score - self.a.score


@dataclass(frozen=True)
class ComparisonSummary:
    """Run A against run B: the counts of ``jurybox compare``, per kind (counted in SQL; pages read by kind).

    The kinds follow ``CaseChange``: ``broke`` (passed in A, not in B), ``fixed``
    (the reverse), ``still_failing`` (not passed in either), ``scores`` (score
    moved, largest move first), ``new_errors`` (ERROR in B, not in A),
    ``status`` (status changed), ``only_a`` and ``only_b``.
    """

    run_a: RunInfo
    run_b: RunInfo
    latency_a: Latency
    latency_b: Latency
    common: int
    counts: dict[str, int]

    @property
    def flipped(self) -> int:
        return self.counts["broke"] + self.counts["fixed"]

    @property
    def cost_delta(self) -> float | None:
        """B's cost minus A's; None unless both are exact (a lower bound minus another says nothing)."""
        if not (self.run_a.cost_exact and self.run_b.cost_exact):
            return None
        assert self.run_a.cost is not None and self.run_b.cost is not None
        return self.run_b.cost - self.run_a.cost


@dataclass(frozen=True)
class TrendPoint:
    """One run on a suite's trend, with each metric's rolling baseline and gate state at that run."""

    run: RunInfo
    stats: RunStats
    baselines: dict[str, float | None] = field(default_factory=dict)
    states: dict[str, str] = field(default_factory=dict)
    thresholds: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class CaseHistoryRow:
    """One case's status in each of a suite's recent runs (None where the run has no result for it)."""

    case: str
    statuses: tuple[str | None, ...]
    flips: int
    passed: int
    ran: int
