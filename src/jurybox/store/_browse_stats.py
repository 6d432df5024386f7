"""Run stats: a run's pass rates overall and per tier, per-judge rates, latency and tags, and the gate's verdict.

The figures of many runs (a trend of 1,000 runs) are computed together: one
query per aggregate grouped by run, in chunks, instead of a few queries per
run. A final run's stats are kept in the browser's LRU cache.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Text, case, cast, func, select
from sqlalchemy.engine import Connection, Engine

from jurybox.core import Status
from jurybox.store._baselines import BASELINE_LOOKBACK, MetricCheck, RegressionPolicy, check_metric, partial_check
from jurybox.store._browse_cache import LruCache, final_key, is_final
from jurybox.store._browse_models import JudgeStats, RunStats, TierStats, tag_list
from jurybox.store._browse_runs import runs_before
from jurybox.store._cases import chunked
from jurybox.store._compare import Latency
from jurybox.store._models import Rate, RunInfo, as_utc
from jurybox.store._repository import Repository
from jurybox.store._schema import judgments_table, results_table

STATS_CHUNK = 200
"""Runs whose stats one batch of queries computes (each query lists their ids)."""


def check_metrics(
    current: dict[str, Rate], earlier: Sequence[dict[str, Rate]], policy: RegressionPolicy
) -> list[MetricCheck]:
    """The gate's verdict on each metric of ``current`` against ``earlier`` runs' metrics (newest first)."""
    return [
        check_metric(name, rate, [m[name].value for m in earlier if name in m], policy)
        for name, rate in current.items()
    ]


class StatsBrowser(Repository):
    """Aggregates over a run's ``results`` and ``judgments`` rows, cached once the run is final (``browser.stats``)."""

    def __init__(self, engine: Engine, *, cache_size: int) -> None:
        super().__init__(engine)
        self._cache = LruCache(cache_size)

    def of(self, run: RunInfo) -> RunStats:
        """Tier and judge pass rates, mean scores, latency percentiles and tags of a run."""
        return self._cache.get(
            ("stats", *final_key(run)), lambda: self._batch_stats([run.id])[run.id], keep=is_final(run)
        )

    def warm(self, runs: Sequence[RunInfo]) -> None:
        """Compute the stats of many final runs not yet cached in a few queries instead of a few per run."""
        missing = [run for run in runs if is_final(run) and ("stats", *final_key(run)) not in self._cache]
        for part in chunked(missing, STATS_CHUNK):
            computed = self._batch_stats([run.id for run in part])
            for run in part:
                self._cache.put(("stats", *final_key(run)), computed[run.id])

    def check(self, run: RunInfo, policy: RegressionPolicy) -> list[MetricCheck]:
        """The gate's verdict on ``run`` (``MetricCheck`` per metric), as ``jurybox gate`` computes it."""
        current = self.of(run).metrics
        if run.partial:
            return [partial_check(name, rate, policy) for name, rate in current.items()]
        with self._read() as connection:
            candidates = runs_before(
                connection, run, completed=policy.baseline != "all", limit=policy.window * BASELINE_LOOKBACK
            )
        self.warm(candidates)
        admitted = [
            metrics
            for metrics, past in ((self.of(past).metrics, past) for past in candidates)
            if policy.admits(past.status, metrics, partial=past.partial)
        ]
        return check_metrics(current, admitted[: policy.window], policy)

    def _batch_stats(self, run_ids: list[str]) -> dict[str, RunStats]:
        """The stats of several runs: one query per aggregate, grouped by run."""
        with self._read() as connection:
            rows = _StatsRows.read(connection, run_ids)
        return {run_id: rows.stats_of(run_id) for run_id in run_ids}


class _StatsRows:
    """The grouped rows of one batch of runs, and how they become each run's ``RunStats``."""

    def __init__(self, run_ids: list[str]) -> None:
        self.totals: dict[str, tuple[int, int, Any]] = {}
        self.tiers: dict[str, list[tuple[Any, ...]]] = {run_id: [] for run_id in run_ids}
        self.decided: dict[tuple[str, str], int] = {}
        self.judges: dict[str, list[JudgeStats]] = {run_id: [] for run_id in run_ids}
        self.durations: dict[str, list[float]] = {run_id: [] for run_id in run_ids}
        self.tags: dict[str, set[str]] = {run_id: set() for run_id in run_ids}

    @classmethod
    def read(cls, connection: Connection, run_ids: list[str]) -> _StatsRows:
        j = judgments_table
        r = results_table
        passed = func.sum(case((j.c.status == Status.PASS.value, 1), else_=0))
        found = cls(run_ids)
        for run_id, count, passes, last in connection.execute(
            select(
                r.c.run_id,
                func.count(),
                func.sum(case((r.c.status == Status.PASS.value, 1), else_=0)),
                func.max(r.c.recorded_at),
            )
            .where(r.c.run_id.in_(run_ids))
            .group_by(r.c.run_id)
        ):
            found.totals[run_id] = (int(count), int(passes or 0), last)
        for row in connection.execute(
            select(j.c.run_id, j.c.tier, func.count(), passed, func.avg(j.c.score))
            .where(j.c.run_id.in_(run_ids), j.c.depth == 1, j.c.tier.is_not(None))
            .group_by(j.c.run_id, j.c.tier)
            .order_by(j.c.run_id, j.c.tier)
        ):
            found.tiers[row[0]].append(tuple(row))
        for run_id, tier, count in connection.execute(
            select(r.c.run_id, r.c.decided_by, func.count())
            .where(r.c.run_id.in_(run_ids), r.c.decided_by.is_not(None))
            .group_by(r.c.run_id, r.c.decided_by)
        ):
            found.decided[(run_id, tier)] = int(count)
        for run_id, path, judge, count, judge_passed, mean in connection.execute(
            select(j.c.run_id, j.c.path, func.min(j.c.judge), func.count(), passed, func.avg(j.c.score))
            .where(j.c.run_id.in_(run_ids), j.c.depth >= 1)
            .group_by(j.c.run_id, j.c.path)
            .order_by(j.c.run_id, j.c.path)
        ):
            stats = JudgeStats(str(path), str(judge), int(count), int(judge_passed or 0), _float(mean))
            found.judges[run_id].append(stats)
        for run_id, duration in connection.execute(select(r.c.run_id, r.c.duration).where(r.c.run_id.in_(run_ids))):
            found.durations[run_id].append(duration)
        # Distinct tag lists only: most cases of a run share a few.
        for run_id, text in connection.execute(
            select(r.c.run_id, cast(r.c.tags, Text)).where(r.c.run_id.in_(run_ids)).distinct()
        ):
            found.tags[run_id].update(tag_list(text))
        return found

    def stats_of(self, run_id: str) -> RunStats:
        metrics: dict[str, Rate] = {}
        count_all, passes, last = self.totals.get(run_id, (0, 0, None))
        if count_all:
            metrics["overall"] = Rate(passes, count_all)
        # Every cascade verdict reaches its first tier: the most-run tier counts the verdicts.
        verdicts = max((int(row[2]) for row in self.tiers[run_id]), default=0)
        tiers = []
        for _, tier, count, tier_passed, mean in self.tiers[run_id]:
            metrics[str(tier)] = Rate(int(tier_passed or 0), int(count))
            tiers.append(
                TierStats(
                    str(tier),
                    int(count),
                    int(tier_passed or 0),
                    _float(mean),
                    self.decided.get((run_id, tier), 0),
                    verdicts - int(count),
                )
            )
        return RunStats(
            metrics,
            tuple(tiers),
            tuple(self.judges[run_id]),
            Latency.of(self.durations[run_id]),
            tuple(sorted(self.tags[run_id])),
            as_utc(last),
        )


def _float(value: Any) -> float | None:
    return None if value is None else float(value)
