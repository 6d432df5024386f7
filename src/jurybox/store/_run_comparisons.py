"""Two finished runs' comparison kept once computed (``run_comparisons``, schema 0014), so it is never joined again.

Comparing two 100,000-case runs joins both runs' results by case name (and their
verdict trees by case and path): seconds on the first load. What the compare page
needs of that join is small: the counts of each kind of change with the first page
of names shown (``summary``), the aggregates of the paired statistics (``paired``,
``PairedFigures``), and the statistics computed from them at the level, resamples and
seed last asked for (``statistics``: the bootstrap and the exact tests take some 50 ms
on two 100,000-case runs, more than the rest of the page). Results of a finished run
never change, so all three are kept by the pair of run ids *and* both runs' finish
times: a run resumed and finished again has a new finish time, and a kept comparison
of its earlier finish is ignored, then replaced.
A running run's comparison is never kept.

Keeping is a cache: a store that cannot be written just now (locked, a read-only role)
computes the comparison again next time, and nothing fails.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import and_, delete, select
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError

from jurybox.store._browse_cache import is_final
from jurybox.store._engine import WRITE
from jurybox.store._models import RunInfo, as_utc
from jurybox.store._repository import dialect_insert
from jurybox.store._schema import run_comparisons_table

logger = logging.getLogger(__name__)

Part = Literal["summary", "paired", "statistics"]
SUMMARY_VERSION = 1
"""Bumped when the kept summary's form changes: a summary of another version is computed again."""


@dataclass(frozen=True)
class KeptSummary:
    """The counts of a comparison and its first page, as kept.

    Attributes:
        common: Cases both runs have.
        counts: Cases of each kind of change (``COMPARE_KINDS``).
        first_kind: The kind whose first page is kept (the one shown first), or None.
        first_names: That page's case names, in display order (up to ``FIRST_PAGE``).
    """

    common: int
    counts: dict[str, int]
    first_kind: str | None = None
    first_names: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "v": SUMMARY_VERSION,
            "common": self.common,
            "counts": dict(self.counts),
            "first": [self.first_kind, list(self.first_names)],
        }

    @classmethod
    def from_json(cls, data: Any) -> KeptSummary | None:
        if not isinstance(data, dict) or data.get("v") != SUMMARY_VERSION:
            return None
        try:
            kind, names = data["first"]
            return cls(
                int(data["common"]),
                {str(k): int(v) for k, v in data["counts"].items()},
                None if kind is None else str(kind),
                tuple(str(name) for name in names),
            )
        except (KeyError, TypeError, ValueError):
            return None


def keepable(run_a: RunInfo, run_b: RunInfo) -> bool:
    """True when both runs are finished (their results no longer change), so their comparison may be kept."""
    return is_final(run_a) and is_final(run_b)


def read_kept(connection: Connection, run_a: RunInfo, run_b: RunInfo, part: Part) -> Any | None:
    """The kept ``part`` of B against A when it describes both runs' current finish, else None."""
    if not keepable(run_a, run_b):
        return None
    table = run_comparisons_table
    row = connection.execute(
        select(table.c.a_finished_at, table.c.b_finished_at, table.c[part]).where(
            table.c.run_a == run_a.id, table.c.run_b == run_b.id
        )
    ).first()
    if row is None or (as_utc(row[0]), as_utc(row[1])) != (run_a.finished_at, run_b.finished_at):
        return None
    return row[2]


def keep(engine: Engine, run_a: RunInfo, run_b: RunInfo, parts: Mapping[Part, dict[str, Any]]) -> None:
    """Keep ``parts`` of B against A (beside the other parts, when of the same finishes); never raises.

    A kept row of other finishes is replaced. A store that refuses the write (locked,
    read-only) is logged and left alone: the comparison is computed again next time.
    """
    if not keepable(run_a, run_b) or not parts:
        return
    assert run_a.finished_at is not None and run_b.finished_at is not None
    try:
        # As the store's writers do: SQLite takes its write lock at BEGIN.
        with engine.connect().execution_options(**WRITE) as connection, connection.begin():
            _upsert(connection, run_a, run_b, run_a.finished_at, run_b.finished_at, parts)
    except DBAPIError as exc:
        logger.warning("comparison %s -> %s not kept (computed again next time): %s", run_a.id, run_b.id, exc)


def _upsert(
    connection: Connection,
    run_a: RunInfo,
    run_b: RunInfo,
    a_finished: datetime,
    b_finished: datetime,
    parts: Mapping[Part, dict[str, Any]],
) -> None:
    table = run_comparisons_table
    pair = and_(table.c.run_a == run_a.id, table.c.run_b == run_b.id)
    found = connection.execute(select(table.c.a_finished_at, table.c.b_finished_at).where(pair)).first()
    if found is not None and (as_utc(found[0]), as_utc(found[1])) != (a_finished, b_finished):
        # A row of an earlier finish of either run: none of its parts is right any more.
        connection.execute(delete(table).where(pair))
    values: dict[str, Any] = {"run_a": run_a.id, "run_b": run_b.id, "a_finished_at": a_finished}
    values["b_finished_at"] = b_finished
    values.update({str(part): value for part, value in parts.items()})
    insert = dialect_insert(connection, table).values(values)
    connection.execute(
        insert.on_conflict_do_update(
            index_elements=[table.c.run_a, table.c.run_b], set_={part: insert.excluded[part] for part in parts}
        )
    )
