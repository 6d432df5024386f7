"""Case results: writing finished cases in batches, and reading a run's records back in plan order.

``record_cases`` and ``iter_records`` are the store's hot paths (one call per
finished case or batch, one rebuilt record per case of a report): their loops
call the row builders of ``_rows`` directly, with no layer in between.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterator, Sequence
from typing import Any

from sqlalchemy import Select, and_, func, select
from sqlalchemy.engine import Connection

from jurybox.core import CaseRecord, Status
from jurybox.store._cases import chunked
from jurybox.store._engine import StoreError
from jurybox.store._models import CaseOutcome
from jurybox.store._repository import Repository
from jurybox.store._rows import (
    CASE_VERSIONS,
    JUDGMENT_COLUMNS,
    REOPEN_RUN,
    RESULT_COLUMNS,
    RESULTS_NAMED,
    ROUND_COLUMNS,
    RUN_STATUS,
    JsonForms,
    TreeReader,
    driver_insert,
    insert_result,
    judgment_values,
    record_from_row,
    result_parameters,
    result_values,
    results_insert,
    round_values,
    rounds_of,
)
from jurybox.store._schema import judgments_table, results_table, round_results_table, run_cases_table

READ_BATCH = 500
"""Results read per batch by ``iter_records`` unless asked otherwise."""

PreparedRows = tuple[str, tuple[Any, ...], list[tuple[Any, ...]], list[tuple[Any, ...]]]
"""A record's case name, its result row, and its round and judgment rows, without what only the insert knows."""


class ResultRepository(Repository):
    """The ``results``, ``round_results`` and ``judgments`` tables: what each case of a run gave."""

    def record_cases(self, run_id: str, records: Sequence[CaseRecord]) -> list[bool]:
        """Write several finished cases in one transaction: all of them or, on any error, none.

        What a busy runner's writer does with the cases that finished while it
        was writing: one commit for the lot costs far less than one per case.
        Returns, per record, False when the run already had that case.

        Raises:
            StoreError: the run does not exist or is already completed.
        """
        for record in records:
            if not isinstance(record, CaseRecord):
                raise TypeError(f"record_case takes a CaseRecord, got {type(record).__name__}")
        # Serialized before the transaction opens, so the write lock is held only for the inserts.
        prepared = [_prepare(record) for record in records]
        if not prepared:
            return []
        with self._write() as connection:
            return self._insert_cases(connection, run_id, prepared)

    def _insert_cases(self, connection: Connection, run_id: str, prepared: list[PreparedRows]) -> list[bool]:
        """The inserts of ``record_cases``: a fixed number of statements per batch, whatever its size."""
        names = [name for name, _, _, _ in prepared]
        status = connection.execute(RUN_STATUS, {"run_id": run_id}).scalar_one_or_none()
        if status is None:
            raise StoreError(f"unknown run {run_id!r} in store {self.url}")
        if status == "completed":
            if set(names) <= _recorded_among(connection, run_id, names):
                return [False] * len(names)
            raise StoreError(f"run {run_id} is completed; it takes no more results")
        versions = dict(_rows_named(connection, CASE_VERSIONS, run_id, names))
        first: dict[str, int] = {}  # a case named twice in one batch: its first record is the one written
        rows = []
        for index, (name, values, _, _) in enumerate(prepared):
            if name not in first:
                first[name] = index
                rows.append((run_id, name, versions.get(name), *values))
        new_ids = _insert_results(connection, rows)
        if not new_ids:
            return [False] * len(names)
        if status != "running":
            connection.execute(REOPEN_RUN, {"run_id": run_id})
        rounds: list[tuple[Any, ...]] = []
        judgments: list[tuple[Any, ...]] = []
        for name, result_id in new_ids.items():
            _, _, round_rows, judgment_rows = prepared[first[name]]
            round_ids = (result_id,)
            rounds.extend(round_ids + row for row in round_rows)
            judgment_ids = (run_id, result_id)
            judgments.extend(judgment_ids + row for row in judgment_rows)
        # Straight to the driver's executemany: SQLAlchemy's per-value parameter processing cost
        # as much CPU as building the rows, and the prepared values already are what it would bind.
        dialect = connection.dialect
        if rounds:
            connection.exec_driver_sql(driver_insert(dialect, round_results_table, ROUND_COLUMNS), rounds)
        if judgments:
            connection.exec_driver_sql(driver_insert(dialect, judgments_table, JUDGMENT_COLUMNS), judgments)
        return [first[name] == index and name in new_ids for index, name in enumerate(names)]

    def recorded_cases(self, run_id: str) -> set[str]:
        """Names of the cases the run has results for."""
        with self._read() as connection:
            return set(
                connection.execute(select(results_table.c.case_name).where(results_table.c.run_id == run_id)).scalars()
            )

    def planned_cases(self, run_id: str) -> list[str]:
        """Names of the cases the run was asked to run, in order."""
        with self._read() as connection:
            return list(
                connection.execute(
                    select(run_cases_table.c.case_name)
                    .where(run_cases_table.c.run_id == run_id)
                    .order_by(run_cases_table.c.position)
                ).scalars()
            )

    def run_snapshot(self, run_id: str) -> tuple[int, Counter[Status], int]:
        """(records, records per status, the newest result's id) of a run, counted by the database."""
        query = (
            select(results_table.c.status, func.count(), func.max(results_table.c.id))
            .where(results_table.c.run_id == run_id)
            .group_by(results_table.c.status)
        )
        with self._read() as connection:
            rows = connection.execute(query).all()
        counts = Counter({Status(status): count for status, count, _ in rows})
        return sum(counts.values()), counts, max((last for _, _, last in rows), default=0)

    def iter_names(self, run_id: str, *, up_to: int | None = None) -> Iterator[str]:
        """The run's case names in plan order (results with an id above ``up_to`` left out)."""
        query = _in_plan_order(select(results_table.c.case_name), run_id)
        if up_to is not None:
            query = query.where(results_table.c.id <= up_to)
        with self._read() as connection:
            yield from connection.execution_options(yield_per=READ_BATCH).execute(query).scalars()

    def iter_records(
        self,
        run_id: str,
        *,
        batch: int = READ_BATCH,
        cases: Collection[str] | None = None,
        up_to: int | None = None,
    ) -> Iterator[CaseRecord]:
        """Stream a run's records in plan order, ``batch`` results at a time (flat memory for big runs).

        Args:
            run_id: The run.
            batch: Results read at a time.
            cases: Only these cases (None: every recorded case); the rows of other cases are
                skipped before their judgment trees are decoded or rebuilt.
            up_to: Leave out results with a higher id (written after a snapshot).
        """
        query = _in_plan_order(select(*RESULT_COLUMNS), run_id)
        if up_to is not None:
            query = query.where(results_table.c.id <= up_to)
        with self._read() as connection:
            stream = connection.execution_options(yield_per=batch).execute(query)
            for batch_rows in stream.partitions():
                part = batch_rows if cases is None else [row for row in batch_rows if row.case_name in cases]
                if not part:
                    continue
                # One reader per batch: a round stored like its case is decoded once and shares its trees.
                reader = TreeReader()
                # Rounds of this batch only, read in the same transaction while the stream is open.
                rounds = rounds_of(connection, [row.id for row in part], reader)
                for row in part:
                    yield record_from_row(row, rounds.get(row.id, ()), reader)

    def case_outcomes(self, run_id: str) -> list[CaseOutcome]:
        """Every case's summary in a run (no trees), in plan order."""
        query = _in_plan_order(
            select(
                results_table.c.case_name,
                results_table.c.status,
                results_table.c.score,
                results_table.c.reasoning,
                results_table.c.error,
                results_table.c.duration,
                results_table.c.tokens,
                results_table.c.cost,
            ),
            run_id,
        )
        with self._read() as connection:
            return [
                CaseOutcome(name, Status(status), score, reasoning, error, duration, tokens, cost)
                for name, status, score, reasoning, error, duration, tokens, cost in connection.execute(query)
            ]


def _rows_named(connection: Connection, statement: Select[Any], run_id: str, names: Sequence[str]) -> Iterator[Any]:
    """The rows ``statement`` (with ``run_id`` and an expanding ``names`` parameter) finds for ``names``.

    Asked in chunks, so a big batch stays under the database's limit on bound parameters.
    """
    for part in chunked(sorted(set(names))):
        yield from connection.execute(statement, {"run_id": run_id, "names": list(part)})


def _recorded_among(connection: Connection, run_id: str, names: Sequence[str]) -> set[str]:
    """Which of ``names`` the run already has results for."""
    return {row.case_name for row in _rows_named(connection, RESULTS_NAMED, run_id, names)}


def _insert_results(connection: Connection, rows: list[tuple[Any, ...]]) -> dict[str, int]:
    """Insert ``results`` rows (``RESULT_INSERT_COLUMNS``), skipping cases the run already has.

    Returns ``{case_name: id}`` of the rows inserted.
    """
    plan = results_insert(connection.dialect)
    if plan is None:
        statement = insert_result(connection.dialect.name)
        return dict(connection.execute(statement, result_parameters(rows)).all())
    # Straight to the driver, as the round and judgment rows: SQLAlchemy's rendering and per-value
    # processing of this one statement were a tenth of record_cases' CPU.
    new_ids: dict[str, int] = {}
    for part in chunked(rows, plan.rows_per_statement):
        new_ids.update(connection.exec_driver_sql(plan.statement(len(part)), plan.parameters(part)).all())
    return new_ids


def _prepare(record: CaseRecord) -> PreparedRows:
    """The result row, round rows and judgment rows of a record, JSON forms computed once."""
    forms = JsonForms()
    values = result_values(record, forms)
    rounds = [round_values(r, forms) for r in record.rounds]
    judgments = list(judgment_values(record.judgment, None))
    for r in record.rounds:
        # A single-round case's one verdict is the case's and its round's: its rows are written once,
        # as the case's, so a query over judgments (tier rates, failing cases) counts it once.
        if r.judgment is not record.judgment:
            judgments.extend(judgment_values(r.judgment, r.index))
    return record.case, values, rounds, judgments


def _in_plan_order(query: Select[Any], run_id: str) -> Select[Any]:
    """``query`` over one run's results, in the order the run planned its cases (unplanned ones last)."""
    plan = run_cases_table
    in_plan = and_(plan.c.run_id == results_table.c.run_id, plan.c.case_name == results_table.c.case_name)
    return (
        query.outerjoin(plan, in_plan)
        .where(results_table.c.run_id == run_id)
        .order_by(func.coalesce(plan.c.position, 2**31 - 1), results_table.c.id)
    )
