"""The store: runs, their streamed case results, and the reads reports and gates need."""

from __future__ import annotations

import secrets
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Literal

from sqlalchemy import Select, and_, case, func, insert, or_, select, update
from sqlalchemy.engine import Connection, Engine

from jurybox.core._judgment import Status
from jurybox.store._baselines import RegressionPolicy, RunCheck, check_run
from jurybox.store._cases import (
    case_names,
    chunked,
    current_cases,
    now,
    retire_cases,
    suite_id,
    upsert_case_versions,
)
from jurybox.store._engine import WRITE, StoreError, create_store_engine, describe, migrate, resolve_url
from jurybox.store._lazy import StoredRecords
from jurybox.store._models import CaseOutcome, Lesson, Rate, RunInfo, as_utc
from jurybox.store._records import CaseRecord
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
    dialect_insert,
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
from jurybox.store._schema import (
    judgments_table,
    lessons_table,
    results_table,
    round_results_table,
    run_cases_table,
    runs_table,
    suites_table,
)
from jurybox.store._serialize import (
    to_jsonable,
)

RunStatus = Literal["running", "completed", "interrupted", "failed"]
FINAL_STATUSES: tuple[str, ...] = ("completed", "interrupted", "failed")

READ_BATCH = 500
STREAM_BATCH = 100
"""Results read per batch when a run's records are streamed back."""

FAILING_LIMIT = 50
"""Failing cases a lesson keeps; the lesson says how many more there were."""


class Store:
    """Run history in a SQL database (SQLite file by default, PostgreSQL for teams).

    Build one with :func:`open_store`. Every write is one short transaction,
    so results stream to the database as cases finish and a killed process
    loses at most the case it was writing. A Store is safe to share between
    threads; several processes may write one store at once.
    """

    def __init__(self, engine: Engine, *, policy: RegressionPolicy | None = None) -> None:
        self._engine = engine
        self.policy = policy or RegressionPolicy()
        """Thresholds, window and targets used when a completed run is checked for regressions."""

    @property
    def url(self) -> str:
        """The store's URL, password hidden."""
        return describe(self._engine.url)

    @property
    def engine(self) -> Engine:
        """The SQLAlchemy engine, for ad-hoc SQL over the documented tables."""
        return self._engine

    def close(self) -> None:
        """Release every pooled connection."""
        self._engine.dispose()

    def before_fork(self) -> None:
        """Close the pooled connections before this process forks (``jurybox run --workers``).

        A database connection must not cross a fork: SQLite forbids using one in the
        child, and a child that closed its inherited copy could disturb the parent's.
        The store opens new connections in each process as it needs them.
        """
        self._engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    @contextmanager
    def _write(self) -> Iterator[Connection]:
        with self._engine.connect().execution_options(**WRITE) as connection, connection.begin():
            yield connection

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        with self._engine.connect() as connection, connection.begin():
            yield connection

    # Runs -------------------------------------------------------------------------------------

    def begin_run(
        self,
        suite: str,
        *,
        cases: Mapping[str, Mapping[str, Any]],
        judge_model: str | None = None,
        agent_version: str | None = None,
        git_commit: str | None = None,
        config: Mapping[str, Any] | None = None,
    ) -> str:
        """Start a run of ``suite`` over ``cases`` (name -> definition) and return its id.

        Each definition is stored as a version of its case (a new version when
        its content changed), and the run records which versions it ran.
        """
        if not suite:
            raise ValueError("begin_run needs a suite name")
        started = now()
        run_id = f"{started:%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"
        with self._write() as connection:
            suite_key = suite_id(connection, suite)
            assert suite_key is not None
            versions = upsert_case_versions(connection, suite_key, cases.items())
            connection.execute(
                insert(runs_table).values(
                    id=run_id,
                    suite_id=suite_key,
                    status="running",
                    git_commit=git_commit,
                    judge_model=judge_model,
                    agent_version=agent_version,
                    config=to_jsonable(dict(config or {})),
                    planned=len(cases),
                    started_at=started,
                    finished_at=None,
                    total=0,
                    passed=0,
                    failed=0,
                    errored=0,
                    abstained=0,
                )
            )
            plan = [
                {"run_id": run_id, "case_name": name, "case_id": versions[name], "position": position}
                for position, name in enumerate(cases)
            ]
            for part in chunked(plan):
                connection.execute(insert(run_cases_table), list(part))
        return run_id

    def record_case(self, run_id: str, record: CaseRecord) -> bool:
        """Write one case's result, its rounds and every judge's judgment in one transaction.

        Returns False, changing nothing, when the run already has this case.
        Writing to an interrupted or failed run reopens it (status running).

        Raises:
            StoreError: the run does not exist or is already completed.
        """
        return self.record_cases(run_id, [record])[0]

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

    def missing_cases(self, run_id: str) -> list[str]:
        """Planned cases with no result yet, in plan order: what a resume still has to judge."""
        done = self.recorded_cases(run_id)
        return [name for name in self.planned_cases(run_id) if name not in done]

    def finish_run(self, run_id: str, status: RunStatus = "completed") -> None:
        """Close a run with a final status and its totals.

        A completed run is then checked against its suite's baselines with
        :attr:`policy`; each regression found is written as a lesson.

        Raises:
            ValueError: ``status`` is not completed, interrupted or failed.
            StoreError: the run does not exist.
        """
        if status not in FINAL_STATUSES:
            raise ValueError(f"a run finishes as one of {', '.join(FINAL_STATUSES)}, not {status!r}")
        with self._write() as connection:
            if (
                connection.execute(select(runs_table.c.id).where(runs_table.c.id == run_id)).scalar_one_or_none()
                is None
            ):
                raise StoreError(f"unknown run {run_id!r} in store {self.url}")
            totals = self._totals(connection, [run_id]).get(run_id, {})
            connection.execute(
                update(runs_table)
                .where(runs_table.c.id == run_id)
                .values(
                    status=status,
                    finished_at=now(),
                    total=totals.get("recorded", 0),
                    passed=totals.get("passed", 0),
                    failed=totals.get("failed", 0),
                    errored=totals.get("errored", 0),
                    abstained=totals.get("abstained", 0),
                    tokens=totals.get("tokens"),
                    cost=totals.get("cost"),
                    duration=totals.get("duration"),
                )
            )
        if status == "completed":
            self.check_regressions(run_id)

    def check_regressions(
        self, run_id: str, policy: RegressionPolicy | None = None, *, record_lessons: bool = True
    ) -> RunCheck:
        """Compare a run with its suite's baselines; write a lesson per regression when asked."""
        return check_run(self, run_id, policy or self.policy, record_lessons=record_lessons)

    def get_run(self, run_id: str) -> RunInfo:
        """The run with this exact id.

        Raises:
            StoreError: no such run.
        """
        runs = self._runs(runs_table.c.id == run_id, limit=1)
        if not runs:
            raise StoreError(f"no run {run_id!r} in store {self.url}")
        return runs[0]

    def resolve_run(self, ref: str, *, suite: str | None = None) -> RunInfo:
        """A run by id, unique id prefix, or ``last`` (the latest run, of ``suite`` when given).

        Raises:
            StoreError: nothing matches, or a prefix matches several runs.
        """
        if ref in ("last", "latest"):
            found = self.latest_run(suite)
            if found is None:
                where = f" of suite {suite!r}" if suite else ""
                raise StoreError(f"no runs{where} in store {self.url}")
            return found
        exact = self._runs(runs_table.c.id == ref, limit=1)
        if exact:
            return exact[0]
        matches = self._runs(runs_table.c.id.startswith(ref, autoescape=True), limit=2)
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise StoreError(f"run id prefix {ref!r} matches several runs; give more of the id")
        raise StoreError(f"no run {ref!r} in store {self.url}")

    def latest_run(self, suite: str | None = None, *, unfinished: bool = False) -> RunInfo | None:
        """The most recently started run (of ``suite``), or with ``unfinished`` the latest not completed."""
        conditions = []
        if suite is not None:
            conditions.append(suites_table.c.name == suite)
        if unfinished:
            conditions.append(runs_table.c.status != "completed")
        runs = self._runs(*conditions, limit=1)
        return runs[0] if runs else None

    def runs(self, suite: str | None = None, *, status: str | None = None, limit: int | None = None) -> list[RunInfo]:
        """Runs, newest first, optionally of one suite and one status."""
        conditions = []
        if suite is not None:
            conditions.append(suites_table.c.name == suite)
        if status is not None:
            conditions.append(runs_table.c.status == status)
        return self._runs(*conditions, limit=limit)

    def completed_runs_before(self, run: RunInfo, limit: int) -> list[RunInfo]:
        """Up to ``limit`` completed runs of ``run``'s suite that started before it, newest first."""
        before = or_(
            runs_table.c.started_at < run.started_at,
            and_(runs_table.c.started_at == run.started_at, runs_table.c.id < run.id),
        )
        return self._runs(
            suites_table.c.name == run.suite,
            runs_table.c.status == "completed",
            runs_table.c.id != run.id,
            before,
            limit=limit,
        )

    def suites(self) -> list[str]:
        """Names of every suite in the store."""
        with self._read() as connection:
            return list(connection.execute(select(suites_table.c.name).order_by(suites_table.c.name)).scalars())

    def _runs(self, *conditions: Any, limit: int | None) -> list[RunInfo]:
        query = (
            select(runs_table, suites_table.c.name)
            .join(suites_table, suites_table.c.id == runs_table.c.suite_id)
            .where(*conditions)
            .order_by(runs_table.c.started_at.desc(), runs_table.c.id.desc())
        )
        if limit is not None:
            query = query.limit(limit)
        with self._read() as connection:
            rows = connection.execute(query).all()
            totals = self._totals(connection, [row.id for row in rows])
        return [self._run_info(row, totals.get(row.id, {})) for row in rows]

    @staticmethod
    def _run_info(run: Any, totals: Mapping[str, Any]) -> RunInfo:
        """A RunInfo from a row of ``runs`` columns plus the suite name (column ``name``)."""
        started = as_utc(run.started_at)
        assert started is not None
        return RunInfo(
            id=run.id,
            suite=run.name,
            status=run.status,
            started_at=started,
            finished_at=as_utc(run.finished_at),
            git_commit=run.git_commit,
            judge_model=run.judge_model,
            agent_version=run.agent_version,
            config=dict(run.config or {}),
            planned=run.planned,
            recorded=totals.get("recorded", 0),
            passed=totals.get("passed", 0),
            failed=totals.get("failed", 0),
            errored=totals.get("errored", 0),
            abstained=totals.get("abstained", 0),
            tokens=totals.get("tokens"),
            cost=totals.get("cost"),
            duration=totals.get("duration") or 0.0,
        )

    @staticmethod
    def _totals(connection: Connection, run_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Per run: recorded, passed, failed, errored, abstained, tokens, cost, duration (live from results)."""
        if not run_ids:
            return {}

        def count(status: Status) -> Any:
            return func.sum(case((results_table.c.status == status.value, 1), else_=0))

        query = (
            select(
                results_table.c.run_id,
                func.count(),
                count(Status.PASS),
                count(Status.FAIL),
                count(Status.ERROR),
                count(Status.ABSTAIN),
                func.sum(results_table.c.tokens),
                func.sum(results_table.c.cost),
                func.sum(results_table.c.duration),
            )
            .where(results_table.c.run_id.in_(list(run_ids)))
            .group_by(results_table.c.run_id)
        )
        totals: dict[str, dict[str, Any]] = {}
        for run_id, recorded, passed, failed, errored, abstained, tokens, cost, duration in connection.execute(query):
            totals[run_id] = {
                "recorded": int(recorded),
                "passed": int(passed or 0),
                "failed": int(failed or 0),
                "errored": int(errored or 0),
                "abstained": int(abstained or 0),
                "tokens": None if tokens is None else int(tokens),
                "cost": None if cost is None else float(cost),
                "duration": float(duration or 0.0),
            }
        return totals

    # Records ----------------------------------------------------------------------------------

    def run_records(self, run_id: str) -> list[CaseRecord]:
        """The whole run's records in plan order, judgment trees rebuilt (resumed parts included)."""
        return list(self.iter_records(run_id))

    def records(self, run_id: str, *, cases: Collection[str] | None = None) -> StoredRecords:
        """The run's records as a sequence read from the store on each pass (flat memory for any size).

        Args:
            run_id: The run.
            cases: Only these cases (None: every recorded case).
        """
        # Smaller batches than a bulk read: a report pass holds one batch of rebuilt trees at a time.
        return StoredRecords(
            self.case_outcomes(run_id),
            lambda wanted: self.iter_records(run_id, batch=STREAM_BATCH, cases=wanted),
            cases=cases,
        )

    def iter_records(
        self, run_id: str, *, batch: int = READ_BATCH, cases: Collection[str] | None = None
    ) -> Iterator[CaseRecord]:
        """Stream a run's records in plan order, ``batch`` results at a time (flat memory for big runs).

        Args:
            run_id: The run.
            batch: Results read at a time.
            cases: Only these cases (None: every recorded case); the rows of other cases are
                skipped before their judgment trees are decoded or rebuilt.
        """
        query = _in_plan_order(select(*RESULT_COLUMNS), run_id)
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

    # Metrics and lessons ----------------------------------------------------------------------

    def run_metrics(self, run_id: str) -> dict[str, Rate]:
        """Pass rates of a run: ``overall`` (cases) and one per cascade tier.

        A tier's rate counts the judgments of that tier (the top-level children
        of cascade judgments), one per case, or per round when rounds are
        judged by a cascade; only cases that reached the tier count.
        """
        passed = func.sum(case((judgments_table.c.status == Status.PASS.value, 1), else_=0))
        with self._read() as connection:
            metrics: dict[str, Rate] = {}
            total, passes = connection.execute(
                select(func.count(), func.sum(case((results_table.c.status == Status.PASS.value, 1), else_=0))).where(
                    results_table.c.run_id == run_id
                )
            ).one()
            if total:
                metrics["overall"] = Rate(int(passes or 0), int(total))
            rows = connection.execute(
                select(judgments_table.c.tier, func.count(), passed)
                .where(
                    judgments_table.c.run_id == run_id,
                    judgments_table.c.depth == 1,
                    judgments_table.c.tier.is_not(None),
                )
                .group_by(judgments_table.c.tier)
                .order_by(judgments_table.c.tier)
            )
            for tier, count, tier_passed in rows:
                metrics[str(tier)] = Rate(int(tier_passed or 0), int(count))
        return metrics

    def failing_cases(
        self, run_id: str, metric: str, *, limit: int = FAILING_LIMIT
    ) -> tuple[list[dict[str, Any]], int]:
        """Cases that did not pass ``metric`` (``overall`` or a tier) with their reasons, and how many in all."""
        with self._read() as connection:
            if metric == "overall":
                condition = and_(results_table.c.run_id == run_id, results_table.c.status != Status.PASS.value)
                total = connection.execute(
                    select(func.count()).select_from(results_table).where(condition)
                ).scalar_one()
                rows = connection.execute(
                    select(
                        results_table.c.case_name,
                        results_table.c.status,
                        results_table.c.reasoning,
                        results_table.c.error,
                    )
                    .where(condition)
                    .order_by(results_table.c.id)
                    .limit(limit)
                ).all()
                failing = [
                    {"case": name, "status": status, "reason": error or reasoning}
                    for name, status, reasoning, error in rows
                ]
                return failing, int(total)
            condition = and_(
                judgments_table.c.run_id == run_id,
                judgments_table.c.depth == 1,
                judgments_table.c.tier == metric,
                judgments_table.c.status != Status.PASS.value,
            )
            total = connection.execute(select(func.count()).select_from(judgments_table).where(condition)).scalar_one()
            tier_rows = connection.execute(
                select(
                    results_table.c.case_name,
                    judgments_table.c.round_index,
                    judgments_table.c.status,
                    judgments_table.c.reasoning,
                )
                .join(results_table, results_table.c.id == judgments_table.c.result_id)
                .where(condition)
                .order_by(judgments_table.c.id)
                .limit(limit)
            ).all()
            failing = []
            for name, round_index, status, reasoning in tier_rows:
                label = name if round_index is None else f"{name} (round {round_index + 1})"
                failing.append({"case": label, "status": status, "reason": reasoning})
            return failing, int(total)

    def add_lesson(
        self,
        run_id: str,
        *,
        metric: str,
        baseline: float,
        current: float,
        drop: float,
        threshold: float,
        failing: list[dict[str, Any]],
        text: str,
    ) -> bool:
        """Store a lesson; False when the run already has one for this metric."""
        with self._write() as connection:
            suite_key = connection.execute(
                select(runs_table.c.suite_id).where(runs_table.c.id == run_id)
            ).scalar_one_or_none()
            if suite_key is None:
                raise StoreError(f"unknown run {run_id!r} in store {self.url}")
            statement = (
                dialect_insert(connection, lessons_table)
                .values(
                    suite_id=suite_key,
                    run_id=run_id,
                    metric=metric,
                    baseline=baseline,
                    current=current,
                    drop=drop,
                    threshold=threshold,
                    failing=to_jsonable(failing),
                    text=to_jsonable(text),
                    created_at=now(),
                )
                .on_conflict_do_nothing(index_elements=["run_id", "metric"])
                .returning(lessons_table.c.id)
            )
            return connection.execute(statement).scalar_one_or_none() is not None

    def lessons(self, suite: str | None = None, *, topic: str | None = None, limit: int | None = 20) -> list[Lesson]:
        """Lessons, newest first; ``topic`` matches a metric (tier) name or any word of the lesson text."""
        query = (
            select(lessons_table, suites_table.c.name)
            .join(suites_table, suites_table.c.id == lessons_table.c.suite_id)
            .order_by(lessons_table.c.created_at.desc(), lessons_table.c.id.desc())
        )
        if suite is not None:
            query = query.where(suites_table.c.name == suite)
        if topic:
            needle = topic.lower()
            query = query.where(
                or_(lessons_table.c.metric == topic, func.lower(lessons_table.c.text).contains(needle, autoescape=True))
            )
        if limit is not None:
            query = query.limit(limit)
        with self._read() as connection:
            return [
                Lesson(
                    id=row.id,
                    suite=row.name,
                    run_id=row.run_id,
                    metric=row.metric,
                    baseline=row.baseline,
                    current=row.current,
                    drop=row.drop,
                    threshold=row.threshold,
                    failing=list(row.failing or []),
                    text=row.text,
                    created_at=as_utc(row.created_at),
                )
                for row in connection.execute(query)
            ]

    # Suite files ------------------------------------------------------------------------------

    def import_suite(
        self,
        name: str,
        cases: Sequence[tuple[str, Mapping[str, Any]]],
        *,
        agent: Mapping[str, Any] | None = None,
        defaults: Mapping[str, Any] | None = None,
    ) -> dict[str, int]:
        """Make ``cases`` the suite's current cases (new versions for edited ones, others retired).

        Returns counts: ``added`` (new names), ``changed`` (new version of a
        known case), ``unchanged`` and ``retired`` (current before, absent now).
        """
        with self._write() as connection:
            suite_key = suite_id(connection, name)
            assert suite_key is not None
            before = case_names(connection, suite_key)
            versions_before = set(before.values())
            versions = upsert_case_versions(connection, suite_key, cases)
            retired = retire_cases(connection, suite_key, set(versions))
            connection.execute(
                update(suites_table)
                .where(suites_table.c.id == suite_key)
                .values(
                    agent=to_jsonable(agent) if agent is not None else None,
                    defaults=to_jsonable(defaults) if defaults is not None else None,
                    updated_at=now(),
                )
            )
        added = sum(1 for n in versions if n not in before)
        unchanged = sum(1 for v in versions.values() if v in versions_before)
        return {
            "added": added,
            "changed": len(versions) - added - unchanged,
            "unchanged": unchanged,
            "retired": retired,
        }

    def export_suite(self, name: str) -> dict[str, Any]:
        """The suite's current cases in the suite-file shape ``{name, agent, defaults, cases}``.

        Raises:
            StoreError: no such suite.
        """
        with self._read() as connection:
            row = connection.execute(select(suites_table).where(suites_table.c.name == name)).one_or_none()
            if row is None:
                raise StoreError(f"no suite {name!r} in store {self.url}")
            cases = current_cases(connection, row.id)
        data: dict[str, Any] = {"name": name}
        if row.agent is not None:
            data["agent"] = row.agent
        if row.defaults is not None:
            data["defaults"] = row.defaults
        data["cases"] = [
            definition if "name" in definition else {"name": case_name, **definition} for case_name, definition in cases
        ]
        return data


def open_store(url: str | None = None, *, policy: RegressionPolicy | None = None, busy_timeout: float = 30.0) -> Store:
    """Open (creating and migrating as needed) the store at ``url``.

    ``url`` defaults to ``JURYBOX_STORE``, then ``sqlite:///.jurybox/jurybox.db``
    (its folder is created). ``postgresql://`` URLs use psycopg 3.

    Raises:
        StoreVersionError: the store was written by a newer jurybox.
        StoreError: the URL is invalid or the database is not a jurybox store.
    """
    engine = create_store_engine(resolve_url(url), busy_timeout=busy_timeout)
    try:
        migrate(engine)
    except BaseException:
        engine.dispose()
        raise
    return Store(engine, policy=policy)


PreparedRows = tuple[str, tuple[Any, ...], list[tuple[Any, ...]], list[tuple[Any, ...]]]
"""A record's case name, its result row, and its round and judgment rows, without what only the insert knows."""


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
