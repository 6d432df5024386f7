"""What the store hands back: runs, pass rates, case outcomes and lessons."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from jurybox.core import Status


def as_utc(value: datetime | None) -> datetime | None:
    # SQLite hands back naive datetimes; everything the store writes is UTC.
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)


@dataclass(frozen=True)
class RunInfo:
    """A run as the store knows it: its settings, status and totals so far.

    ``recorded`` counts cases written so far (``planned`` is how many the run
    was asked to run). ``tokens`` and ``cost`` sum what the cases reported and
    are None when no case reported any. ``duration`` sums case durations;
    ``wall_time`` is finish minus start, including any pause before a resume.
    When ``unpriced_calls`` or ``cost_unknown`` is above 0, ``cost`` is only the known
    part (a lower bound); both are None for a run finished before schema 0013.
    """

    id: str
    suite: str
    status: str
    started_at: datetime
    finished_at: datetime | None
    git_commit: str | None
    judge_model: str | None
    agent_version: str | None
    config: Mapping[str, Any]
    planned: int
    recorded: int = 0
    passed: int = 0
    failed: int = 0
    errored: int = 0
    abstained: int = 0
    tokens: int | None = None
    cost: float | None = None
    duration: float = 0.0
    experiment_id: str | None = None
    """The experiment this run is one variant of; None for a run of its own."""
    variant: str | None = None
    """The variant of the experiment it ran."""
    unpriced_calls: int | None = None
    """Judge calls whose price was unknown (their cost is not in ``cost``)."""
    cost_unknown: int | None = None
    """Cases whose cost is unknown altogether (none of it is in ``cost``)."""

    @property
    def cost_exact(self) -> bool:
        """True when ``cost`` is the whole cost: no call or case of the run went unpriced."""
        return self.cost is not None and not self.unpriced_calls and not self.cost_unknown

    @property
    def partial(self) -> bool:
        """A run of some of the suite's cases (a filter, one case), or of production traces: never gated,
        never in a baseline.

        Its rates are over the cases it ran (or over live traffic, not the suite's cases), so holding
        it to the whole suite's baseline (or letting it make one) would compare different things.
        """
        return bool(self.config.get("partial") or self.config.get("selectors")) or self.production

    @property
    def production(self) -> bool:
        """A run of production traces judged online (``jurybox serve --otlp``): one per suite and UTC day."""
        return self.config.get("kind") == "production"

    @property
    def finished(self) -> bool:
        """True once the run completed."""
        return self.status == "completed"

    @property
    def pass_rate(self) -> float | None:
        """Passed cases over recorded cases, or None before any case is recorded."""
        return self.passed / self.recorded if self.recorded else None

    @property
    def wall_time(self) -> float | None:
        """Seconds from start to finish, or None while the run is unfinished."""
        if self.finished_at is None:
            return None
        return (self.finished_at - self.started_at).total_seconds()


@dataclass(frozen=True)
class Rate:
    """How many of ``total`` judgments passed."""

    passed: int
    total: int

    @property
    def value(self) -> float:
        """The pass rate in 0..1 (``total`` is never 0 for a stored rate)."""
        return self.passed / self.total


@dataclass(frozen=True)
class CaseOutcome:
    """One case's summary row in a run (what compare and lessons read)."""

    case: str
    status: Status
    score: float | None
    reasoning: str
    error: str | None
    duration: float
    tokens: int | None
    cost: float | None


@dataclass(frozen=True)
class Lesson:
    """What a regression taught (which metric dropped, how far, the failing cases), or what a person wrote.

    A lesson a person added (``origin="manual"``) has no run (``run_id`` is ``""``), metric
    ``"manual"`` and zero figures. ``case`` and ``judge`` narrow what it is about; a retired
    lesson is kept with ``retired_at`` and is no longer handed to runs.
    """

    id: int
    suite: str
    run_id: str
    metric: str
    baseline: float
    current: float
    drop: float
    threshold: float
    failing: list[dict[str, Any]] = field(default_factory=list)
    text: str = ""
    created_at: datetime | None = None
    case: str | None = None
    judge: str | None = None
    origin: str = "regression"
    retired_at: datetime | None = None
    retired_reason: str | None = None

    @property
    def failing_cases(self) -> set[str]:
        """Names of the cases the lesson lists as not passing (a round's ``" (round N)"`` suffix dropped)."""
        names = (str(item.get("case", "")) for item in self.failing if isinstance(item, dict))
        return {name.split(" (round ", 1)[0] for name in names if name}
