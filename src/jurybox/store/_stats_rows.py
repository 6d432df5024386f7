"""A run's stats computed from its rows: one query per aggregate, grouped by run, for a batch of runs.

Used by the browser for runs without a stored summary (running runs, runs finished before
schema 0013) and by ``finish_run``, which stores the result as the run's summary.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Text, case, cast, func, select
from sqlalchemy.engine import Connection

from jurybox.core import Status
from jurybox.store._browse_models import JudgeStats, RunStats, TierStats, tag_list
from jurybox.store._compare import Latency
from jurybox.store._models import Rate, as_utc
from jurybox.store._schema import judgments_table, results_table


class StatsRows:
    """The grouped rows of one batch of runs, and how they become each run's ``RunStats``."""

    def __init__(self, run_ids: list[str]) -> None:
        self.totals: dict[str, tuple[int, int, Any]] = {}
        self.tiers: dict[str, list[tuple[Any, ...]]] = {run_id: [] for run_id in run_ids}
        self.decided: dict[tuple[str, str], int] = {}
        self.judges: dict[str, list[JudgeStats]] = {run_id: [] for run_id in run_ids}
        self.durations: dict[str, list[float]] = {run_id: [] for run_id in run_ids}
        self.tags: dict[str, set[str]] = {run_id: set() for run_id in run_ids}

    @classmethod
    def read(cls, connection: Connection, run_ids: list[str]) -> StatsRows:
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
