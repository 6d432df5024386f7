"""Run pages: runs newest first (filtered, a page at a time), one run and the runs before it."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import func, select, true
from sqlalchemy.engine import Connection

from jurybox.store._browse_cache import is_final
from jurybox.store._browse_models import Paged, page_bounds
from jurybox.store._models import RunInfo
from jurybox.store._repository import Repository
from jurybox.store._runs import run_info, run_totals, started_before
from jurybox.store._schema import runs_table, suites_table


def select_runs(connection: Connection, *conditions: Any, offset: int = 0, limit: int | None) -> list[RunInfo]:
    """Runs matching ``conditions``, newest first, with their totals.

    A final run's totals are the ones ``finish_run`` wrote on its row (no
    aggregation, so a list of 1,000 runs costs one query); a running run's are
    counted live from its results, so its page shows progress.
    """
    query = (
        select(runs_table, suites_table.c.name)
        .join(suites_table, suites_table.c.id == runs_table.c.suite_id)
        .where(true(), *conditions)
        .order_by(runs_table.c.started_at.desc(), runs_table.c.id.desc())
    )
    if offset:
        query = query.offset(offset)
    if limit is not None:
        query = query.limit(limit)
    rows = connection.execute(query).all()
    live = run_totals(connection, [row.id for row in rows if not is_final(row)])
    return [run_info(row, None if is_final(row) else live.get(row.id, {})) for row in rows]


def runs_before(connection: Connection, run: RunInfo, *, completed: bool, limit: int) -> list[RunInfo]:
    """Up to ``limit`` runs of ``run``'s suite that started before it, newest first (only completed ones with
    ``completed``: the runs a rolling baseline averages)."""
    conditions = [suites_table.c.name == run.suite, runs_table.c.id != run.id, started_before(run)]
    if completed:
        conditions.append(runs_table.c.status == "completed")
    return select_runs(connection, *conditions, limit=limit)


class RunBrowser(Repository):
    """The ``runs`` table (with each run's suite name), read a page at a time (``browser.runs``)."""

    def page(
        self,
        *,
        suite: str | None = None,
        status: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        offset: int = 0,
        limit: int = 50,
    ) -> Paged[RunInfo]:
        """Runs, newest first, filtered by suite, status and start time (``since`` <= started < ``until``)."""
        conditions: list[Any] = []
        if suite is not None:
            conditions.append(suites_table.c.name == suite)
        if status is not None:
            conditions.append(runs_table.c.status == status)
        if since is not None:
            conditions.append(runs_table.c.started_at >= since)
        if until is not None:
            conditions.append(runs_table.c.started_at < until)
        offset, limit = page_bounds(offset, limit)
        with self._read() as connection:
            count = select(func.count()).select_from(
                runs_table.join(suites_table, suites_table.c.id == runs_table.c.suite_id)
            )
            total = connection.execute(count.where(*conditions)).scalar_one()
            runs = select_runs(connection, *conditions, offset=offset, limit=limit)
        return Paged(runs, int(total), offset, limit)

    def find(self, run_id: str) -> RunInfo | None:
        """The run with exactly this id, or None."""
        with self._read() as connection:
            found = select_runs(connection, runs_table.c.id == run_id, limit=1)
        return found[0] if found else None

    def previous(self, run: RunInfo, *, completed: bool = False) -> RunInfo | None:
        """The suite's run that started just before ``run`` (the latest completed one with ``completed``)."""
        with self._read() as connection:
            found = runs_before(connection, run, completed=completed, limit=1)
        return found[0] if found else None
