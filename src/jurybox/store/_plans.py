"""A run's plan (``run_cases``): written a chunk at a time, in the run's first transaction or as the run goes.

A plan of a million cases written in one transaction held SQLite's write lock for
about 30 s and kept the first case waiting for it. So the runner opens a run with
the plan's first chunk and the plan's size (``runs.begin(..., planned=N)``), and
writes the rest with ``runs.extend_plan``, one short transaction per chunk, while
the cases run: other commands write between the chunks. A run killed before its
plan was whole has fewer plan rows than its ``planned`` count; ``plan_progress``
says so, and a resume writes the rest of the plan (the suite's selection the run
was started with, less the cases already planned).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from sqlalchemy import and_, func, insert, select, update
from sqlalchemy.engine import Connection

from jurybox.store._cases import chunked, upsert_case_versions
from jurybox.store._schema import results_table, run_cases_table, runs_table


class PlanProgress(NamedTuple):
    """How much of a run's plan the store holds.

    Attributes:
        written: Plan rows stored, at positions ``0 .. written - 1``.
        size: Cases the whole plan holds (``RunInfo.planned``).
        selectors: The ``--filter`` the run was started with: what the rest of its plan is.
    """

    written: int
    size: int
    selectors: tuple[str, ...]

    @property
    def complete(self) -> bool:
        return self.written >= self.size


def plan_chunk(
    connection: Connection, run_id: str, suite: int, part: Sequence[tuple[str, Mapping[str, Any]]], first: int
) -> None:
    """Store one chunk of a run's plan: its case versions, then its rows at their places in the whole plan.

    A name given twice is refused before anything of the chunk is written: twice within the
    chunk by counting its names, or again after an earlier chunk by the plan rows already
    stored (the database holds the names seen so far, not this process).
    """
    names = [name for name, _ in part]
    twice = next((name for name, count in Counter(names).items() if count > 1), None)
    if twice is None and first:  # the first chunk has nothing before it to repeat
        twice = next(iter(_planned_among(connection, run_id, names)), None)
    if twice is not None:
        raise ValueError(f"case {twice!r} is in the run's plan twice: case names must be unique")
    versions = upsert_case_versions(connection, suite, part, first_position=first, lock=False)
    rows = [
        {"run_id": run_id, "case_name": name, "case_id": versions[name], "position": first + offset}
        for offset, name in enumerate(names)
    ]
    for rows_part in chunked(rows):
        connection.execute(insert(run_cases_table), list(rows_part))


def progress(connection: Connection, run_id: str) -> PlanProgress | None:
    """How much of the run's plan is stored (None: no such run)."""
    row = connection.execute(
        select(runs_table.c.planned, runs_table.c.config).where(runs_table.c.id == run_id)
    ).one_or_none()
    if row is None:
        return None
    written = connection.execute(
        select(func.count()).select_from(run_cases_table).where(run_cases_table.c.run_id == run_id)
    ).scalar_one()
    selectors = (row.config or {}).get("selectors") or []
    return PlanProgress(int(written), int(row.planned), tuple(str(s) for s in selectors if isinstance(s, str)))


def link_results(connection: Connection, run_id: str) -> None:
    """Give each of the run's results its case version, where the result was written before its plan row.

    A case may finish before the chunk of the plan that names it is stored (a worker
    process or a Ray actor writing on its own); its result then has no case version
    until this runs, when the run is finished.
    """
    plan = run_cases_table
    version = (
        select(plan.c.case_id)
        .where(and_(plan.c.run_id == results_table.c.run_id, plan.c.case_name == results_table.c.case_name))
        .scalar_subquery()
    )
    connection.execute(
        update(results_table)
        .where(results_table.c.run_id == run_id, results_table.c.case_id.is_(None), version.is_not(None))
        .values(case_id=version)
    )


def _planned_among(connection: Connection, run_id: str, names: Sequence[str]) -> list[str]:
    """Which of ``names`` the run's plan already holds (found by the plan's key, run and case name)."""
    found: set[str] = set()
    for part in chunked(names):
        query = select(run_cases_table.c.case_name).where(
            run_cases_table.c.run_id == run_id, run_cases_table.c.case_name.in_(part)
        )
        found.update(connection.execute(query).scalars())
    return [name for name in names if name in found]  # in the chunk's order: the first one is named
