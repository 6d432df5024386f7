"""Two runs compared case by case, with the definitions of ``jurybox compare``, and a page of one kind of change.

Both runs' results are joined on the case name in SQL: one query counts every
kind of change (and the cases only one run has), and a page of one kind reads
only its cases, in display order, with ``ORDER BY`` ... ``LIMIT``. Two
100,000-case runs are never read into Python; unchanged cases are only a count.
Latency figures come from each run's stats (stored by ``finish_run``).

Of two final runs, the counts with the first page shown, and the paired statistics'
aggregates, are kept in ``run_comparisons`` (``_run_comparisons.py``) the first time
they are computed (``finish_run`` does it for a run and its baseline): later loads,
after a restart too, read them instead of joining the runs again.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, case, exists, func, literal, select
from sqlalchemy.engine import Connection, Engine

from jurybox.core import Status
from jurybox.store._browse_cache import LruCache, final_key, is_final
from jurybox.store._browse_models import (
    COMPARE_KINDS,
    ComparedCase,
    ComparedSide,
    ComparisonSummary,
    Paged,
    first_kind,
    page_bounds,
)
from jurybox.store._browse_stats import StatsBrowser
from jurybox.store._compare import Latency
from jurybox.store._models import RunInfo
from jurybox.store._paired import PairedRepository
from jurybox.store._paired_models import PairedRuns
from jurybox.store._repository import Repository
from jurybox.store._run_comparisons import KeptSummary, read_kept
from jurybox.store._run_comparisons import keep as keep_parts
from jurybox.store._schema import results_table

_PASS, _ERROR = Status.PASS.value, Status.ERROR.value
PAGE_CACHE = 256
"""Pages of case names kept (two final runs' comparison, one kind, one page each)."""
FIRST_PAGE = 50
"""Names of the first page kept with a comparison's counts (the dashboard's page size)."""
COMMON_KINDS = ("broke", "fixed", "still_failing", "status", "scores")


class CompareBrowser(Repository):
    """Run A against run B, cached when both runs are final (``browser.comparisons``)."""

    def __init__(self, engine: Engine, *, cache_size: int, stats: StatsBrowser | None = None) -> None:
        super().__init__(engine)
        self._stats = stats
        # A comparison of two 100,000-case runs holds their case names: keep only a few.
        self._cache = LruCache(cache_size)
        self._pages: LruCache = LruCache(PAGE_CACHE)  # a page is at most a few hundred names
        self._paired = PairedRepository(engine)

    def paired(self, run_a: RunInfo, run_b: RunInfo) -> PairedRuns:
        """Run B against run A with the paired statistics of ``jurybox compare`` (cached when both are final).

        Computed from the kept figures when ``run_comparisons`` has them; else the runs are
        joined, and the figures kept for next time (both runs final).
        """
        key = ("paired", *final_key(run_a), *final_key(run_b))
        keep = is_final(run_a) and is_final(run_b)
        return self._cache.get(key, lambda: self._paired.compare(run_a, run_b), keep=keep)

    def paired_ready(self, run_a: RunInfo, run_b: RunInfo) -> PairedRuns | None:
        """``paired(run_a, run_b)`` when it needs no join of the runs (in memory, or its figures kept), else None.

        The compare page shows the statistics at once when they are ready, and fetches them
        after the page otherwise (the join of two 100,000-case runs takes seconds).
        """
        if not (is_final(run_a) and is_final(run_b)):
            return None
        key = ("paired", *final_key(run_a), *final_key(run_b))
        found = self._cache.peek(key)
        if found is None:
            found = self._paired.kept(run_a, run_b)
            if found is not None:
                self._cache.put(key, found)
        return found

    def compare_ready(self, run_a: RunInfo, run_b: RunInfo) -> ComparisonSummary | None:
        """``compare(run_a, run_b)`` when it needs no join of the runs (in memory, or its counts kept), else None."""
        if not (is_final(run_a) and is_final(run_b)):
            return None
        key = ("compare", *final_key(run_a), *final_key(run_b))
        found: ComparisonSummary | None = self._cache.peek(key)
        if found is None:
            found = self._summary(run_a, run_b, count=False)
            if found is not None:
                self._cache.put(key, found)
        return found

    def compare(self, run_a: RunInfo, run_b: RunInfo) -> ComparisonSummary:
        """Run A against run B with the figures of ``jurybox compare`` (cached when both runs are final).

        The counts, and the first page of the kind shown first, are kept in ``run_comparisons``
        for two final runs, so after a restart they are read, not counted again.
        """
        key = ("compare", *final_key(run_a), *final_key(run_b))
        keep = is_final(run_a) and is_final(run_b)
        return self._cache.get(key, lambda: self._counted(run_a, run_b), keep=keep)

    def _counted(self, run_a: RunInfo, run_b: RunInfo) -> ComparisonSummary:
        found = self._summary(run_a, run_b, count=True)
        assert found is not None  # counted when not kept
        return found

    def cases(
        self, comparison: ComparisonSummary, kind: str, *, offset: int = 0, limit: int = 50
    ) -> Paged[ComparedCase]:
        """One page of a comparison's cases of one kind, with both sides read from the store."""
        offset, limit = page_bounds(offset, limit)
        a_id, b_id = comparison.run_a.id, comparison.run_b.id
        total = comparison.counts.get(kind, 0)
        r = results_table
        sides: dict[tuple[str, str], ComparedSide] = {}
        wanted: list[str] = []
        if offset < total:
            with self._read() as connection:
                # A page of two final runs never changes: kept, so showing it again is no new join and sort.
                key = _page_key(comparison.run_a, comparison.run_b, kind, offset, limit)
                keep = is_final(comparison.run_a) and is_final(comparison.run_b)
                query = _page(connection, a_id, b_id, kind).offset(offset).limit(limit)
                wanted = self._pages.get(key, lambda: list(connection.execute(query).scalars()), keep=keep)
                if wanted:
                    rows = connection.execute(
                        select(r.c.run_id, r.c.case_name, r.c.status, r.c.score, r.c.duration).where(
                            r.c.run_id.in_([a_id, b_id]), r.c.case_name.in_(wanted)
                        )
                    ).all()
                    sides = {
                        (run_id, name): ComparedSide(Status(status), score, dur)
                        for run_id, name, status, score, dur in rows
                    }
        items = [ComparedCase(name, sides.get((a_id, name)), sides.get((b_id, name))) for name in wanted]
        return Paged(items, total, offset, limit)

    def _summary(self, run_a: RunInfo, run_b: RunInfo, *, count: bool) -> ComparisonSummary | None:
        """The comparison's counts: kept ones, else (``count``) counted and kept with the first page when final."""
        final = is_final(run_a) and is_final(run_b)
        with self._read() as connection:
            kept = KeptSummary.from_json(read_kept(connection, run_a, run_b, "summary"))
            latency_a, latency_b = self._latency(connection, run_a), self._latency(connection, run_b)
            counted = kept is None
            if kept is None:
                if not count:
                    return None
                common, counts = self._count(connection, run_a, run_b)
                first = first_kind(counts)
                names: tuple[str, ...] = ()
                if counts[first] and final:
                    query = _page(connection, run_a.id, run_b.id, first).limit(FIRST_PAGE)
                    names = tuple(connection.execute(query).scalars())
                kept = KeptSummary(common, counts, first, names)
        if counted and final:
            keep_parts(self._engine, run_a, run_b, {"summary": kept.to_json()})
        if kept.first_kind is not None and final:
            # The page shown first is then read from memory, as a page shown before is.
            self._pages.put(_page_key(run_a, run_b, kept.first_kind, 0, FIRST_PAGE), list(kept.first_names))
        counts = {kind: kept.counts.get(kind, 0) for kind in COMPARE_KINDS}
        return ComparisonSummary(run_a, run_b, latency_a, latency_b, kept.common, counts)

    def _count(self, connection: Connection, run_a: RunInfo, run_b: RunInfo) -> tuple[int, dict[str, int]]:
        """Cases in both runs, and of each kind of change (counted in SQL over the join by case name)."""
        ra, rb = results_table.alias("ra"), results_table.alias("rb")
        conditions = _conditions(ra, rb)
        common_row = connection.execute(
            select(func.count(), *(_count(conditions[kind]) for kind in (*COMMON_KINDS, "new_errors")))
            .select_from(_joined(ra, rb, run_b.id))
            .where(ra.c.run_id == run_a.id)
        ).one()
        only_b_row = connection.execute(
            select(func.count(), _count(rb.c.status == _ERROR)).where(rb.c.run_id == run_b.id, _missing(rb, run_a.id))
        ).one()
        only_a = connection.execute(
            select(func.count()).where(ra.c.run_id == run_a.id, _missing(ra, run_b.id))
        ).scalar_one()
        common, *found = (int(v) for v in common_row)
        counts = dict(zip((*COMMON_KINDS, "new_errors"), found, strict=True))
        counts["new_errors"] += int(only_b_row[1])
        counts["only_b"], counts["only_a"] = int(only_b_row[0]), int(only_a)
        return common, {kind: counts[kind] for kind in COMPARE_KINDS}

    def _latency(self, connection: Connection, run: RunInfo) -> Latency:
        """The run's latency figures: from its stats (stored for a finished run), else from its durations."""
        if self._stats is not None:
            return self._stats.of(run).latency
        r = results_table
        return Latency.of(list(connection.execute(select(r.c.duration).where(r.c.run_id == run.id)).scalars()))


def _page_key(run_a: RunInfo, run_b: RunInfo, kind: str, offset: int, limit: int) -> tuple[Any, ...]:
    return (*final_key(run_a), *final_key(run_b), kind, offset, limit)


def _count(condition: Any) -> Any:
    return func.coalesce(func.sum(case((condition, 1), else_=0)), 0)


def _joined(ra: Any, rb: Any, run_b: str) -> Any:
    return ra.join(rb, and_(rb.c.run_id == run_b, rb.c.case_name == ra.c.case_name))


def _missing(r: Any, other: str) -> Any:
    """The case is not in run ``other``."""
    o = results_table.alias("o")
    return ~exists(select(o.c.id).where(o.c.run_id == other, o.c.case_name == r.c.case_name))


def _conditions(ra: Any, rb: Any) -> dict[str, Any]:
    """Each kind of change of a case both runs have, as ``jurybox compare`` defines it."""
    a_pass, b_pass = ra.c.status == _PASS, rb.c.status == _PASS
    return {
        "broke": and_(a_pass, ~b_pass),
        "fixed": and_(b_pass, ~a_pass),
        "still_failing": and_(~a_pass, ~b_pass),
        "status": ra.c.status != rb.c.status,
        "scores": and_(ra.c.score.is_not(None), rb.c.score.is_not(None), rb.c.score != ra.c.score),
        "new_errors": and_(rb.c.status == _ERROR, ra.c.status != _ERROR),
    }


def _name(connection: Connection, column: Any) -> Any:
    """Case names in Python's order (code points) on every database: PostgreSQL's collation may differ."""
    return column.collate("C") if connection.dialect.name == "postgresql" else column


def _page(connection: Connection, run_a: str, run_b: str, kind: str) -> Any:
    """The names of one kind of change, in display order (biggest change first, then by name)."""
    ra, rb = results_table.alias("ra"), results_table.alias("rb")
    if kind == "only_a":
        return (
            select(ra.c.case_name)
            .where(ra.c.run_id == run_a, _missing(ra, run_b))
            .order_by(_name(connection, ra.c.case_name))
        )
    if kind == "only_b":
        return (
            select(rb.c.case_name)
            .where(rb.c.run_id == run_b, _missing(rb, run_a))
            .order_by(_name(connection, rb.c.case_name))
        )
    if kind == "new_errors":
        # ERROR in B, and not an ERROR in A: a case A lacks counts too.
        erred = exists(
            select(ra.c.id).where(ra.c.run_id == run_a, ra.c.case_name == rb.c.case_name, ra.c.status == _ERROR)
        )
        return (
            select(rb.c.case_name)
            .where(rb.c.run_id == run_b, rb.c.status == _ERROR, ~erred)
            .order_by(_name(connection, rb.c.case_name))
        )
    delta = rb.c.score - ra.c.score
    query = (
        select(ra.c.case_name)
        .select_from(_joined(ra, rb, run_b))
        .where(ra.c.run_id == run_a, _conditions(ra, rb)[kind])
    )
    name = _name(connection, ra.c.case_name)
    if kind in ("broke", "fixed"):
        # A flip's size: its score change, or a whole point when either score is missing.
        size = case((and_(ra.c.score.is_not(None), rb.c.score.is_not(None)), func.abs(delta)), else_=literal(1.0))
        return query.order_by(size.desc(), name)
    if kind == "scores":
        return query.order_by(func.abs(delta).desc(), name)
    return query.order_by(name)
