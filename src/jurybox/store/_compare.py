"""Two runs side by side: flipped cases, score deltas, new errors, cost and latency."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from jurybox.core import Status
from jurybox.store._models import CaseOutcome, RunInfo
from jurybox.store._store import Store


@dataclass(frozen=True)
class CaseChange:
    """One case in run A (``before``) and run B (``after``); either side is None when the case is missing."""

    case: str
    before: CaseOutcome | None
    after: CaseOutcome | None

    @property
    def flipped(self) -> bool:
        """Passed in one run and not in the other."""
        if self.before is None or self.after is None:
            return False
        return (self.before.status is Status.PASS) != (self.after.status is Status.PASS)

    @property
    def fixed(self) -> bool:
        return self.flipped and self.after is not None and self.after.status is Status.PASS

    @property
    def broke(self) -> bool:
        return self.flipped and self.before is not None and self.before.status is Status.PASS

    @property
    def status_changed(self) -> bool:
        return self.before is not None and self.after is not None and self.before.status is not self.after.status

    @property
    def score_delta(self) -> float | None:
        """B's score minus A's (0..1 scale), or None when either has no score."""
        if self.before is None or self.after is None or self.before.score is None or self.after.score is None:
            return None
        return self.after.score - self.before.score

    @property
    def new_error(self) -> bool:
        """ERROR in run B and not in run A."""
        return (
            self.after is not None
            and self.after.status is Status.ERROR
            and (self.before is None or self.before.status is not Status.ERROR)
        )


@dataclass(frozen=True)
class Latency:
    """Case durations of one run, in seconds."""

    mean: float | None
    p50: float | None
    p95: float | None

    @classmethod
    def of(cls, durations: Sequence[float]) -> Latency:
        if not durations:
            return cls(None, None, None)
        ordered = sorted(durations)
        p95 = ordered[min(len(ordered) - 1, max(0, round(0.95 * len(ordered)) - 1))]
        return cls(statistics.fmean(ordered), statistics.median(ordered), p95)


@dataclass(frozen=True)
class RunComparison:
    """Run A against run B, case by case."""

    run_a: RunInfo
    run_b: RunInfo
    changes: tuple[CaseChange, ...]
    latency_a: Latency
    latency_b: Latency

    @property
    def flipped(self) -> list[CaseChange]:
        return [c for c in self.changes if c.flipped]

    @property
    def status_changes(self) -> list[CaseChange]:
        return [c for c in self.changes if c.status_changed]

    @property
    def new_errors(self) -> list[CaseChange]:
        return [c for c in self.changes if c.new_error]

    @property
    def score_changes(self) -> list[CaseChange]:
        """Cases whose score moved, largest move first."""
        moved = [c for c in self.changes if c.score_delta]
        return sorted(moved, key=lambda c: -abs(c.score_delta or 0.0))

    @property
    def only_in_a(self) -> list[str]:
        return [c.case for c in self.changes if c.after is None]

    @property
    def only_in_b(self) -> list[str]:
        return [c.case for c in self.changes if c.before is None]

    @property
    def cost_delta(self) -> float | None:
        """B's cost minus A's; None unless both are exact (a lower bound minus another says nothing)."""
        if not (self.run_a.cost_exact and self.run_b.cost_exact):
            return None
        assert self.run_a.cost is not None and self.run_b.cost is not None
        return self.run_b.cost - self.run_a.cost


def _relative(ref: str) -> bool:
    """``last``, ``latest`` or ``last~N``: a run named by its place among the newest."""
    return ref.strip().startswith(("last", "latest"))


def resolve_runs(store: Store, refs: list[str]) -> list[RunInfo]:
    """The runs ``refs`` name, ``last`` and ``last~N`` counted among the runs of one suite.

    That suite is the one of the last run named by id (``compare 20261121-0949 last~1``),
    else the latest run's (``compare last~1``): never the runs of every suite mixed.
    """
    explicit = [store.runs.resolve(ref) for ref in refs if not _relative(ref)]
    suite = explicit[-1].suite if explicit else None
    if suite is None and any(_relative(ref) for ref in refs):
        latest = store.runs.latest()
        suite = latest.suite if latest is not None else None
    found = iter(explicit)
    return [store.runs.resolve(ref, suite=suite) if _relative(ref) else next(found) for ref in refs]


def compare_runs(store: Store, run_a: str, run_b: str) -> RunComparison:
    """Compare two runs (ids, unique prefixes, ``last`` or ``last~N``: see ``resolve_runs``) case by case."""
    info_a, info_b = resolve_runs(store, [run_a, run_b])
    outcomes_a = store.results.outcomes(info_a.id)
    outcomes_b = store.results.outcomes(info_b.id)
    by_name_a = {o.case: o for o in outcomes_a}
    by_name_b = {o.case: o for o in outcomes_b}
    changes = [CaseChange(o.case, by_name_a.get(o.case), o) for o in outcomes_b]
    changes.extend(CaseChange(o.case, o, None) for o in outcomes_a if o.case not in by_name_b)
    return RunComparison(
        info_a,
        info_b,
        tuple(changes),
        Latency.of([o.duration for o in outcomes_a]),
        Latency.of([o.duration for o in outcomes_b]),
    )
