"""An experiment as its views show it: one column per variant, the cases they disagree on, paired comparisons.

Read from the store (the experiment's runs, one per variant) and computed with
``jurybox.stats``: each variant's pass rate with a Wilson interval, its cost and
latency; each variant against the first (the baseline) case by case, with a
paired bootstrap interval and an exact McNemar p-value, Holm-adjusted when more
than one variant is compared with it. Every renderer (console, JSON, Markdown,
HTML) reads this one model, so they carry the same figures.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from jurybox.core import CaseRecord, Status
from jurybox.experiments._outcomes import CaseOutcome, outcomes
from jurybox.stats import ALPHA, PairedComparison, adjust_for_many, compare_runs, p_text, wilson_interval
from jurybox.store import RunInfo


@dataclass(frozen=True)
class VariantColumn:
    """One variant's column: its run and its cases' outcomes.

    Attributes:
        name: The variant's name (the suite's name for an experiment of trials only).
        run_id: Its run in the store.
        status: Its run's status (``completed``, ``interrupted``, ``running``...).
        cases: Each case's outcome, by case name, in plan order.
        changes: What the variant changes of the agent, as the suite wrote it.
    """

    name: str
    run_id: str
    status: str
    cases: Mapping[str, CaseOutcome]
    changes: Mapping[str, Any] = field(default_factory=dict)

    def count(self, status: Status) -> int:
        return sum(1 for outcome in self.cases.values() if outcome.status is status)

    @property
    def decided(self) -> int:
        return self.count(Status.PASS) + self.count(Status.FAIL)

    @property
    def pass_rate(self) -> float | None:
        """Passed cases over decided cases: ERROR and ABSTAIN are counted apart, never as a fail."""
        return self.count(Status.PASS) / self.decided if self.decided else None

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.count(Status.PASS), self.decided)

    @property
    def cost(self) -> float | None:
        """What its cases cost; None when no case reported a cost (unknown, not zero)."""
        known = [o.cost for o in self.cases.values() if o.cost is not None]
        return sum(known) if known else None

    @property
    def latency(self) -> float | None:
        """The median seconds a case (each trial) took."""
        per_trial = [o.duration / max(1, o.passed + o.failed + o.errored + o.abstained) for o in self.cases.values()]
        return statistics.median(per_trial) if per_trial else None

    def to_dict(self) -> dict[str, Any]:
        low, high = self.interval
        return {
            "name": self.name,
            "run_id": self.run_id,
            "status": self.status,
            "changes": dict(self.changes),
            "cases": len(self.cases),
            "passed": self.count(Status.PASS),
            "failed": self.count(Status.FAIL),
            "errored": self.count(Status.ERROR),
            "abstained": self.count(Status.ABSTAIN),
            "decided": self.decided,
            "pass_rate": self.pass_rate,
            "interval": {"low": low, "high": high, "confidence": 0.95, "method": "wilson"},
            "cost": self.cost,
            "latency": self.latency,
        }


@dataclass(frozen=True)
class Comparison:
    """One variant against the baseline, with the Holm-adjusted p-value when several were compared."""

    paired: PairedComparison
    adjusted_p: float | None
    adjusted: bool

    @property
    def p_value(self) -> float | None:
        return self.adjusted_p if self.adjusted else self.paired.pass_rate.p_value

    @property
    def significant(self) -> bool:
        return self.p_value is not None and self.p_value < self.paired.pass_rate.alpha

    def describe(self) -> str:
        """The finding in plain words, with the pairs it rests on and the adjustment made."""
        text = self.paired.pass_rate.describe(self.paired.a, self.paired.b)
        if self.adjusted and self.adjusted_p is not None:
            text += f"; Holm-adjusted p {p_text(self.adjusted_p)}"
        return text

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.paired.to_dict(),
            "summary": self.describe(),
            "adjusted_p": self.adjusted_p if self.adjusted else None,
            "adjustment": "holm" if self.adjusted else None,
            "significant": self.significant,
        }


@dataclass(frozen=True)
class ExperimentView:
    """An experiment read from the store.

    Attributes:
        id: The experiment's id.
        suite: The suite it is an experiment of.
        columns: One per variant that has a run, in the suite's order; the first is the baseline.
        missing: Variants the experiment planned that have no run yet.
        comparisons: Each other variant against the baseline.
    """

    id: str
    suite: str
    columns: tuple[VariantColumn, ...]
    missing: tuple[str, ...] = ()
    comparisons: tuple[Comparison, ...] = ()

    @property
    def cases(self) -> list[str]:
        """Every case of any variant, in the first variant's order, then any others."""
        seen: dict[str, None] = {}
        for column in self.columns:
            seen.update(dict.fromkeys(column.cases))
        return list(seen)

    def disagreements(self) -> list[str]:
        """Cases whose status is not the same in every variant that has them (or that some variant lacks)."""
        found = []
        for case in self.cases:
            statuses = {c.cases[case].status if case in c.cases else None for c in self.columns}
            if len(statuses) > 1:
                found.append(case)
        return found

    @property
    def has_trials(self) -> bool:
        return any(o.rule is not None for c in self.columns for o in c.cases.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "experiment": self.id,
            "suite": self.suite,
            "baseline": self.columns[0].name if self.columns else None,
            "variants": [c.to_dict() for c in self.columns],
            "missing": list(self.missing),
            "comparisons": [c.to_dict() for c in self.comparisons],
            "disagreements": [
                {
                    "case": case,
                    "statuses": {
                        c.name: (c.cases[case].status.value if case in c.cases else None) for c in self.columns
                    },
                }
                for case in self.disagreements()
            ],
            "cases": {
                c.name: [o.to_dict() for o in c.cases.values()]
                for c in self.columns
                if any(o.rule for o in c.cases.values())
            },
        }


def build_view(
    experiment: str,
    runs: Sequence[RunInfo],
    records_of: Any,
    *,
    alpha: float = ALPHA,
    resamples: int = 2000,
) -> ExperimentView:
    """The view of an experiment from its runs and a way to read each run's records.

    Args:
        experiment: Its id.
        runs: Its runs, oldest first (a variant resumed keeps one run; a variant run twice, its latest counts).
        records_of: ``records_of(run_id) -> Iterable[CaseRecord]`` (the store's ``results.records``).
        alpha: The level comparisons are called significant at.
        resamples: Bootstrap resamples per interval.
    """
    latest: dict[str, RunInfo] = {}
    for run in runs:
        latest[run.variant or run.suite] = run
    plan = _planned(runs)
    order = [name for name in plan if name in latest] + [name for name in latest if name not in plan]
    columns = []
    for name in order:
        run = latest[name]
        rules = run.config.get("trials") if isinstance(run.config.get("trials"), Mapping) else {}
        records: list[CaseRecord] = list(records_of(run.id))
        info = run.config.get("experiment")
        changes = info.get("changes", {}) if isinstance(info, Mapping) else {}
        columns.append(VariantColumn(name, run.id, run.status, outcomes(records, rules or {}), changes))
    suite = _suite_of(runs)
    missing = tuple(name for name in plan if name not in latest)
    return ExperimentView(experiment, suite, tuple(columns), missing, _compare(columns, alpha, resamples))


def _compare(columns: Sequence[VariantColumn], alpha: float, resamples: int) -> tuple[Comparison, ...]:
    if len(columns) < 2:
        return ()
    base = columns[0]
    a = {name: o.side() for name, o in base.cases.items()}
    paired = [
        compare_runs(
            a,
            {name: o.side() for name, o in other.cases.items()},
            a_name=base.name,
            b_name=other.name,
            alpha=alpha,
            resamples=resamples,
        )
        for other in columns[1:]
    ]
    several = len(paired) > 1
    adjusted = adjust_for_many(paired) if several else [p.pass_rate.p_value for p in paired]
    return tuple(Comparison(p, q, several) for p, q in zip(paired, adjusted, strict=True))


def _planned(runs: Sequence[RunInfo]) -> list[str]:
    for run in reversed(runs):
        info = run.config.get("experiment")
        if isinstance(info, Mapping) and isinstance(info.get("variants"), list) and info["variants"]:
            return [str(v) for v in info["variants"]]
    return []


def _suite_of(runs: Sequence[RunInfo]) -> str:
    for run in runs:
        info = run.config.get("experiment")
        if isinstance(info, Mapping) and isinstance(info.get("suite"), str):
            return str(info["suite"])
    return runs[0].suite if runs else ""
