"""Baselines and regressions: is this run worse than the suite's recent past?

For every metric of a run (``overall``: the case pass rate; and one pass rate
per cascade tier) the baseline is the mean of that metric over the last
``window`` earlier runs of the suite the baseline policy admits (by default
completed runs that met every target: a broken run never becomes the bar).
The drop is *relative*: ``(baseline - current) / baseline``, so a fall from
90% to 76.5% is a 15% drop. A drop at or above the metric's threshold is a
regression; while fewer than ``window`` earlier runs have the metric the suite
is warming up: a drop is only a warning, and the metric's target gates instead
(there is no baseline yet to hold it to).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, cast

if TYPE_CHECKING:
    from jurybox.store._models import Rate, RunInfo
    from jurybox.store._store import Store

CheckState = Literal["ok", "regression", "warmup", "warning", "partial"]
"""``partial``: a run of some of the cases (a filter), never held to the suite's baseline."""

BaselinePolicy = Literal["passing", "completed", "all"]
BASELINE_POLICIES: tuple[BaselinePolicy, ...] = ("passing", "completed", "all")
"""Which earlier runs may enter a baseline: ``passing`` (default) completed runs that met every target;
``completed`` every completed run; ``all`` every finished run, interrupted and failed ones too."""

BASELINE_LOOKBACK = 10
"""Earlier runs examined for a baseline, as a multiple of ``window``: under ``passing`` a long broken
streak leaves the suite warming up rather than reading its whole history on every check."""

_FINISHED = ("completed", "interrupted", "failed")

DEFAULT_THRESHOLDS: Mapping[str, float] = MappingProxyType({"deterministic": 0.10, "llm_*": 0.20, "*": 0.15})
"""Relative drop that counts as a regression, by metric name or glob; ``*`` covers the rest (incl. overall)."""

DEFAULT_TARGETS: Mapping[str, float] = MappingProxyType(
    {"deterministic": 0.95, "llm_operations": 0.80, "llm_judge": 0.70}
)
"""Pass rate each tier should reach; reported beside the regression check."""

_EPSILON = 1e-9  # so a drop of exactly the threshold counts despite float rounding


def _lookup(table: Mapping[str, float], metric: str) -> float | None:
    if metric in table:
        return table[metric]
    patterns = [p for p in table if any(ch in p for ch in "*?[") and fnmatch.fnmatchcase(metric, p)]
    if not patterns:
        return None
    # The most specific pattern wins: "llm_*" before "*".
    return table[max(patterns, key=lambda p: len(p.replace("*", "")))]


@dataclass(frozen=True)
class RegressionPolicy:
    """How a run is judged against its baseline.

    Attributes:
        window: How many earlier completed runs make the baseline (rolling mean).
        thresholds: Relative drop (0..1) that is a regression, by metric name
            or glob; the most specific match wins, ``*`` is the fallback.
        targets: Pass rate (0..1) each metric should reach, by name or glob. During
            warm-up a missed target fails the gate.
        baseline: Which earlier runs may enter the baseline: ``passing`` (completed and
            meeting every target), ``completed`` or ``all`` (see ``BASELINE_POLICIES``).
    """

    window: int = 5
    thresholds: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_THRESHOLDS))
    targets: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_TARGETS))
    baseline: BaselinePolicy = "passing"

    def __post_init__(self) -> None:
        if self.baseline not in BASELINE_POLICIES:
            valid = ", ".join(BASELINE_POLICIES)
            raise ValueError(f"baseline policy must be one of {valid}, got {self.baseline!r}")
        if isinstance(self.window, bool) or not isinstance(self.window, int) or self.window < 1:
            raise ValueError(f"baseline window must be a whole number of runs >= 1, got {self.window!r}")
        for name, table, low_open in (("threshold", self.thresholds, True), ("target", self.targets, False)):
            for metric, value in table.items():
                bad = isinstance(value, bool) or not isinstance(value, int | float)
                if bad or not (0.0 < value <= 1.0 if low_open else 0.0 <= value <= 1.0):
                    raise ValueError(f"{name} for {metric!r} must be a fraction in 0..1 (0.15 = 15%), got {value!r}")
        object.__setattr__(self, "thresholds", MappingProxyType(dict(self.thresholds)))
        object.__setattr__(self, "targets", MappingProxyType(dict(self.targets)))
        # Each metric's threshold and target, looked up once: a 1,000-run trend asks for them per run.
        object.__setattr__(self, "_looked_up", {})

    def threshold_for(self, metric: str) -> float:
        """The regression threshold of ``metric`` (0.15 when nothing matches)."""
        return self._looked_up_pair(metric)[0]

    def target_for(self, metric: str) -> float | None:
        """The target pass rate of ``metric``, or None when it has none."""
        return self._looked_up_pair(metric)[1]

    def _looked_up_pair(self, metric: str) -> tuple[float, float | None]:
        cache: dict[str, tuple[float, float | None]] = self.__dict__["_looked_up"]
        found = cache.get(metric)
        if found is None:
            threshold = _lookup(self.thresholds, metric)
            found = (DEFAULT_THRESHOLDS["*"] if threshold is None else threshold, _lookup(self.targets, metric))
            cache[metric] = found
        return found

    def meets_targets(self, metrics: Mapping[str, Rate]) -> bool:
        """Whether every metric with a target reaches it."""
        for name, rate in metrics.items():
            target = self.target_for(name)
            if target is not None and rate.value + _EPSILON < target:
                return False
        return True

    def admits(self, status: str, metrics: Mapping[str, Rate], *, partial: bool = False) -> bool:
        """Whether an earlier run that ended with ``status`` and ``metrics`` may enter a baseline.

        A ``partial`` run (some of the cases) never does: its rates are not the suite's.
        """
        if partial:
            return False
        if self.baseline == "all":
            return status in _FINISHED
        if status != "completed":
            return False
        return self.baseline == "completed" or self.meets_targets(metrics)

    def with_overrides(
        self,
        *,
        window: int | None = None,
        thresholds: Mapping[str, float] | None = None,
        targets: Mapping[str, float] | None = None,
        baseline: str | None = None,
    ) -> RegressionPolicy:
        """A copy with some thresholds, targets, the window or the baseline policy replaced (others kept)."""
        return RegressionPolicy(
            window=self.window if window is None else window,
            thresholds={**self.thresholds, **(thresholds or {})},
            targets={**self.targets, **(targets or {})},
            baseline=self.baseline if baseline is None else cast(BaselinePolicy, baseline),  # checked on creation
        )


@dataclass(frozen=True)
class MetricCheck:
    """One metric of a run against its baseline.

    ``drop`` is relative to the baseline (0.2 = the rate fell by a fifth) and
    negative for an improvement; it is None with no baseline yet.
    """

    metric: str
    current: Rate
    baseline: float | None
    baseline_runs: int
    drop: float | None
    threshold: float
    target: float | None
    state: CheckState

    @property
    def target_met(self) -> bool | None:
        """Whether the current rate reaches the target (None without a target)."""
        return None if self.target is None else self.current.value + _EPSILON >= self.target


@dataclass(frozen=True)
class RunCheck:
    """Every metric of one run checked against its suite's baselines."""

    run: RunInfo
    policy: RegressionPolicy
    metrics: tuple[MetricCheck, ...]
    lessons_written: int = 0

    @property
    def regressions(self) -> list[MetricCheck]:
        return [m for m in self.metrics if m.state == "regression"]

    @property
    def warnings(self) -> list[MetricCheck]:
        """Drops during warm-up: reported, never failing."""
        return [m for m in self.metrics if m.state == "warning"]

    @property
    def warming_up(self) -> bool:
        return any(m.state in ("warmup", "warning") for m in self.metrics)

    @property
    def targets_missed(self) -> list[MetricCheck]:
        return [m for m in self.metrics if m.target_met is False]

    @property
    def warmup_targets_missed(self) -> list[MetricCheck]:
        """Metrics still warming up that miss their target: with no baseline to hold them to, these fail."""
        return [m for m in self.targets_missed if m.state in ("warmup", "warning")]

    @property
    def ok(self) -> bool:
        """True when no metric regressed and none missed its target while warming up."""
        return not self.regressions and not self.warmup_targets_missed


def relative_drop(baseline: float, current: float) -> float:
    """``(baseline - current) / baseline``; 0 for a zero baseline (nothing to drop from)."""
    return 0.0 if baseline <= 0.0 else (baseline - current) / baseline


def check_metric(metric: str, current: Rate, history: list[float], policy: RegressionPolicy) -> MetricCheck:
    """Judge one metric: ``history`` holds its values in earlier runs, newest first, at most ``window``."""
    threshold = policy.threshold_for(metric)
    target = policy.target_for(metric)
    if not history:
        return MetricCheck(metric, current, None, 0, None, threshold, target, "warmup")
    baseline = sum(history) / len(history)
    drop = relative_drop(baseline, current.value)
    dropped = drop + _EPSILON >= threshold
    if len(history) < policy.window:
        state: CheckState = "warning" if dropped else "warmup"
    else:
        state = "regression" if dropped else "ok"
    return MetricCheck(metric, current, baseline, len(history), drop, threshold, target, state)


def partial_check(metric: str, current: Rate, policy: RegressionPolicy) -> MetricCheck:
    """A metric of a partial run: shown with its target, never compared with the suite's baseline."""
    return MetricCheck(
        metric, current, None, 0, None, policy.threshold_for(metric), policy.target_for(metric), "partial"
    )


def check_run(store: Store, run_id: str, policy: RegressionPolicy, *, record_lessons: bool = True) -> RunCheck:
    """Check every metric of a run against the last ``window`` earlier runs its baseline policy admits.

    With ``record_lessons`` each regression is written as a lesson (once per
    run and metric, so checking again adds nothing). A partial run (``RunInfo.partial``) is
    not checked: each metric's state is ``partial``, and it writes no lesson.
    """
    run = store.runs.get(run_id)
    current = store.metrics.rates(run_id)
    if run.partial:
        return RunCheck(run, policy, tuple(partial_check(name, rate, policy) for name, rate in current.items()))
    earlier = [metrics for _, metrics in baseline_runs(store, run, policy)]
    checks = tuple(
        check_metric(name, rate, [m[name].value for m in earlier if name in m], policy)
        for name, rate in current.items()
    )
    written = 0
    if record_lessons:
        for check in checks:
            if check.state == "regression" and _write_lesson(store, run, check):
                written += 1
    return RunCheck(run, policy, checks, written)


def baseline_runs(store: Store, run: RunInfo, policy: RegressionPolicy) -> list[tuple[RunInfo, dict[str, Rate]]]:
    """The last ``window`` earlier runs of the suite its baseline policy admits, newest first, with their rates."""
    statuses = _FINISHED if policy.baseline == "all" else ("completed",)
    earlier: list[tuple[RunInfo, dict[str, Rate]]] = []
    for past in store.runs.before(run, policy.window * BASELINE_LOOKBACK, statuses=statuses):
        if past.partial:  # a run of some of the cases is no baseline for the whole suite
            continue
        metrics = store.metrics.rates(past.id)
        if policy.admits(past.status, metrics):
            earlier.append((past, metrics))
            if len(earlier) == policy.window:
                break
    return earlier


def _write_lesson(store: Store, run: RunInfo, check: MetricCheck) -> bool:
    assert check.baseline is not None and check.drop is not None
    failing, total = store.metrics.failing(run.id, check.metric)
    return store.lessons.add(
        run.id,
        metric=check.metric,
        baseline=check.baseline,
        current=check.current.value,
        drop=check.drop,
        threshold=check.threshold,
        failing=failing,
        text=lesson_text(run, check, failing, total),
    )


def _clip(text: str, limit: int = 300) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def lesson_text(run: RunInfo, check: MetricCheck, failing: list[dict[str, Any]], total: int) -> str:
    """A lesson in words, short enough to paste into a prompt."""
    assert check.baseline is not None and check.drop is not None
    what = "overall pass rate" if check.metric == "overall" else f"tier {check.metric!r} pass rate"
    lines = [
        f"Suite {run.suite!r}: the {what} fell to {check.current.value:.1%} "
        f"({check.current.passed}/{check.current.total}) in run {run.id}, from a baseline of "
        f"{check.baseline:.1%} over {check.baseline_runs} runs "
        f"(a {check.drop:.1%} relative drop; threshold {check.threshold:.0%}).",
    ]
    if failing:
        lines.append("Cases that did not pass, and why:")
        lines.extend(
            f"- {item['case']} [{item['status']}]: {_clip(str(item['reason'] or '(no reason given)'))}"
            for item in failing
        )
        if total > len(failing):
            lines.append(f"- ... and {total - len(failing)} more")
    return "\n".join(lines)
