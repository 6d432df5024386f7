"""Run stats: a run's pass rates overall and per tier, per-judge rates, latency and tags, and the gate's verdict.

A run finished since schema 0013 has its stats stored (``run_summaries``,
written by ``finish_run``): they are read, never computed again, and the
summaries of 1,000 runs are one query. Other runs' figures are computed
together: one query per aggregate grouped by run, in chunks, instead of a few
queries per run. A final run's stats are kept in the browser's LRU cache.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.engine import Engine

from jurybox.store._baselines import BASELINE_LOOKBACK, MetricCheck, RegressionPolicy, check_metric, partial_check
from jurybox.store._browse_cache import LruCache, final_key, is_final
from jurybox.store._browse_models import RunStats
from jurybox.store._browse_runs import runs_before
from jurybox.store._cases import chunked
from jurybox.store._models import Rate, RunInfo
from jurybox.store._repository import Repository
from jurybox.store._run_summaries import read_summaries
from jurybox.store._stats_rows import StatsRows

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
        return self._cache.get(("stats", *final_key(run)), lambda: self._batch_stats([run])[run.id], keep=is_final(run))

    def warm(self, runs: Sequence[RunInfo]) -> None:
        """Compute the stats of many final runs not yet cached in a few queries instead of a few per run."""
        missing = [run for run in runs if is_final(run) and ("stats", *final_key(run)) not in self._cache]
        for part in chunked(missing, STATS_CHUNK):
            computed = self._batch_stats(part)
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

    def _batch_stats(self, runs: Sequence[RunInfo]) -> dict[str, RunStats]:
        """The stats of several runs: their stored summaries, else one query per aggregate, grouped by run."""
        with self._read() as connection:
            found = read_summaries(connection, [run for run in runs if is_final(run)])
            missing = [run.id for run in runs if run.id not in found]
            if missing:
                rows = StatsRows.read(connection, missing)
                found.update({run_id: rows.stats_of(run_id) for run_id in missing})
        return found
