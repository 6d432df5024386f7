"""The gate that knows noise: a regression only when the drop against the baseline runs is significant.

The baseline runs are the ones seed 003's threshold rule averages (the last
``window`` earlier runs of the suite its baseline policy admits). Every metric
that rule checks (``overall``, then each cascade tier) is tested on the cases
themselves: each case the run decided is matched with the same case's decided
outcomes in the baseline runs (``jurybox.stats.compare_to_baseline``), and the
metrics' p-values are Holm-adjusted together, so checking four tiers does not
raise the chance of a false alarm. A metric is

- ``regression``: it dropped and the adjusted p-value is below ``alpha``;
- ``inconclusive``: no significant change, but the interval still holds a drop of
  ``detectable`` (5 points) or more, or there are too few cases to test: the
  finding says about how many cases it would take;
- ``ok``: no significant drop and the interval rules out one of ``detectable``
  (or it improved);
- ``warmup``: no baseline run has it yet.

Added cases (not in any baseline run), removed ones (in a baseline run, not in
this one) and undecided ones (ERROR or ABSTAIN on either side) are counted and
shown, never tested as failures.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from jurybox.stats import ALPHA, DETECTABLE, BaselineDifference, CaseSide, compare_to_baseline, holm
from jurybox.store._baselines import RegressionPolicy, baseline_runs
from jurybox.store._models import RunInfo
from jurybox.store._paired import RunSides

if TYPE_CHECKING:
    from jurybox.store._store import Store

SignificanceState = Literal["ok", "regression", "inconclusive", "warmup"]
OVERALL = "overall"


@dataclass(frozen=True)
class SignificanceCheck:
    """One metric of a run tested against its baseline runs' per-case outcomes.

    Attributes:
        metric: ``overall`` or a tier's name.
        finding: The paired difference, its interval and its p-value.
        adjusted_p: The p-value Holm-adjusted over the run's metrics.
        state: ``ok``, ``regression``, ``inconclusive`` or ``warmup``.
        added: Cases the run decided that no baseline run has.
        removed: Cases a baseline run has that this run lacks.
        undecided: Cases in both left out because a side could not decide them.
    """

    metric: str
    finding: BaselineDifference
    adjusted_p: float | None
    state: SignificanceState
    added: int
    removed: int
    undecided: int

    def describe(self) -> str:
        if self.state == "warmup":
            return f"{self.metric}: no baseline run to compare with (warm-up)"
        text = self.finding.describe("this run")
        if self.adjusted_p is not None and self.finding.p_value is not None and self.adjusted_p != self.finding.p_value:
            shown = "< 0.001" if self.adjusted_p < 0.001 else f"= {self.adjusted_p:.3f}"
            text += f"; Holm-adjusted p {shown}"
        return f"{self.metric}: {text}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "state": self.state,
            **self.finding.to_dict(),
            "adjusted_p": self.adjusted_p,
            "added": self.added,
            "removed": self.removed,
            "undecided": self.undecided,
            "summary": self.describe(),
        }


@dataclass(frozen=True)
class SignificanceResult:
    """Every metric of one run tested against its baseline runs.

    Attributes:
        run: The run gated.
        baseline: The baseline runs its cases were paired with, newest first.
        alpha: The level a drop is called significant at.
        metrics: ``overall``, then each tier.
        errors: The run's cases that ended in ERROR (never a pass or a fail in a test).
        abstains: Its cases that ended in ABSTAIN.
    """

    run: RunInfo
    baseline: tuple[RunInfo, ...]
    alpha: float
    metrics: tuple[SignificanceCheck, ...]
    errors: int = 0
    abstains: int = 0

    @property
    def regressions(self) -> list[SignificanceCheck]:
        return [m for m in self.metrics if m.state == "regression"]

    @property
    def inconclusive(self) -> list[SignificanceCheck]:
        return [m for m in self.metrics if m.state == "inconclusive"]

    @property
    def ok(self) -> bool:
        return not self.regressions

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run.id,
            "baseline_runs": [run.id for run in self.baseline],
            "alpha": self.alpha,
            "metrics": [m.to_dict() for m in self.metrics],
            "errors": self.errors,
            "abstains": self.abstains,
            "regression": bool(self.regressions),
        }


def check_significance(
    store: Store,
    run_id: str,
    policy: RegressionPolicy,
    *,
    alpha: float = ALPHA,
    detectable: float = DETECTABLE,
) -> SignificanceResult:
    """Test every metric of a run against the per-case outcomes of its baseline runs.

    Raises:
        ValueError: alpha or detectable outside (0, 1).
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be strictly between 0 and 1, got {alpha!r}")
    if not 0.0 < detectable < 1.0:
        raise ValueError(f"the detectable difference must be strictly between 0 and 1, got {detectable!r}")
    run = store.runs.get(run_id)
    baseline = tuple(past for past, _ in baseline_runs(store, run, policy))
    current = store.paired.sides(run.id)
    earlier = [store.paired.sides(past.id) for past in baseline]
    metrics = [OVERALL, *sorted(current.tiers)]
    tested = [_test(metric, current, earlier, alpha, detectable) for metric in metrics]
    present = [finding.p_value for finding, *_ in tested if finding.p_value is not None]
    adjusted = iter(holm(present))
    checks = []
    for metric, (finding, seen, added, removed, undecided) in zip(metrics, tested, strict=True):
        p = next(adjusted) if finding.p_value is not None else None
        checks.append(
            SignificanceCheck(
                metric, finding, p, _state(finding, p, seen, alpha, detectable), added, removed, undecided
            )
        )
    return SignificanceResult(run, baseline, alpha, tuple(checks), len(current.errors), len(current.abstains))


def _test(
    metric: str, current: RunSides, earlier: Sequence[RunSides], alpha: float, detectable: float
) -> tuple[BaselineDifference, bool, int, int, int]:
    """The metric's finding, whether any baseline run has it, and the added, removed and undecided counts."""
    seen_before: set[str] = set()
    cases: list[tuple[int, int, bool]] = []
    seen = False
    undecided = 0
    for name, side in current.sides.items():
        mine = _outcome(side, metric)
        theirs = [_outcome(run.sides[name], metric) for run in earlier if name in run.sides]
        if theirs:
            seen_before.add(name)
        decided = [o for o in theirs if o is not None]
        seen = seen or bool(decided)
        if not theirs:
            continue
        if mine is None or not decided:
            undecided += 1
            continue
        cases.append((sum(decided), len(decided), mine))
    seen = seen or any(_outcome(s, metric) is not None for run in earlier for s in run.sides.values())
    removed = len({name for run in earlier for name in run.sides} - set(current.sides))
    added = len(set(current.sides) - seen_before)
    finding = compare_to_baseline(cases, alpha=alpha, detectable=detectable)
    return finding, seen, added, removed, undecided


def _outcome(side: CaseSide, metric: str) -> bool | None:
    return side.passed if metric == OVERALL else side.verdicts.get(metric)


def _state(
    finding: BaselineDifference, adjusted: float | None, seen: bool, alpha: float, detectable: float
) -> SignificanceState:
    if not seen:
        return "warmup"
    if adjusted is None or finding.difference is None or finding.interval is None:
        return "inconclusive"
    if adjusted < alpha:
        return "regression" if finding.difference < 0 else "ok"
    return "inconclusive" if finding.interval.low <= -detectable else "ok"
