"""Case results (``store.results``): writing finished cases in batches, reading a run's records back in plan order.

``record_many`` and ``stream`` are the store's hot paths (one call per batch of
finished cases, one rebuilt record per case of a report): they call the row
builders of ``_record_rows`` and ``_rebuild`` directly, with no layer in between.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterator, Sequence
from typing import Any

from sqlalchemy import Select, and_, func, select

from jurybox.core import CaseRecord, Status
from jurybox.store._lazy import RunRecords, StoredRecords
from jurybox.store._models import CaseOutcome
from jurybox.store._rebuild import RESULT_COLUMNS, TreeReader, record_from_row, rounds_of
from jurybox.store._record_rows import insert_records, prepare
from jurybox.store._repository import Repository
from jurybox.store._schema import results_table, run_cases_table

READ_BATCH = 500
"""Results read per batch by ``stream`` unless asked otherwise."""

NAMED_IN_SQL = 500
"""Up to this many named cases, ``stream`` asks the database for them by name; more, it reads the run's
rows and skips the others (one query, no bound-parameter limit)."""

STREAM_BATCH = 100
"""Results read per batch by ``records``: a report pass holds one batch of rebuilt trees at a time."""


class ResultRepository(Repository):
    """The ``results``, ``round_results`` and ``judgments`` tables: what each case of a run gave."""

    def record(self, run_id: str, record: CaseRecord) -> bool:
        """Write one case's result, its rounds and every judge's judgment in one transaction.

        Returns False, changing nothing, when the run already has this case.
        Writing to an interrupted or failed run reopens it (status running).

        Raises:
            StoreError: the run does not exist or is already completed.
        """
        return self.record_many(run_id, [record])[0]

    def record_many(self, run_id: str, records: Sequence[CaseRecord]) -> list[bool]:
        """Write several finished cases in one transaction: all of them or, on any error, none.

        What a busy runner's writer does with the cases that finished while it
        was writing: one commit for the lot costs far less than one per case.
        Returns, per record, False when the run already had that case.

        Raises:
            StoreError: the run does not exist or is already completed.
        """
        for record in records:
            if not isinstance(record, CaseRecord):
                raise TypeError(f"results.record takes a CaseRecord, got {type(record).__name__}")
        # Serialized before the transaction opens, so the write lock is held only for the inserts.
        prepared = [prepare(record) for record in records]
        if not prepared:
            return []
        with self._write() as connection:
            return insert_records(connection, run_id, prepared, self.url)

    def recorded(self, run_id: str) -> set[str]:
        """Names of the cases the run has results for."""
        with self._read() as connection:
            return set(
                connection.execute(select(results_table.c.case_name).where(results_table.c.run_id == run_id)).scalars()
            )

    def planned(self, run_id: str) -> list[str]:
        """Names of the cases the run was asked to run, in order."""
        with self._read() as connection:
            return list(
                connection.execute(
                    select(run_cases_table.c.case_name)
                    .where(run_cases_table.c.run_id == run_id)
                    .order_by(run_cases_table.c.position)
                ).scalars()
            )

    def missing(self, run_id: str) -> list[str]:
        """Planned cases with no result yet, in plan order: what a resume still has to judge."""
        done = self.recorded(run_id)
        return [name for name in self.planned(run_id) if name not in done]

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

    def records(self, run_id: str, *, cases: Collection[str] | None = None) -> StoredRecords:
        """The run's records (only ``cases``, or all) read from the store on each pass: flat memory for any size.

        A lazy sequence in plan order; ``status_counts()`` counts without reading a judgment tree.
        """
        if cases is None:  # the whole run: nothing held per case, so a run of a million reads back flat
            return RunRecords(self, run_id, batch=STREAM_BATCH)
        return StoredRecords(
            self.outcomes(run_id),
            lambda wanted: self.stream(run_id, batch=STREAM_BATCH, cases=wanted),
            cases=cases,
        )

    def read_all(self, run_id: str) -> list[CaseRecord]:
        """The whole run's records in plan order, judgment trees rebuilt (resumed parts included), as one list."""
        return list(self.stream(run_id))

    def stream(
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
        if cases is not None and len(cases) <= NAMED_IN_SQL:
            # A few named cases (a report's first lines): the database finds their rows, not a scan of the run.
            query = query.where(results_table.c.case_name.in_(list(cases)))
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

    def outcomes(self, run_id: str) -> list[CaseOutcome]:
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


def _in_plan_order(query: Select[Any], run_id: str) -> Select[Any]:
    """``query`` over one run's results, in the order the run planned its cases (unplanned ones last)."""
    plan = run_cases_table
    in_plan = and_(plan.c.run_id == results_table.c.run_id, plan.c.case_name == results_table.c.case_name)
    return (
        query.outerjoin(plan, in_plan)
        .where(results_table.c.run_id == run_id)
        .order_by(func.coalesce(plan.c.position, 2**31 - 1), results_table.c.id)
    )
