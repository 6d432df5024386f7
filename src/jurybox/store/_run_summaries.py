"""A finished run's stats stored once (``run_summaries``), so no page aggregates a big run's rows again.

``finish_run`` computes the stats of the run (tier and judge rates, latency, tags) and
keeps them with the finish time they describe. A run resumed later gets a new finish
time, so an old summary never passes for the new figures: a summary whose time is not
the run's is ignored and the stats are computed from the rows as before. Runs finished
before schema 0013 have none and are computed (then kept in the browser's cache).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import delete, insert, select
from sqlalchemy.engine import Connection

from jurybox.store._browse_models import JudgeStats, RunStats, TierStats
from jurybox.store._compare import Latency
from jurybox.store._models import Rate, RunInfo, as_utc
from jurybox.store._schema import run_summaries_table
from jurybox.store._stats_rows import StatsRows

SUMMARY_VERSION = 1
"""Bumped when the stored form changes: a summary of another version is ignored (computed again)."""


def write_summary(connection: Connection, run_id: str, finished_at: datetime) -> None:
    """Compute and store the stats of ``run_id`` as finished at ``finished_at`` (inside the caller's transaction)."""
    stats = StatsRows.read(connection, [run_id]).stats_of(run_id)
    table = run_summaries_table
    connection.execute(delete(table).where(table.c.run_id == run_id))
    connection.execute(insert(table).values(run_id=run_id, finished_at=finished_at, stats=stats_json(stats)))


def read_summaries(connection: Connection, runs: Sequence[RunInfo]) -> dict[str, RunStats]:
    """The stored stats of those ``runs`` whose summary describes their current finish, by run id."""
    wanted = {run.id: run.finished_at for run in runs if run.finished_at is not None}
    if not wanted:
        return {}
    table = run_summaries_table
    found: dict[str, RunStats] = {}
    rows = connection.execute(
        select(table.c.run_id, table.c.finished_at, table.c.stats).where(table.c.run_id.in_(list(wanted)))
    )
    for run_id, finished_at, data in rows:
        if as_utc(finished_at) != wanted[run_id]:
            continue  # the run was resumed and finished again since: this summary is of an earlier finish
        stats = stats_from_json(data)
        if stats is not None:
            found[run_id] = stats
    return found


def stats_json(stats: RunStats) -> dict[str, Any]:
    return {
        "v": SUMMARY_VERSION,
        "metrics": {name: [rate.passed, rate.total] for name, rate in stats.metrics.items()},
        "tiers": [[t.name, t.ran, t.passed, t.mean_score, t.decided, t.not_needed] for t in stats.tiers],
        "judges": [[j.path, j.judge, j.ran, j.passed, j.mean_score] for j in stats.judges],
        "latency": [stats.latency.mean, stats.latency.p50, stats.latency.p95],
        "tags": list(stats.tags),
        "last": stats.last_recorded.isoformat() if stats.last_recorded else None,
    }


def stats_from_json(data: Any) -> RunStats | None:
    """The stats of a stored summary, or None when it is of another version or malformed."""
    if not isinstance(data, dict) or data.get("v") != SUMMARY_VERSION:
        return None
    try:
        last = data.get("last")
        return RunStats(
            {str(name): Rate(int(passed), int(total)) for name, (passed, total) in data["metrics"].items()},
            tuple(TierStats(str(n), int(r), int(p), m, int(d), int(nn)) for n, r, p, m, d, nn in data["tiers"]),
            tuple(JudgeStats(str(path), str(judge), int(r), int(p), m) for path, judge, r, p, m in data["judges"]),
            Latency(*data["latency"]),
            tuple(str(tag) for tag in data["tags"]),
            as_utc(datetime.fromisoformat(last)) if isinstance(last, str) else None,
        )
    except (KeyError, TypeError, ValueError):
        return None
