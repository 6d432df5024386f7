"""A run's cases: a page of them filtered and sorted on the server, and one case read whole by its key."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Text, and_, case, cast, exists, func, literal, select, type_coerce
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Connection

from jurybox.core import CaseRecord, Status
from jurybox.store._browse_models import CaseQuery, CaseRow, Paged, page_bounds, tag_list
from jurybox.store._browse_runs import select_runs
from jurybox.store._models import RunInfo
from jurybox.store._rebuild import RESULT_COLUMNS, TreeReader, record_from_row, rounds_of
from jurybox.store._repository import Repository
from jurybox.store._schema import cases_table, results_table, run_cases_table, suites_table
from jurybox.store._search import search_condition

TEXT_LIMIT = 600
"""Characters of reasoning and error a case row carries: a table shows a line, the case page the rest."""

_SEVERITY = {Status.FAIL.value: 0, Status.ERROR.value: 1, Status.ABSTAIN.value: 2, Status.PASS.value: 3}
"""Failing cases first: what a person opening a run looks for."""

_STATUS_COLUMNS = {"pass": "passed", "fail": "failed", "error": "errored", "abstain": "abstained"}
"""The run total that already counts a status filter's cases."""


class CaseBrowser(Repository):
    """The ``results`` of a run, a page at a time, and one case with its whole tree (``browser.cases``)."""

    def page(self, run: RunInfo, query: CaseQuery) -> Paged[CaseRow]:
        """One page of a run's cases, filtered and sorted on the server."""
        r = results_table
        conditions = _conditions(run, query)
        offset, limit = page_bounds(query.offset, query.limit)
        columns = (
            r.c.case_name,
            r.c.status,
            r.c.score,
            func.substr(r.c.reasoning, 1, TEXT_LIMIT),
            func.substr(r.c.error, 1, TEXT_LIMIT),
            r.c.decided_by,
            r.c.duration,
            r.c.tokens,
            r.c.cost,
            cast(r.c.tags, Text),
            RESULT_COLUMNS[[c.name for c in r.c].index("judgment")],
            r.c.unpriced_calls,
        )
        with self._read() as connection:
            if query.tag:
                conditions.append(_has_tag(connection, query.tag))
            if query.search:
                conditions.append(search_condition(connection, query.search))
            statement = select(*columns).where(*conditions)
            if query.sort == "plan":
                plan = run_cases_table
                statement = statement.outerjoin(
                    plan, and_(plan.c.run_id == r.c.run_id, plan.c.case_name == r.c.case_name)
                )
            total = _known_total(run, query)
            if total is None:
                total = connection.execute(select(func.count()).select_from(r).where(*conditions)).scalar_one()
            walk = _status_walk(run, query)
            rows: Sequence[Any]
            if walk is not None:
                rows = _rows_by_status(connection, statement, walk, offset, limit)
            else:
                order = _case_order(query.sort, query.descending)
                rows = connection.execute(statement.order_by(*order).offset(offset).limit(limit)).all()
        reader = TreeReader()
        items = [
            CaseRow(
                case=name,
                status=Status(status),
                score=score,
                reasoning=reasoning or "",
                error=error,
                decided_by=decided_by,
                duration=duration,
                tokens=tokens,
                cost=cost,
                tags=tuple(tag_list(tags)),
                judgment=reader.judgment(judgment),
                unpriced_calls=unpriced,
            )
            for (
                name,
                status,
                score,
                reasoning,
                error,
                decided_by,
                duration,
                tokens,
                cost,
                tags,
                judgment,
                unpriced,
            ) in rows
        ]
        return Paged(items, int(total), offset, limit)

    def record(self, run_id: str, case_name: str) -> CaseRecord | None:
        """One case of a run with its whole verdict tree, rounds and context, or None."""
        with self._read() as connection:
            row = connection.execute(
                select(*RESULT_COLUMNS).where(results_table.c.run_id == run_id, results_table.c.case_name == case_name)
            ).one_or_none()
            if row is None:
                return None
            reader = TreeReader()
            rounds = rounds_of(connection, [row.id], reader)
            return record_from_row(row, rounds.get(row.id, ()), reader)

    def definition(self, run_id: str, case_name: str) -> dict[str, Any] | None:
        """The definition (the suite file's case) of the version this run ran, or None."""
        with self._read() as connection:
            value = connection.execute(
                select(cases_table.c.definition)
                .join(run_cases_table, run_cases_table.c.case_id == cases_table.c.id)
                .where(run_cases_table.c.run_id == run_id, run_cases_table.c.case_name == case_name)
            ).scalar_one_or_none()
        return dict(value) if isinstance(value, dict) else None

    def neighbours(self, run_id: str, case_name: str) -> tuple[str | None, str | None]:
        """The cases before and after ``case_name`` in name order (for previous / next links)."""
        r = results_table
        with self._read() as connection:
            before = connection.execute(
                select(func.max(r.c.case_name)).where(r.c.run_id == run_id, r.c.case_name < case_name)
            ).scalar_one_or_none()
            after = connection.execute(
                select(func.min(r.c.case_name)).where(r.c.run_id == run_id, r.c.case_name > case_name)
            ).scalar_one_or_none()
        return before, after

    def in_runs(self, suite: str, case_name: str, *, limit: int = 20) -> list[tuple[RunInfo, Status | None]]:
        """The case's status in the suite's last ``limit`` runs, newest first (None: not in that run)."""
        with self._read() as connection:
            runs = select_runs(connection, suites_table.c.name == suite, limit=page_bounds(0, limit)[1])
            found = dict(
                connection.execute(
                    select(results_table.c.run_id, results_table.c.status).where(
                        results_table.c.run_id.in_([run.id for run in runs]),
                        results_table.c.case_name == case_name,
                    )
                ).all()
            )
        return [(run, Status(found[run.id]) if run.id in found else None) for run in runs]


def _conditions(run: RunInfo, query: CaseQuery) -> list[Any]:
    """The ``WHERE`` of a case page (but the tag and the search, whose forms depend on the database)."""
    r = results_table
    conditions: list[Any] = [r.c.run_id == run.id]
    if query.status:
        if query.status == "not_passed":
            conditions.append(r.c.status != Status.PASS.value)
        else:
            conditions.append(r.c.status == query.status)
    if query.min_score is not None:
        conditions.append(r.c.score >= query.min_score)
    if query.max_score is not None:
        conditions.append(r.c.score <= query.max_score)
    return conditions


def _status_walk(run: RunInfo, query: CaseQuery) -> list[tuple[str, int]] | None:
    """The statuses a severity-ordered page reads one after another, with each one's count; None: sort in SQL.

    Ordering a 100,000-case run by severity in SQL sorts every row to show 50. When the
    run's totals say how many cases have each status (no text, tag or score filter), a
    page is read status by status instead, each in name order straight from the index on
    ``(run_id, status, case_name)``, skipping whole statuses the offset passes.
    """
    if query.sort not in {"status", "attention"} or _known_total(run, query) is None:
        return None
    order = sorted(_SEVERITY, key=_SEVERITY.__getitem__, reverse=query.descending)
    if query.status == "not_passed":
        order = [status for status in order if status != Status.PASS.value]
    elif query.status:
        order = [query.status]
    return [(status, int(getattr(run, _STATUS_COLUMNS[status]))) for status in order]


def _rows_by_status(
    connection: Connection, statement: Any, walk: list[tuple[str, int]], offset: int, limit: int
) -> list[Any]:
    """The page at ``offset`` of the cases in ``walk``'s status order, each status in name order."""
    r = results_table
    rows: list[Any] = []
    skip = offset
    for status, count in walk:
        if skip >= count:
            skip -= count
            continue
        part = statement.where(r.c.status == status).order_by(r.c.case_name).offset(skip).limit(limit - len(rows))
        rows += connection.execute(part).all()
        skip = 0
        if len(rows) >= limit:
            break
    return rows


def _known_total(run: RunInfo, query: CaseQuery) -> int | None:
    """How many cases match when the run's totals already say it (no count over 100,000 rows), else None."""
    if query.tag or query.search or query.min_score is not None or query.max_score is not None:
        return None
    if not query.status:
        return run.recorded
    if query.status in _STATUS_COLUMNS:
        found: int = getattr(run, _STATUS_COLUMNS[query.status])
        return found
    if query.status == "not_passed":
        return run.recorded - run.passed
    return None


def _has_tag(connection: Connection, tag: str) -> Any:
    """A condition: the result's tags include ``tag`` exactly."""
    r = results_table
    if connection.dialect.name == "postgresql":
        return type_coerce(r.c.tags, JSONB).contains([tag])  # JSONB @>: the list holds the tag
    each = func.json_each(r.c.tags).table_valued("value")
    return exists(select(literal(1)).select_from(each).where(each.c.value == tag))


def _case_order(sort: str, descending: bool) -> list[Any]:
    r = results_table
    name = r.c.case_name.desc() if descending else r.c.case_name
    if sort == "name":
        return [name]
    if sort in {"status", "attention"}:
        severity = case(_SEVERITY, value=r.c.status, else_=9)
        return [severity.desc() if descending else severity, r.c.case_name]
    if sort == "finished":  # the order results were written in: the latest last (descending: first)
        return [r.c.id.desc() if descending else r.c.id]
    if sort == "plan":
        position = func.coalesce(run_cases_table.c.position, 2**31 - 1)
        return [position.desc() if descending else position, r.c.id]
    column = {"score": r.c.score, "duration": r.c.duration, "cost": r.c.cost}.get(sort)
    if column is None:
        return [name]
    # Unknown values (NULL) last either way: "unknown" is neither cheap nor expensive.
    nulls = case((column.is_(None), 1), else_=0)
    return [nulls, column.desc() if descending else column, r.c.case_name]
