"""Read-only queries for browsing a store: pages of runs and cases, one case, comparisons and trends.

The dashboard (``jurybox serve``) reads through this repository. Every query is
bounded: lists come a page at a time (``LIMIT``/``OFFSET`` on the server), a
case is read by its unique ``(run_id, case_name)`` key, and nothing reads a
whole run's verdict trees.

Aggregates over a run that is final (completed, interrupted or failed) do not
change until the run is resumed, which reopens it and clears ``finished_at``,
so they are kept in a small LRU cache keyed by the run id *and* its status and
finish time: a resumed-and-finished run gets a new key, never a stale entry.
A running run is always read live.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, Literal, TypeVar

from sqlalchemy import Text, and_, case, cast, exists, func, literal, or_, select, true, type_coerce
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Connection, Engine

from jurybox.core import CaseRecord, Judgment, Status
from jurybox.store._baselines import RegressionPolicy, check_metric
from jurybox.store._compare import Latency
from jurybox.store._models import Rate, RunInfo, as_utc
from jurybox.store._rows import RESULT_COLUMNS, TreeReader, record_from_row, rounds_of
from jurybox.store._schema import (
    cases_table,
    judgments_table,
    results_table,
    run_cases_table,
    runs_table,
    suites_table,
)

T = TypeVar("T")

FINAL = ("completed", "interrupted", "failed")
MAX_PAGE = 500
"""The most rows one page may ask for; bigger requests are cut to it."""

CaseSort = Literal["attention", "name", "status", "score", "duration", "cost", "plan"]
CASE_SORTS: tuple[str, ...] = ("attention", "name", "status", "score", "duration", "cost", "plan")

CompareKind = Literal["broke", "fixed", "still_failing", "scores", "new_errors", "status", "only_a", "only_b"]
COMPARE_KINDS: tuple[str, ...] = (
    "broke",
    "fixed",
    "still_failing",
    "scores",
    "new_errors",
    "status",
    "only_a",
    "only_b",
)

_SEVERITY = {Status.FAIL.value: 0, Status.ERROR.value: 1, Status.ABSTAIN.value: 2, Status.PASS.value: 3}
"""Failing cases first: what a person opening a run looks for."""


@dataclass(frozen=True)
class Paged(Generic[T]):
    """One page of rows and how many rows match in all."""

    items: list[T]
    total: int
    offset: int
    limit: int


@dataclass(frozen=True)
class TierStats:
    """One cascade tier in one run: how many verdicts reached it, passed it, and its mean score."""

    name: str
    ran: int
    passed: int
    mean_score: float | None
    decided: int
    not_needed: int
    """Cascade verdicts that never reached this tier because an earlier tier decided."""

    @property
    def rate(self) -> float | None:
        return self.passed / self.ran if self.ran else None


@dataclass(frozen=True)
class JudgeStats:
    """One judge (a node path of the verdict trees) in one run."""

    path: str
    judge: str
    ran: int
    passed: int
    mean_score: float | None

    @property
    def rate(self) -> float | None:
        return self.passed / self.ran if self.ran else None


@dataclass(frozen=True)
class RunStats:
    """The aggregates of one run that need a pass over its rows (cached once the run is final)."""

    metrics: dict[str, Rate]
    """``overall`` and one per tier: exactly what ``Store.run_metrics`` and the gate compute."""
    tiers: tuple[TierStats, ...]
    judges: tuple[JudgeStats, ...]
    latency: Latency
    tags: tuple[str, ...]
    last_recorded: datetime | None


@dataclass(frozen=True)
class CaseRow:
    """One case of a run as a table shows it: no trees beyond the verdict, texts cut short."""

    case: str
    status: Status
    score: float | None
    reasoning: str
    error: str | None
    decided_by: str | None
    duration: float
    tokens: int | None
    cost: float | None
    tags: tuple[str, ...]
    judgment: Judgment


@dataclass(frozen=True)
class CaseQuery:
    """Filters and order of a run's case table."""

    status: str | None = None
    tag: str | None = None
    search: str | None = None
    min_score: float | None = None
    max_score: float | None = None
    sort: str = "attention"
    descending: bool = False
    offset: int = 0
    limit: int = 50


@dataclass(frozen=True)
class ComparedSide:
    """A case's status, score and duration in one run of a comparison."""

    status: Status
    score: float | None
    duration: float


@dataclass(frozen=True)
class ComparedCase:
    """One case in run A and run B (either side None when the case is only in the other run)."""

    case: str
    a: ComparedSide | None
    b: ComparedSide | None

    @property
    def score_delta(self) -> float | None:
        if self.a is None or self.b is None or self.a.score is None or self.b.score is None:
            return None
        return self.b.score - self.a.score


@dataclass(frozen=True)
class ComparisonSummary:
    """Run A against run B: the counts of ``jurybox compare`` and, per kind, the cases in display order.

    The kinds follow ``CaseChange``: ``broke`` (passed in A, not in B), ``fixed``
    (the reverse), ``still_failing`` (not passed in either), ``scores`` (score
    moved, largest move first), ``new_errors`` (ERROR in B, not in A),
    ``status`` (status changed), ``only_a`` and ``only_b``.
    """

    run_a: RunInfo
    run_b: RunInfo
    latency_a: Latency
    latency_b: Latency
    common: int
    names: dict[str, tuple[str, ...]]

    @property
    def counts(self) -> dict[str, int]:
        return {kind: len(names) for kind, names in self.names.items()}

    @property
    def flipped(self) -> int:
        return len(self.names["broke"]) + len(self.names["fixed"])

    @property
    def cost_delta(self) -> float | None:
        if self.run_a.cost is None or self.run_b.cost is None:
            return None
        return self.run_b.cost - self.run_a.cost


@dataclass(frozen=True)
class TrendPoint:
    """One run on a suite's trend, with each metric's rolling baseline and gate state at that run."""

    run: RunInfo
    stats: RunStats
    baselines: dict[str, float | None] = field(default_factory=dict)
    states: dict[str, str] = field(default_factory=dict)
    thresholds: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class CaseHistoryRow:
    """One case's status in each of a suite's recent runs (None where the run has no result for it)."""

    case: str
    statuses: tuple[str | None, ...]
    flips: int
    passed: int
    ran: int


class _Cache:
    """A thread-safe LRU of computed aggregates of final runs."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[Any, ...], compute: Callable[[], T], *, keep: bool) -> T:
        if not keep:
            return compute()
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                value: T = self._items[key]
                return value
        value = compute()
        self.put(key, value)
        return value

    def __contains__(self, key: tuple[Any, ...]) -> bool:
        with self._lock:
            return key in self._items

    def put(self, key: tuple[Any, ...], value: Any) -> None:
        with self._lock:
            self._items[key] = value
            while len(self._items) > self._size:
                self._items.popitem(last=False)


def _final_key(run: RunInfo) -> tuple[Any, ...]:
    return (run.id, run.status, run.finished_at)


class StoreBrowser:
    """Read-only, paginated queries over a store's runs, for the dashboard and scripts.

    Build it on an open store's engine: ``StoreBrowser(store.engine)``. It never
    writes, and it is safe to share between threads.
    """

    def __init__(self, engine: Engine, *, cache_size: int = 4096, comparison_cache: int = 8) -> None:
        self._engine = engine
        self._stats = _Cache(cache_size)
        # A comparison of two 100,000-case runs holds their case names: keep only a few.
        self._comparisons = _Cache(comparison_cache)

    def _read(self) -> Any:
        return _ReadConnection(self._engine)

    # Runs -------------------------------------------------------------------------------------

    def suites(self) -> list[str]:
        """Every suite name, sorted."""
        with self._read() as connection:
            return list(connection.execute(select(suites_table.c.name).order_by(suites_table.c.name)).scalars())

    def runs_page(
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
        offset, limit = _bounds(offset, limit)
        with self._read() as connection:
            count = select(func.count()).select_from(
                runs_table.join(suites_table, suites_table.c.id == runs_table.c.suite_id)
            )
            total = connection.execute(count.where(*conditions)).scalar_one()
            runs = _runs(connection, *conditions, offset=offset, limit=limit)
        return Paged(runs, int(total), offset, limit)

    def run(self, run_id: str) -> RunInfo | None:
        """The run with exactly this id, or None."""
        with self._read() as connection:
            found = _runs(connection, runs_table.c.id == run_id, limit=1)
        return found[0] if found else None

    def previous_run(self, run: RunInfo, *, completed: bool = False) -> RunInfo | None:
        """The suite's run that started just before ``run`` (the latest completed one with ``completed``)."""
        before = or_(
            runs_table.c.started_at < run.started_at,
            and_(runs_table.c.started_at == run.started_at, runs_table.c.id < run.id),
        )
        conditions = [suites_table.c.name == run.suite, runs_table.c.id != run.id, before]
        if completed:
            conditions.append(runs_table.c.status == "completed")
        with self._read() as connection:
            found = _runs(connection, *conditions, limit=1)
        return found[0] if found else None

    def run_stats(self, run: RunInfo) -> RunStats:
        """Tier and judge pass rates, mean scores, latency percentiles and tags of a run."""
        return self._stats.get(
            ("stats", *_final_key(run)), lambda: self._batch_stats([run.id])[run.id], keep=_is_final(run)
        )

    def check(self, run: RunInfo, policy: RegressionPolicy) -> list[Any]:
        """The gate's verdict on ``run`` (``MetricCheck`` per metric), as ``jurybox gate`` computes it."""
        current = self.run_stats(run).metrics
        with self._read() as connection:
            earlier = _runs(
                connection,
                suites_table.c.name == run.suite,
                runs_table.c.status == "completed",
                runs_table.c.id != run.id,
                or_(
                    runs_table.c.started_at < run.started_at,
                    and_(runs_table.c.started_at == run.started_at, runs_table.c.id < run.id),
                ),
                limit=policy.window,
            )
        history = [self.run_stats(past).metrics for past in earlier]
        return [
            check_metric(name, rate, [m[name].value for m in history if name in m], policy)
            for name, rate in current.items()
        ]

    # Cases ------------------------------------------------------------------------------------

    def case_page(self, run: RunInfo, query: CaseQuery) -> Paged[CaseRow]:
        """One page of a run's cases, filtered and sorted on the server."""
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
        if query.search:
            needle = query.search
            conditions.append(
                or_(
                    r.c.case_name.icontains(needle, autoescape=True),
                    r.c.reasoning.icontains(needle, autoescape=True),
                    r.c.error.icontains(needle, autoescape=True),
                )
            )
        offset, limit = _bounds(query.offset, query.limit)
        order = _case_order(query.sort, query.descending)
        columns = (
            r.c.case_name,
            r.c.status,
            r.c.score,
            func.substr(r.c.reasoning, 1, 600),
            func.substr(r.c.error, 1, 600),
            r.c.decided_by,
            r.c.duration,
            r.c.tokens,
            r.c.cost,
            cast(r.c.tags, Text),
            RESULT_COLUMNS[[c.name for c in r.c].index("judgment")],
        )
        with self._read() as connection:
            if query.tag:
                conditions.append(_has_tag(connection, query.tag))
            statement = select(*columns).where(*conditions)
            if query.sort == "plan":
                plan = run_cases_table
                statement = statement.outerjoin(
                    plan, and_(plan.c.run_id == r.c.run_id, plan.c.case_name == r.c.case_name)
                )
            plain = not (query.tag or query.search or query.min_score is not None or query.max_score is not None)
            if plain and not query.status:
                total = run.recorded
            elif plain and query.status in _STATUS_COLUMNS:
                total = getattr(run, _STATUS_COLUMNS[query.status])
            elif plain and query.status == "not_passed":
                total = run.recorded - run.passed
            else:
                total = connection.execute(select(func.count()).select_from(r).where(*conditions)).scalar_one()
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
                tags=tuple(str(t) for t in _json_list(tags)),
                judgment=reader.judgment(judgment),
            )
            for name, status, score, reasoning, error, decided_by, duration, tokens, cost, tags, judgment in rows
        ]
        return Paged(items, int(total), offset, limit)

    def case_record(self, run_id: str, case_name: str) -> CaseRecord | None:
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

    def case_definition(self, run_id: str, case_name: str) -> dict[str, Any] | None:
        """The definition (the suite file's case) of the version this run ran, or None."""
        with self._read() as connection:
            value = connection.execute(
                select(cases_table.c.definition)
                .join(run_cases_table, run_cases_table.c.case_id == cases_table.c.id)
                .where(run_cases_table.c.run_id == run_id, run_cases_table.c.case_name == case_name)
            ).scalar_one_or_none()
        return dict(value) if isinstance(value, dict) else None

    def neighbour_cases(self, run_id: str, case_name: str) -> tuple[str | None, str | None]:
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

    def case_in_runs(self, suite: str, case_name: str, *, limit: int = 20) -> list[tuple[RunInfo, Status | None]]:
        """The case's status in the suite's last ``limit`` runs, newest first (None: not in that run)."""
        with self._read() as connection:
            runs = _runs(connection, suites_table.c.name == suite, limit=_bounds(0, limit)[1])
            found = dict(
                connection.execute(
                    select(results_table.c.run_id, results_table.c.status).where(
                        results_table.c.run_id.in_([run.id for run in runs]),
                        results_table.c.case_name == case_name,
                    )
                ).all()
            )
        return [(run, Status(found[run.id]) if run.id in found else None) for run in runs]

    # Comparisons ------------------------------------------------------------------------------

    def compare(self, run_a: RunInfo, run_b: RunInfo) -> ComparisonSummary:
        """Run A against run B with the figures of ``jurybox compare`` (cached when both runs are final)."""
        key = ("compare", *_final_key(run_a), *_final_key(run_b))
        keep = _is_final(run_a) and _is_final(run_b)
        return self._comparisons.get(key, lambda: self._compute_comparison(run_a, run_b), keep=keep)

    def _sides(self, connection: Connection, run_id: str) -> dict[str, ComparedSide]:
        r = results_table
        rows = connection.execute(
            select(r.c.case_name, r.c.status, r.c.score, r.c.duration).where(r.c.run_id == run_id)
        ).all()
        return {name: ComparedSide(Status(status), score, duration) for name, status, score, duration in rows}

    def _compute_comparison(self, run_a: RunInfo, run_b: RunInfo) -> ComparisonSummary:
        with self._read() as connection:
            sides_a = self._sides(connection, run_a.id)
            sides_b = self._sides(connection, run_b.id)
        names: dict[str, list[str]] = {kind: [] for kind in COMPARE_KINDS}
        deltas: list[tuple[float, str]] = []
        flip_size: dict[str, float] = {}
        common = 0
        for name in sorted(sides_b):
            b = sides_b[name]
            a = sides_a.get(name)
            if a is None:
                names["only_b"].append(name)
                if b.status is Status.ERROR:
                    names["new_errors"].append(name)
                continue
            common += 1
            a_pass, b_pass = a.status is Status.PASS, b.status is Status.PASS
            delta = None if a.score is None or b.score is None else b.score - a.score
            if a_pass and not b_pass:
                names["broke"].append(name)
            elif b_pass and not a_pass:
                names["fixed"].append(name)
            elif not a_pass and not b_pass:
                names["still_failing"].append(name)
            if a_pass != b_pass:
                flip_size[name] = abs(delta) if delta is not None else 1.0
            if a.status is not b.status:
                names["status"].append(name)
            if b.status is Status.ERROR and a.status is not Status.ERROR:
                names["new_errors"].append(name)
            if delta:
                deltas.append((-abs(delta), name))
        names["only_a"] = sorted(name for name in sides_a if name not in sides_b)
        deltas.sort()
        names["scores"] = [name for _, name in deltas]
        # Flipped cases: the biggest change first, as the issue asks of every list of changes.
        for kind in ("broke", "fixed"):
            names[kind].sort(key=lambda n: (-flip_size[n], n))
        return ComparisonSummary(
            run_a,
            run_b,
            Latency.of([side.duration for side in sides_a.values()]),
            Latency.of([side.duration for side in sides_b.values()]),
            common,
            {kind: tuple(items) for kind, items in names.items()},
        )

    def compared_cases(
        self, comparison: ComparisonSummary, kind: str, *, offset: int = 0, limit: int = 50
    ) -> Paged[ComparedCase]:
        """One page of a comparison's cases of one kind, with both sides read from the store."""
        offset, limit = _bounds(offset, limit)
        all_names = comparison.names.get(kind, ())
        wanted = list(all_names[offset : offset + limit])
        r = results_table
        sides: dict[tuple[str, str], ComparedSide] = {}
        if wanted:
            with self._read() as connection:
                rows = connection.execute(
                    select(r.c.run_id, r.c.case_name, r.c.status, r.c.score, r.c.duration).where(
                        r.c.run_id.in_([comparison.run_a.id, comparison.run_b.id]), r.c.case_name.in_(wanted)
                    )
                ).all()
            sides = {
                (run_id, name): ComparedSide(Status(status), score, dur) for run_id, name, status, score, dur in rows
            }
        items = [
            ComparedCase(name, sides.get((comparison.run_a.id, name)), sides.get((comparison.run_b.id, name)))
            for name in wanted
        ]
        return Paged(items, len(all_names), offset, limit)

    # Trends -----------------------------------------------------------------------------------

    def trend(self, suite: str, *, limit: int, policy: RegressionPolicy) -> list[TrendPoint]:
        """The suite's last ``limit`` runs, oldest first, each with its stats, baselines and gate states.

        A point's baseline and state are computed as ``jurybox gate`` would for
        that run: the mean over the ``window`` completed runs before it.
        """
        limit = max(1, min(limit, 5000))
        with self._read() as connection:
            runs = _runs(connection, suites_table.c.name == suite, limit=limit + policy.window)
        runs.reverse()
        self._warm_stats(runs)
        points: list[TrendPoint] = []
        history: list[dict[str, Rate]] = []  # metrics of completed runs so far, oldest first
        first_shown = max(0, len(runs) - limit)
        for index, run in enumerate(runs):
            stats = self.run_stats(run)
            if index >= first_shown:
                baselines: dict[str, float | None] = {}
                states: dict[str, str] = {}
                thresholds: dict[str, float] = {}
                recent = history[-policy.window :][::-1]
                for name, rate in stats.metrics.items():
                    checked = check_metric(name, rate, [m[name].value for m in recent if name in m], policy)
                    baselines[name] = checked.baseline
                    states[name] = checked.state
                    thresholds[name] = checked.threshold
                points.append(TrendPoint(run, stats, baselines, states, thresholds))
            if run.status == "completed":
                history.append(stats.metrics)
        return points

    def _warm_stats(self, runs: Sequence[RunInfo]) -> None:
        """Compute the stats of many final runs not yet cached in a few queries instead of a few per run."""
        missing = [run for run in runs if _is_final(run) and ("stats", *_final_key(run)) not in self._stats]
        for part in _chunks(missing, 200):
            computed = self._batch_stats([run.id for run in part])
            for run in part:
                self._stats.put(("stats", *_final_key(run)), computed[run.id])

    def _batch_stats(self, run_ids: list[str]) -> dict[str, RunStats]:
        """The stats of several runs: one query per aggregate, grouped by run."""
        j = judgments_table
        r = results_table
        passed = func.sum(case((j.c.status == Status.PASS.value, 1), else_=0))
        with self._read() as connection:
            overall = connection.execute(
                select(
                    r.c.run_id,
                    func.count(),
                    func.sum(case((r.c.status == Status.PASS.value, 1), else_=0)),
                    func.max(r.c.recorded_at),
                )
                .where(r.c.run_id.in_(run_ids))
                .group_by(r.c.run_id)
            ).all()
            tier_rows = connection.execute(
                select(j.c.run_id, j.c.tier, func.count(), passed, func.avg(j.c.score))
                .where(j.c.run_id.in_(run_ids), j.c.depth == 1, j.c.tier.is_not(None))
                .group_by(j.c.run_id, j.c.tier)
                .order_by(j.c.run_id, j.c.tier)
            ).all()
            decided_rows = connection.execute(
                select(r.c.run_id, r.c.decided_by, func.count())
                .where(r.c.run_id.in_(run_ids), r.c.decided_by.is_not(None))
                .group_by(r.c.run_id, r.c.decided_by)
            ).all()
            judge_rows = connection.execute(
                select(j.c.run_id, j.c.path, func.min(j.c.judge), func.count(), passed, func.avg(j.c.score))
                .where(j.c.run_id.in_(run_ids), j.c.depth >= 1)
                .group_by(j.c.run_id, j.c.path)
                .order_by(j.c.run_id, j.c.path)
            ).all()
            duration_rows = connection.execute(select(r.c.run_id, r.c.duration).where(r.c.run_id.in_(run_ids))).all()
            tag_rows = connection.execute(
                select(r.c.run_id, cast(r.c.tags, Text)).where(r.c.run_id.in_(run_ids)).distinct()
            ).all()
        durations: dict[str, list[float]] = {run_id: [] for run_id in run_ids}
        for run_id, duration in duration_rows:
            durations[run_id].append(duration)
        tags: dict[str, set[str]] = {run_id: set() for run_id in run_ids}
        for run_id, text in tag_rows:
            tags[run_id].update(str(tag) for tag in _json_list(text))
        decided: dict[tuple[str, str], int] = {(run_id, t): int(n) for run_id, t, n in decided_rows}
        by_run: dict[str, list[Any]] = {run_id: [] for run_id in run_ids}
        for row in tier_rows:
            by_run[row[0]].append(row[1:])
        judges: dict[str, list[JudgeStats]] = {run_id: [] for run_id in run_ids}
        for run_id, path, judge, count, judge_passed, mean in judge_rows:
            judges[run_id].append(JudgeStats(str(path), str(judge), int(count), int(judge_passed or 0), _float(mean)))
        totals = {run_id: (int(n), int(p or 0), last) for run_id, n, p, last in overall}
        result: dict[str, RunStats] = {}
        for run_id in run_ids:
            metrics: dict[str, Rate] = {}
            count_all, passes, last = totals.get(run_id, (0, 0, None))
            if count_all:
                metrics["overall"] = Rate(passes, count_all)
            verdicts = max((int(count) for _, count, _, _ in by_run[run_id]), default=0)
            tiers = []
            for tier, count, tier_passed, mean in by_run[run_id]:
                metrics[str(tier)] = Rate(int(tier_passed or 0), int(count))
                tiers.append(
                    TierStats(
                        str(tier),
                        int(count),
                        int(tier_passed or 0),
                        _float(mean),
                        decided.get((run_id, tier), 0),
                        verdicts - int(count),
                    )
                )
            result[run_id] = RunStats(
                metrics,
                tuple(tiers),
                tuple(judges[run_id]),
                Latency.of(durations[run_id]),
                tuple(sorted(tags[run_id])),
                as_utc(last),
            )
        return result

    def case_history(
        self, suite: str, *, runs: int = 20, offset: int = 0, limit: int = 50
    ) -> tuple[list[RunInfo], Paged[CaseHistoryRow]]:
        """Each case's status over the suite's last ``runs`` runs, flakiest first.

        A case is flaky when it passed in some of those runs and not in others;
        ``flips`` counts the changes between pass and not-pass from run to run.
        """
        offset, limit = _bounds(offset, limit)
        runs = max(1, min(runs, 100))
        r = results_table
        with self._read() as connection:
            recent = _runs(connection, suites_table.c.name == suite, limit=runs)
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


_STATUS_COLUMNS = {"pass": "passed", "fail": "failed", "error": "errored", "abstain": "abstained"}


class _ReadConnection:
    """``with`` a connection in a read transaction (one consistent snapshot per block)."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._connection: Connection | None = None

    def __enter__(self) -> Connection:
        self._connection = self._engine.connect()
        self._connection.begin()
        return self._connection

    def __exit__(self, *_exc: object) -> None:
        assert self._connection is not None
        self._connection.rollback()  # nothing to commit: a read never writes
        self._connection.close()


def _is_final(run: RunInfo) -> bool:
    return run.status in FINAL and run.finished_at is not None


def _bounds(offset: int, limit: int) -> tuple[int, int]:
    return max(0, int(offset)), max(1, min(int(limit), MAX_PAGE))


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def _json_list(text: Any) -> list[Any]:
    """A JSON array column's value as a list, whether the driver decoded it or left it as text."""
    if isinstance(text, list):
        return text
    if not text:
        return []
    try:
        value = json.loads(text)
    except ValueError:
        return []
    return value if isinstance(value, list) else []


def _chunks(items: Sequence[T], size: int) -> Iterable[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


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
    if sort == "plan":
        position = func.coalesce(run_cases_table.c.position, 2**31 - 1)
        return [position.desc() if descending else position, r.c.id]
    column = {"score": r.c.score, "duration": r.c.duration, "cost": r.c.cost}.get(sort)
    if column is None:
        return [name]
    # Unknown values (NULL) last either way: "unknown" is neither cheap nor expensive.
    nulls = case((column.is_(None), 1), else_=0)
    return [nulls, column.desc() if descending else column, r.c.case_name]


def _runs(connection: Connection, *conditions: Any, offset: int = 0, limit: int | None) -> list[RunInfo]:
    """Runs matching ``conditions``, newest first, with their totals.

    A final run's totals are the ones ``finish_run`` wrote; a running run's are
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
    live = _live_totals(connection, [row.id for row in rows if row.status not in FINAL or row.finished_at is None])
    return [_run_info(row, live.get(row.id)) for row in rows]


def _run_info(row: Any, live: dict[str, Any] | None) -> RunInfo:
    started = as_utc(row.started_at)
    assert started is not None
    totals = live or {
        "recorded": row.total,
        "passed": row.passed,
        "failed": row.failed,
        "errored": row.errored,
        "abstained": row.abstained,
        "tokens": row.tokens,
        "cost": row.cost,
        "duration": row.duration,
    }
    return RunInfo(
        id=row.id,
        suite=row.name,
        status=row.status,
        started_at=started,
        finished_at=as_utc(row.finished_at),
        git_commit=row.git_commit,
        judge_model=row.judge_model,
        agent_version=row.agent_version,
        config=dict(row.config or {}) if isinstance(row.config, dict) else {},
        planned=row.planned,
        recorded=int(totals["recorded"] or 0),
        passed=int(totals["passed"] or 0),
        failed=int(totals["failed"] or 0),
        errored=int(totals["errored"] or 0),
        abstained=int(totals["abstained"] or 0),
        tokens=None if totals["tokens"] is None else int(totals["tokens"]),
        cost=None if totals["cost"] is None else float(totals["cost"]),
        duration=float(totals["duration"] or 0.0),
    )


def _live_totals(connection: Connection, run_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Totals of unfinished runs, counted from their results (what ``Store`` reports for them)."""
    if not run_ids:
        return {}
    r = results_table

    def count(status: Status) -> Any:
        return func.sum(case((r.c.status == status.value, 1), else_=0))

    query = (
        select(
            r.c.run_id,
            func.count(),
            count(Status.PASS),
            count(Status.FAIL),
            count(Status.ERROR),
            count(Status.ABSTAIN),
            func.sum(r.c.tokens),
            func.sum(r.c.cost),
            func.sum(r.c.duration),
        )
        .where(r.c.run_id.in_(list(run_ids)))
        .group_by(r.c.run_id)
    )
    empty: dict[str, Any] = {"recorded": 0, "passed": 0, "failed": 0, "errored": 0, "abstained": 0}
    empty |= {"tokens": None, "cost": None, "duration": 0.0}
    totals = {run_id: dict(empty) for run_id in run_ids}
    for run_id, recorded, passed, failed, errored, abstained, tokens, cost, duration in connection.execute(query):
        totals[run_id] = {
            "recorded": recorded,
            "passed": passed,
            "failed": failed,
            "errored": errored,
            "abstained": abstained,
            "tokens": tokens,
            "cost": cost,
            "duration": duration,
        }
    return totals
