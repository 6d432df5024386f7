"""A suite over time: its trend (stats, baselines and gate states per run) and each case's status per run."""

from __future__ import annotations

import itertools

from sqlalchemy import case, func, select
from sqlalchemy.engine import Engine

from jurybox.core import Status
from jurybox.store._baselines import RegressionPolicy, partial_check
from jurybox.store._browse_models import CaseHistoryRow, Paged, TrendPoint, page_bounds
from jurybox.store._browse_runs import select_runs
from jurybox.store._browse_stats import StatsBrowser, check_metrics
from jurybox.store._models import Rate, RunInfo
from jurybox.store._repository import Repository
from jurybox.store._schema import results_table, suites_table

MAX_TREND_RUNS = 5000
MAX_HISTORY_RUNS = 100


class TrendBrowser(Repository):
    """A suite's recent runs, read together (``browser.trends``); stats come from (and warm) ``browser.stats``."""

    def __init__(self, engine: Engine, stats: StatsBrowser) -> None:
        super().__init__(engine)
        self._stats = stats

    def points(self, suite: str, *, limit: int, policy: RegressionPolicy) -> list[TrendPoint]:
        """The suite's last ``limit`` runs, oldest first, each with its stats, baselines and gate states.

        A point's baseline and state are computed as ``jurybox gate`` would for
        that run: the mean over the ``window`` runs before it that the policy admits
        (among the runs read here).
        """
        limit = max(1, min(limit, MAX_TREND_RUNS))
        with self._read() as connection:
            # The window before the first point shown makes its baseline.
            runs = select_runs(connection, suites_table.c.name == suite, limit=limit + policy.window)
        runs.reverse()
        self._stats.warm(runs)
        points: list[TrendPoint] = []
        history: list[dict[str, Rate]] = []  # metrics of completed runs so far, oldest first
        first_shown = max(0, len(runs) - limit)
        for index, run in enumerate(runs):
            stats = self._stats.of(run)
            if index >= first_shown:
                checks = (
                    [partial_check(name, rate, policy) for name, rate in stats.metrics.items()]
                    if run.partial
                    else check_metrics(stats.metrics, history[-policy.window :][::-1], policy)
                )
                baselines = {c.metric: c.baseline for c in checks}
                states: dict[str, str] = {c.metric: c.state for c in checks}
                thresholds = {c.metric: c.threshold for c in checks}
                points.append(TrendPoint(run, stats, baselines, states, thresholds))
            if policy.admits(run.status, stats.metrics, partial=run.partial):
                history.append(stats.metrics)
        return points

    def case_history(
        self, suite: str, *, runs: int = 20, offset: int = 0, limit: int = 50
    ) -> tuple[list[RunInfo], Paged[CaseHistoryRow]]:
        """Each case's status over the suite's last ``runs`` runs, flakiest first.

        A case is flaky when it passed in some of those runs and not in others;
        ``flips`` counts the changes between pass and not-pass from run to run.
        """
        offset, limit = page_bounds(offset, limit)
        runs = max(1, min(runs, MAX_HISTORY_RUNS))
        r = results_table
        with self._read() as connection:
            recent = select_runs(connection, suites_table.c.name == suite, limit=runs)
            recent.reverse()  # oldest first, as the trend reads
            ids = [run.id for run in recent]
            passes = func.sum(case((r.c.status == Status.PASS.value, 1), else_=0))
            ran = func.count()
            # Flakiest first: a case that passed in half the runs is the least predictable.
            unsteady = (
                func.min(passes, ran - passes)
                if connection.dialect.name == "sqlite"
                else func.least(passes, ran - passes)
            )
            grouped = (
                select(r.c.case_name, passes.label("passed"), ran.label("ran"))
                .where(r.c.run_id.in_(ids))
                .group_by(r.c.case_name)
            )
            total = connection.execute(select(func.count()).select_from(grouped.subquery())).scalar_one()
            page = connection.execute(
                grouped.order_by(unsteady.desc(), (ran - passes).desc(), r.c.case_name).offset(offset).limit(limit)
            ).all()
            names = [row.case_name for row in page]
            statuses: dict[tuple[str, str], str] = {}
            if names:
                statuses = {
                    (run_id, name): status
                    for run_id, name, status in connection.execute(
                        select(r.c.run_id, r.c.case_name, r.c.status).where(
                            r.c.run_id.in_(ids), r.c.case_name.in_(names)
                        )
                    )
                }
        rows = []
        for row in page:
            line = tuple(statuses.get((run_id, row.case_name)) for run_id in ids)
            seen = [s == Status.PASS.value for s in line if s is not None]
            flips = sum(1 for x, y in itertools.pairwise(seen) if x != y)
            rows.append(CaseHistoryRow(row.case_name, line, flips, int(row.passed or 0), int(row.ran)))
        return recent, Paged(rows, int(total), offset, limit)
