"""Two runs compared case by case, with the definitions of ``jurybox compare``, and a page of one kind of change.

A comparison reads each run's case names, statuses, scores and durations
once (two 100,000-case runs: two queries) and keeps, per kind of change, the
case names in display order; a page of one kind then reads only its cases.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.engine import Connection, Engine

from jurybox.core import Status
from jurybox.store._browse_cache import LruCache, final_key, is_final
from jurybox.store._browse_models import (
    COMPARE_KINDS,
    ComparedCase,
    ComparedSide,
    ComparisonSummary,
    Paged,
    page_bounds,
)
from jurybox.store._compare import Latency
from jurybox.store._models import RunInfo
from jurybox.store._paired import PairedRepository
from jurybox.store._paired_models import PairedRuns
from jurybox.store._repository import Repository
from jurybox.store._schema import results_table


class CompareBrowser(Repository):
    """Run A against run B, cached when both runs are final (``browser.comparisons``)."""

    def __init__(self, engine: Engine, *, cache_size: int) -> None:
        super().__init__(engine)
        # A comparison of two 100,000-case runs holds their case names: keep only a few.
        self._cache = LruCache(cache_size)
        self._paired = PairedRepository(engine)

    def paired(self, run_a: RunInfo, run_b: RunInfo) -> PairedRuns:
        """Run B against run A with the paired statistics of ``jurybox compare`` (cached when both are final)."""
        key = ("paired", *final_key(run_a), *final_key(run_b))
        keep = is_final(run_a) and is_final(run_b)
        return self._cache.get(key, lambda: self._paired.compare(run_a, run_b), keep=keep)

    def compare(self, run_a: RunInfo, run_b: RunInfo) -> ComparisonSummary:
        """Run A against run B with the figures of ``jurybox compare`` (cached when both runs are final)."""
        key = ("compare", *final_key(run_a), *final_key(run_b))
        keep = is_final(run_a) and is_final(run_b)
        return self._cache.get(key, lambda: self._compute(run_a, run_b), keep=keep)

    def cases(
        self, comparison: ComparisonSummary, kind: str, *, offset: int = 0, limit: int = 50
    ) -> Paged[ComparedCase]:
        """One page of a comparison's cases of one kind, with both sides read from the store."""
        offset, limit = page_bounds(offset, limit)
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

    def _compute(self, run_a: RunInfo, run_b: RunInfo) -> ComparisonSummary:
        with self._read() as connection:
            sides_a = _sides(connection, run_a.id)
            sides_b = _sides(connection, run_b.id)
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


def _sides(connection: Connection, run_id: str) -> dict[str, ComparedSide]:
    """Every case of a run: its status, score and duration, by name."""
    r = results_table
    rows = connection.execute(
        select(r.c.case_name, r.c.status, r.c.score, r.c.duration).where(r.c.run_id == run_id)
    ).all()
    return {name: ComparedSide(Status(status), score, duration) for name, status, score, duration in rows}
