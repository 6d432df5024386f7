"""Runs (``store.runs``): starting and finishing them, and finding them again (by id, prefix, suite or status)."""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping, Sequence
from typing import Any, Literal, Unpack

from sqlalchemy import and_, case, func, insert, or_, select, update
from sqlalchemy.engine import Connection

from jurybox.core import PlannedCases, RunDetails, Status
from jurybox.store._cases import batches, lock_suite, now, suite_id
from jurybox.store._errors import StoreError
from jurybox.store._json import db_jsonable
from jurybox.store._models import RunInfo, as_utc
from jurybox.store._plans import PlanProgress, link_results, plan_chunk, progress
from jurybox.store._repository import Repository
from jurybox.store._schema import results_table, runs_table, suites_table

PLAN_CHUNK = 2_000
"""Cases of a run's plan stored per step: a plan of any size holds one chunk in memory."""

RunStatus = Literal["running", "completed", "interrupted", "failed"]
FINAL_STATUSES: tuple[str, ...] = ("completed", "interrupted", "failed")
_DONE = ("completed",)  # the runs a baseline averages by default

TOTAL_COLUMNS = {
    "recorded": "total",
    "passed": "passed",
    "failed": "failed",
    "errored": "errored",
    "abstained": "abstained",
    "tokens": "tokens",
    "cost": "cost",
    "duration": "duration",
    "unpriced_calls": "unpriced_calls",
    "cost_unknown": "cost_unknown",
}
"""Each total :func:`run_totals` counts -> the ``runs`` column ``finish_run`` writes it to."""

NO_RESULTS: dict[str, Any] = {
    "recorded": 0,
    "passed": 0,
    "failed": 0,
    "errored": 0,
    "abstained": 0,
    "tokens": None,
    "cost": None,
    "duration": None,
    "unpriced_calls": 0,
    "cost_unknown": 0,
}
"""The totals of a run with no results yet (no token or cost reported: unknown, not zero)."""


class RunRepository(Repository):
    """The ``runs`` and ``run_cases`` tables: a run's settings, plan, status and totals."""

    def begin(
        self, suite: str, *, cases: PlannedCases, planned: int | None = None, **details: Unpack[RunDetails]
    ) -> str:
        """Start a run of ``suite`` over ``cases`` and return its id.

        ``cases`` is name -> definition, or (name, definition) pairs read once (a plan streamed
        from a cases file): it is written ``PLAN_CHUNK`` cases at a time, so planning a million
        cases holds one chunk. Each definition is stored as a version of its case (a new version
        when its content changed), and the run records which versions it ran. All or nothing:
        one transaction, so an error raised by the pairs themselves (a bad line of a cases
        file) leaves no run either.

        A big plan is better written as the run goes: ``cases`` its first chunk, ``planned`` the
        size of the whole, and the rest with :meth:`extend_plan` (what the runner does).

        Args:
            suite: The suite's name (created in the store on its first run).
            cases: The run's plan, or its first chunk.
            planned: Cases the whole plan will hold, when ``cases`` is only its start (None: ``cases`` is all of it).
            **details: What the run records about itself (``jurybox.core.RunDetails``):
                ``judge_model``, ``agent_version``, ``git_commit`` and ``config`` (a mapping).

        Raises:
            ValueError: no suite name, or a case name given twice (nothing is written).
        """
        if not suite:
            raise ValueError("runs.begin needs a suite name")
        pairs = cases.items() if isinstance(cases, Mapping) else cases
        started = now()
        run_id = f"{started:%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"
        with self._write() as connection:
            suite_key = suite_id(connection, suite)
            assert suite_key is not None
            lock_suite(connection, suite_key)  # once: the chunks below are one planner's turn
            # The run's row first, as its plan rows reference it; how many it planned is known last.
            connection.execute(
                insert(runs_table).values(
                    id=run_id,
                    suite_id=suite_key,
                    status="running",
                    git_commit=details.get("git_commit"),
                    judge_model=details.get("judge_model"),
                    agent_version=details.get("agent_version"),
                    config=db_jsonable(dict(details.get("config") or {})),
                    experiment_id=details.get("experiment_id"),
                    variant=details.get("variant"),
                    planned=0,
                    started_at=started,
                    finished_at=None,
                    total=0,
                    passed=0,
                    failed=0,
                    errored=0,
                    abstained=0,
                )
            )
            written = 0
            for part in batches(pairs, PLAN_CHUNK):
                plan_chunk(connection, run_id, suite_key, part, written)
                written += len(part)
            size = written if planned is None else max(planned, written)
            connection.execute(update(runs_table).where(runs_table.c.id == run_id).values(planned=size))
        return run_id

    def extend_plan(
        self, run_id: str, cases: Sequence[tuple[str, Mapping[str, Any]]], *, first: int, last: bool = False
    ) -> None:
        """Add a chunk to a run's plan, at positions ``first`` on, in one short transaction.

        What the runner calls for each chunk after the first while the run's cases run, so the
        store's write lock is held one chunk at a time and other commands write in between.

        Args:
            run_id: The run, begun with ``planned`` set to the whole plan's size.
            cases: The chunk: (name, definition) pairs, as ``begin`` takes them.
            first: How many cases the plan held before this chunk.
            last: The plan ends with this chunk: the run's ``planned`` becomes exactly
                ``first + len(cases)`` (what was written, whatever ``begin`` was told).

        Raises:
            ValueError: a name of the chunk is in the plan already, or twice in the chunk (nothing is written).
            StoreError: no such run.
        """
        with self._write() as connection:
            row = connection.execute(
                select(runs_table.c.suite_id, runs_table.c.planned).where(runs_table.c.id == run_id)
            ).one_or_none()
            if row is None:
                raise StoreError(f"unknown run {run_id!r} in store {self.url}")
            lock_suite(connection, row.suite_id)
            if cases:
                plan_chunk(connection, run_id, row.suite_id, cases, first)
            size = first + len(cases)
            if last or size > row.planned:
                connection.execute(update(runs_table).where(runs_table.c.id == run_id).values(planned=size))

    def plan_progress(self, run_id: str) -> PlanProgress:
        """How much of the run's plan is stored, and the selection the rest of it comes from.

        Raises:
            StoreError: no such run.
        """
        with self._read() as connection:
            found = progress(connection, run_id)
        if found is None:
            raise StoreError(f"unknown run {run_id!r} in store {self.url}")
        return found

    def finish(self, run_id: str, status: RunStatus = "completed") -> None:
        """Close a run's row with a final status and its totals.

        Only the run's row: :meth:`jurybox.store.Store.finish_run` calls this and then checks a
        completed run for regressions, which is what a finished run should get.

        Raises:
            ValueError: ``status`` is not completed, interrupted or failed.
            StoreError: the run does not exist.
        """
        if status not in FINAL_STATUSES:
            raise ValueError(f"a run finishes as one of {', '.join(FINAL_STATUSES)}, not {status!r}")
        with self._write() as connection:
            # FOR UPDATE: results being written to the run (they read its status FOR SHARE) commit
            # first, and later ones see it finished: the totals on the row are every result's.
            found = select(runs_table.c.id).where(runs_table.c.id == run_id).with_for_update()
            if connection.execute(found).scalar_one_or_none() is None:
                raise StoreError(f"unknown run {run_id!r} in store {self.url}")
            link_results(connection, run_id)  # results written before their plan rows (workers, actors)
            totals = {**NO_RESULTS, **run_totals(connection, [run_id]).get(run_id, {})}
            finished = now()
            connection.execute(
                update(runs_table)
                .where(runs_table.c.id == run_id)
                .values(
                    status=status,
                    finished_at=finished,
                    **{column: totals[name] for name, column in TOTAL_COLUMNS.items()},
                )
            )
            # Imported here: the summaries read the browser's models, which import the whole store.
            from jurybox.store._run_summaries import write_summary

            write_summary(connection, run_id, finished)

    def update_config(self, run_id: str, values: Mapping[str, Any]) -> None:
        """Merge ``values`` into the run's config, replacing keys it already has.

        Raises:
            StoreError: the run does not exist.
        """
        with self._write() as connection:
            config = connection.execute(select(runs_table.c.config).where(runs_table.c.id == run_id)).one_or_none()
            if config is None:
                raise StoreError(f"unknown run {run_id!r} in store {self.url}")
            merged = {**dict(config[0] or {}), **db_jsonable(dict(values))}
            connection.execute(update(runs_table).where(runs_table.c.id == run_id).values(config=merged))

    def get(self, run_id: str) -> RunInfo:
        """The run with this exact id.

        Raises:
            StoreError: no such run.
        """
        runs = self._select(runs_table.c.id == run_id, limit=1)
        if not runs:
            raise StoreError(f"no run {run_id!r} in store {self.url}")
        return runs[0]

    def resolve(self, ref: str, *, suite: str | None = None) -> RunInfo:
        """A run by id, unique id prefix, ``last`` (the latest run, of ``suite`` when given) or ``last~N``.

        ``last~1`` is the run before the latest, ``last~2`` the one before that (as git's ``HEAD~N``).

        Raises:
            StoreError: nothing matches, or a prefix matches several runs.
        """
        back = _LAST_BACK.fullmatch(ref.strip())
        if back is not None:
            steps = int(back.group("steps"))
            conditions = [suites_table.c.name == suite] if suite is not None else []
            runs = self._select(*conditions, limit=steps + 1)
            if len(runs) <= steps:
                where = f" of suite {suite!r}" if suite else ""
                raise StoreError(f"{ref}: there are only {len(runs)} run(s){where} in store {self.url}")
            return runs[steps]
        if ref in ("last", "latest"):
            found = self.latest(suite)
            if found is None:
                where = f" of suite {suite!r}" if suite else ""
                raise StoreError(f"no runs{where} in store {self.url}")
            return found
        exact = self._select(runs_table.c.id == ref, limit=1)
        if exact:
            return exact[0]
        matches = self._select(runs_table.c.id.startswith(ref, autoescape=True), limit=2)
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise StoreError(f"run id prefix {ref!r} matches several runs; give more of the id")
        raise StoreError(f"no run {ref!r} in store {self.url}")

    def latest(self, suite: str | None = None, *, unfinished: bool = False) -> RunInfo | None:
        """The most recently started run (of ``suite``), or with ``unfinished`` the latest not completed."""
        conditions = []
        if suite is not None:
            conditions.append(suites_table.c.name == suite)
        if unfinished:
            conditions.append(runs_table.c.status != "completed")
        runs = self._select(*conditions, limit=1)
        return runs[0] if runs else None

    def newest(self, suite: str | None = None, *, status: str | None = None, limit: int | None = None) -> list[RunInfo]:
        """Runs, newest first, optionally of one suite and one status."""
        conditions = []
        if suite is not None:
            conditions.append(suites_table.c.name == suite)
        if status is not None:
            conditions.append(runs_table.c.status == status)
        return self._select(*conditions, limit=limit)

    def before(self, run: RunInfo, limit: int, *, statuses: Sequence[str] = _DONE) -> list[RunInfo]:
        """Up to ``limit`` runs of ``run``'s suite that started before it and ended as ``statuses``, newest first."""
        return self._select(
            suites_table.c.name == run.suite,
            runs_table.c.status.in_(list(statuses)),
            runs_table.c.id != run.id,
            started_before(run),
            limit=limit,
        )

    def of_experiment(self, experiment_id: str) -> list[RunInfo]:
        """The runs of one experiment (one per variant, a variant resumed keeps its run), oldest first."""
        return self._select(runs_table.c.experiment_id == experiment_id, limit=None)[::-1]

    def resolve_experiment(self, ref: str) -> str:
        """An experiment's id from its id, a unique prefix of it, or ``last`` (the latest experiment).

        Raises:
            StoreError: nothing matches, or a prefix matches several experiments.
        """
        column = runs_table.c.experiment_id
        if ref in ("last", "latest"):
            found = self._select(column.is_not(None), limit=1)
            if not found or found[0].experiment_id is None:
                raise StoreError(f"no experiments in store {self.url}")
            return found[0].experiment_id
        with self._read() as connection:
            ids = list(
                connection.execute(select(column).where(column.startswith(ref, autoescape=True)).distinct().limit(2))
                .scalars()
                .all()
            )
        if ref in ids or len(ids) == 1:
            return ref if ref in ids else str(ids[0])
        if ids:
            raise StoreError(f"experiment id prefix {ref!r} matches several experiments; give more of the id")
        raise StoreError(f"no experiment {ref!r} in store {self.url}")

    def latest_experiment(self, suites: Sequence[str]) -> str | None:
        """The id of the latest experiment with a run of one of ``suites`` (a suite's variants' names)."""
        found = self._select(runs_table.c.experiment_id.is_not(None), suites_table.c.name.in_(list(suites)), limit=1)
        return found[0].experiment_id if found else None

    def suite_names(self, limit: int = 50) -> list[str]:
        """Names of the suites that have runs, alphabetically, at most ``limit`` of them."""
        query = (
            select(suites_table.c.name)
            .where(suites_table.c.id.in_(select(runs_table.c.suite_id)))
            .order_by(suites_table.c.name)
            .limit(limit)
        )
        with self._read() as connection:
            return [str(name) for name in connection.execute(query).scalars()]

    def _select(self, *conditions: Any, limit: int | None) -> list[RunInfo]:
        """Runs matching ``conditions``, newest first, with their totals.

        A finished run's totals are the ones ``finish`` wrote on its row (a baseline of five
        10,000-case runs is one query, not an aggregate over 50,000 results); a running run's
        are counted live from its results. A result written to a finished run reopens it.
        """
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
            totals = run_totals(connection, [row.id for row in rows if not _final(row)])
        return [run_info(row, None if _final(row) else totals.get(row.id, {})) for row in rows]


_LAST_BACK = re.compile(r"(?:last|latest)~(?P<steps>\d{1,6})")
"""``last~N``: the N-th run before the latest."""


def started_before(run: RunInfo) -> Any:
    """A condition on ``runs``: started before ``run`` (the run id breaks a tie on the start time)."""
    return or_(
        runs_table.c.started_at < run.started_at,
        and_(runs_table.c.started_at == run.started_at, runs_table.c.id < run.id),
    )


def _final(row: Any) -> bool:
    """Whether a ``runs`` row is finished with every total on it (they no longer change).

    A run finished before schema 0013 has no ``cost_unknown`` on its row: counted live.
    """
    return row.status in FINAL_STATUSES and row.finished_at is not None and row.cost_unknown is not None


def run_info(run: Any, totals: Mapping[str, Any] | None = None) -> RunInfo:
    """A RunInfo from a row of ``runs`` columns plus the suite name (column ``name``).

    Args:
        run: The row.
        totals: The run's totals as :func:`run_totals` counts them from its results; None takes
            the totals ``finish_run`` wrote on the row (a final run's, read with no aggregation).
    """
    if totals is None:
        totals = {name: getattr(run, column) for name, column in TOTAL_COLUMNS.items()}
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
        unpriced_calls=totals.get("unpriced_calls"),
        cost_unknown=totals.get("cost_unknown"),
        experiment_id=getattr(run, "experiment_id", None),
        variant=getattr(run, "variant", None),
    )


def run_totals(connection: Connection, run_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
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
            func.sum(results_table.c.unpriced_calls),
            func.sum(case((results_table.c.cost.is_(None), 1), else_=0)),
        )
        .where(results_table.c.run_id.in_(list(run_ids)))
        .group_by(results_table.c.run_id)
    )
    totals: dict[str, dict[str, Any]] = {}
    for row in connection.execute(query):
        run_id, recorded, passed, failed, errored, abstained, tokens, cost, duration, unpriced, unknown = row
        totals[run_id] = {
            "recorded": int(recorded),
            "passed": int(passed or 0),
            "failed": int(failed or 0),
            "errored": int(errored or 0),
            "abstained": int(abstained or 0),
            "tokens": None if tokens is None else int(tokens),
            "cost": None if cost is None else float(cost),
            "duration": float(duration or 0.0),
            "unpriced_calls": int(unpriced or 0),
            "cost_unknown": int(unknown or 0),
        }
    return totals
