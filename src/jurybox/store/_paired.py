"""Runs read case by case for the paired statistics: each case's outcome, scores and verdicts, in two queries.

A run of 10,000 cases is one query over its results (name, status, score, the
trial counts in its metadata) and one over the judgments of its verdict trees
(tiers and the judges directly in them, never rounds or deeper nodes): no
reasoning, no contexts, no JSON trees beyond a result's small metadata.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Engine

from jurybox.core import Status
from jurybox.stats import ALPHA, DEFAULT_RESAMPLES, CaseSide, adjust_for_many, compare_runs
from jurybox.store._calibrations import CalibrationRepository
from jurybox.store._models import RunInfo
from jurybox.store._paired_models import PairedRuns, corrections, has_calibration
from jurybox.store._paired_sql import (
    PairedFigures,
    paired_figures,
    paired_of_figures,
    statistics_json,
    statistics_of,
    trial_counts,
)
from jurybox.store._paired_trials import group_trials
from jurybox.store._repository import Repository
from jurybox.store._run_comparisons import Part, keep, read_kept
from jurybox.store._schema import judgments_table, results_table, runs_table

_PASS, _FAIL, _ERROR, _ABSTAIN = (s.value for s in (Status.PASS, Status.FAIL, Status.ERROR, Status.ABSTAIN))
_DECIDED = {_PASS: True, _FAIL: False}

TRIALS_KEY = "trials"
"""Where a case run several times keeps its counts in its record's metadata: ``{"passes": k, "trials": n}``."""


@dataclass(frozen=True)
class RunSides:
    """Every case of one run as the paired statistics see it.

    Attributes:
        sides: Each case by name: decided outcome, scores per tier and judge, verdicts by path, trials.
        errors: Cases the run ended in ERROR (left out of every test, shown apart).
        abstains: Cases it ended in ABSTAIN.
        tiers: The cascade tiers any case reached (their verdicts are in ``CaseSide.verdicts`` by name).
    """

    sides: Mapping[str, CaseSide] = field(default_factory=dict)
    errors: frozenset[str] = frozenset()
    abstains: frozenset[str] = frozenset()
    tiers: frozenset[str] = frozenset()


class PairedRepository(Repository):
    """Runs compared case by case with paired statistics (``store.paired``, ``browser.comparisons``)."""

    def __init__(self, engine: Engine) -> None:
        super().__init__(engine)
        self._calibrations = CalibrationRepository(engine)

    def sides(self, run_id: str, *, config: Mapping[str, Any] | None = None) -> RunSides:
        """Each case of a run: its decided outcome, score, tier and judge scores, verdicts by path, trials.

        ``config`` is the run's config when the caller has it (its ``trials`` rules group a
        repeated case's trials into one case); None reads it.
        """
        r, j = results_table, judgments_table
        with self._read() as connection:
            # Only the trial counts of each result's metadata: decoding 100,000 whole metadata objects
            # to find them took longer than the rest of the comparison.
            results = connection.execute(
                select(r.c.id, r.c.case_name, r.c.status, r.c.score, r.c.extra[TRIALS_KEY]).where(r.c.run_id == run_id)
            ).all()
            if config is None:
                config = connection.execute(select(runs_table.c.config).where(runs_table.c.id == run_id)).scalar()
            nodes = connection.execute(
                select(j.c.result_id, j.c.path, j.c.depth, j.c.tier, j.c.status, j.c.score).where(
                    j.c.run_id == run_id, j.c.round_index.is_(None), j.c.depth.in_((1, 2))
                )
            ).all()
        tiers: dict[int, dict[str, float]] = {}
        judges: dict[int, dict[str, float]] = {}
        verdicts: dict[int, dict[str, bool]] = {}
        tier_names: set[str] = set()
        for result_id, path, depth, tier, status, score in nodes:
            # Under a cascade (tier set) depth 1 is a tier and depth 2 its judges; otherwise depth 1 are the judges.
            if tier is not None and depth == 1:
                into = tiers
                tier_names.add(path)
            elif (tier is not None and depth == 2) or (tier is None and depth == 1):
                into = judges
            else:
                continue
            if score is not None:
                into.setdefault(result_id, {})[path] = float(score)
            decided = _DECIDED.get(status)
            if decided is not None:
                verdicts.setdefault(result_id, {})[path] = decided
        sides: dict[str, CaseSide] = {}
        errors: set[str] = set()
        abstains: set[str] = set()
        for result_id, name, status, score, trials in results:
            if status == _ERROR:
                errors.add(name)
            elif status == _ABSTAIN:
                abstains.add(name)
            sides[name] = CaseSide(
                _DECIDED.get(status),
                score,
                tiers.get(result_id, {}),
                judges.get(result_id, {}),
                trial_counts(trials),
                verdicts.get(result_id, {}),
            )
        rules = config.get("trials") if isinstance(config, Mapping) else None
        grouped = group_trials(sides, rules if isinstance(rules, Mapping) else {})
        return RunSides(grouped, frozenset(errors), frozenset(abstains), frozenset(tier_names))

    def compare(
        self,
        run_a: RunInfo,
        run_b: RunInfo,
        *,
        alpha: float = ALPHA,
        resamples: int = DEFAULT_RESAMPLES,
        seed: int = 0,
    ) -> PairedRuns:
        """Run B against run A, paired by case, with judge-corrected differences where a calibration is stored."""
        return self.compare_many([run_a, run_b], alpha=alpha, resamples=resamples, seed=seed)[0]

    def compare_many(
        self,
        runs: Sequence[RunInfo],
        *,
        alpha: float = ALPHA,
        resamples: int = DEFAULT_RESAMPLES,
        seed: int = 0,
    ) -> list[PairedRuns]:
        """Every pair of ``runs`` (each later one against each earlier), p-values Holm-adjusted when over two runs.

        Raises:
            ValueError: fewer than two runs.
        """
        if len(runs) < 2:
            raise ValueError("a comparison needs at least two runs")
        by_case = {run.id for run in runs if _groups_trials(run)}
        read: dict[str, RunSides] = {}

        def sides(run: RunInfo) -> RunSides:
            if run.id not in read:
                read[run.id] = self.sides(run.id, config=run.config)
            return read[run.id]

        found: list[PairedRuns] = []
        for i, run_a in enumerate(runs):
            for run_b in runs[i + 1 :]:
                if run_a.id in by_case or run_b.id in by_case or has_calibration(self._calibrations, run_a, run_b):
                    # Grouped trials and calibrated judges need each case: read both runs case by case.
                    a, b = sides(run_a), sides(run_b)
                    comparison = compare_runs(
                        a.sides, b.sides, a_name=run_a.id, b_name=run_b.id, alpha=alpha, resamples=resamples, seed=seed
                    )
                    fixes = corrections(
                        self._calibrations, run_a, run_b, a.sides, b.sides, resamples=resamples, seed=seed
                    )
                    found.append(PairedRuns(run_a, run_b, comparison, _undecided(a), _undecided(b), fixes))
                    continue
                paired = self._from_sql(run_a, run_b, alpha=alpha, resamples=resamples, seed=seed, join=True)
                assert paired is not None  # with join=True it is always computed
                found.append(paired)
        if len(runs) > 2:
            adjusted = adjust_for_many([p.comparison for p in found])
            found = [p.with_adjusted(value) for p, value in zip(found, adjusted, strict=True)]
        return found

    def kept(
        self,
        run_a: RunInfo,
        run_b: RunInfo,
        *,
        alpha: float = ALPHA,
        resamples: int = DEFAULT_RESAMPLES,
        seed: int = 0,
    ) -> PairedRuns | None:
        """``compare(run_a, run_b)`` when it needs no join of the runs (its figures are kept), else None."""
        if not self.by_sql(run_a, run_b):
            return None
        return self._from_sql(run_a, run_b, alpha=alpha, resamples=resamples, seed=seed, join=False)

    def _from_sql(
        self, run_a: RunInfo, run_b: RunInfo, *, alpha: float, resamples: int, seed: int, join: bool
    ) -> PairedRuns | None:
        """B against A from SQL aggregates: the kept statistics, else the kept figures, else (``join``) the join.

        What was computed is kept for next time when both runs are final (``run_comparisons``).
        """
        with self._read() as connection:
            found = statistics_of(
                read_kept(connection, run_a, run_b, "statistics"), alpha=alpha, resamples=resamples, seed=seed
            )
            if found is not None:
                return PairedRuns(run_a, run_b, *found)
            figures = PairedFigures.from_json(read_kept(connection, run_a, run_b, "paired"))
            joined = figures is None
            if figures is None:
                if not join:
                    return None
                figures = paired_figures(connection, run_a.id, run_b.id)
        comparison, undecided_a, undecided_b = paired_of_figures(
            figures, run_a.id, run_b.id, alpha=alpha, resamples=resamples, seed=seed
        )
        kept = statistics_json(comparison, undecided_a, undecided_b, alpha=alpha, resamples=resamples, seed=seed)
        parts: dict[Part, dict[str, Any]] = {"statistics": kept}
        if joined:
            parts["paired"] = figures.to_json()
        keep(self._engine, run_a, run_b, parts)
        return PairedRuns(run_a, run_b, comparison, undecided_a, undecided_b)

    def by_sql(self, run_a: RunInfo, run_b: RunInfo) -> bool:
        """True when B against A is computed from SQL aggregates: no grouped trials, no calibrated judge."""
        return not (_groups_trials(run_a) or _groups_trials(run_b) or has_calibration(self._calibrations, run_a, run_b))


def _groups_trials(run: RunInfo) -> bool:
    """True when the run's config groups repeated trials into cases (``trials`` rules)."""
    rules = run.config.get("trials") if isinstance(run.config, Mapping) else None
    return isinstance(rules, Mapping) and bool(rules)


def _undecided(run: RunSides) -> dict[str, int]:
    return {"error": len(run.errors), "abstain": len(run.abstains)}


_trials = trial_counts  # the name the tests and older callers use
