"""Suites and case versions: a case edited later gets a new version, and old runs keep theirs."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

from sqlalchemy import Table, bindparam, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection

from jurybox.store._schema import cases_table, suites_table
from jurybox.store._serialize import jsonable_hash, to_jsonable

CHUNK = 500
"""Rows per statement when a large run plans or imports many cases at once."""

T = TypeVar("T")


def chunked(items: Sequence[T], size: int = CHUNK) -> Iterator[Sequence[T]]:
    """Consecutive slices of at most ``size`` items."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


def now() -> datetime:
    """The current time in UTC (stores keep aware UTC times)."""
    return datetime.now(UTC)


def insert_ignoring_duplicates(connection: Connection, table: Table, rows: list[dict[str, Any]]) -> None:
    """INSERT rows, skipping any that hit a unique constraint (another writer got there first)."""
    if not rows:
        return
    dialect = connection.dialect.name
    if dialect == "postgresql":
        connection.execute(postgresql.insert(table).on_conflict_do_nothing(), rows)
    elif dialect == "sqlite":
        connection.execute(sqlite.insert(table).on_conflict_do_nothing(), rows)
    else:  # pragma: no cover - create_store_engine only accepts the two
        connection.execute(insert(table), rows)


def suite_id(connection: Connection, name: str, *, create: bool = True) -> int | None:
    """The id of suite ``name``, creating the suite when ``create`` is set."""
    query = select(suites_table.c.id).where(suites_table.c.name == name)
    found: int | None = connection.execute(query).scalar_one_or_none()
    if found is not None or not create:
        return found
    stamp = now()
    insert_ignoring_duplicates(
        connection,
        suites_table,
        [{"name": name, "agent": None, "defaults": None, "created_at": stamp, "updated_at": stamp}],
    )
    created: int = connection.execute(query).scalar_one()
    return created


def upsert_case_versions(
    connection: Connection, suite: int, cases: Iterable[tuple[str, Mapping[str, Any]]]
) -> dict[str, int]:
    """Store each (name, definition) as a version of its case and mark it current.

    A definition already stored (same name, same content hash) reuses its row;
    a changed one adds a version. Returns the version id per case name.
    """
    wanted: dict[str, tuple[str, Any, int]] = {}
    for position, (name, definition) in enumerate(cases):
        data = to_jsonable(definition)
        wanted[name] = (jsonable_hash(data), data, position)
    names = list(wanted)
    ids: dict[str, int] = {}
    stamp = now()
    for part in chunked(names):
        keys = {(n, wanted[n][0]) for n in part}
        existing = _version_ids(connection, suite, part, keys)
        missing = [
            {
                "suite_id": suite,
                "name": n,
                "content_hash": wanted[n][0],
                "definition": wanted[n][1],
                "position": wanted[n][2],
                "current": True,
                "created_at": stamp,
            }
            for n in part
            if n not in existing
        ]
        insert_ignoring_duplicates(connection, cases_table, missing)
        if missing:
            existing = _version_ids(connection, suite, part, keys)
        ids.update(existing)
        connection.execute(
            update(cases_table)
            .where(cases_table.c.suite_id == suite, cases_table.c.name.in_(part))
            .values(current=False)
        )
        connection.execute(
            update(cases_table).where(cases_table.c.id.in_([existing[n] for n in part])).values(current=True)
        )
        connection.execute(
            update(cases_table)
            .where(cases_table.c.id == bindparam("version"))
            .values(position=bindparam("new_position")),
            [{"version": existing[n], "new_position": wanted[n][2]} for n in part],
        )
    return ids


def _version_ids(
    connection: Connection, suite: int, names: Sequence[str], keys: set[tuple[str, str]]
) -> dict[str, int]:
    rows = connection.execute(
        select(cases_table.c.id, cases_table.c.name, cases_table.c.content_hash).where(
            cases_table.c.suite_id == suite, cases_table.c.name.in_(names)
        )
    )
    return {name: row_id for row_id, name, digest in rows if (name, digest) in keys}


def retire_cases(connection: Connection, suite: int, keep: set[str]) -> int:
    """Mark current cases not in ``keep`` as no longer current (their versions stay for old runs)."""
    current = connection.execute(
        select(cases_table.c.name).where(cases_table.c.suite_id == suite, cases_table.c.current.is_(True))
    ).scalars()
    gone = sorted(set(current) - keep)
    for part in chunked(gone):
        connection.execute(
            update(cases_table)
            .where(cases_table.c.suite_id == suite, cases_table.c.name.in_(part))
            .values(current=False)
        )
    return len(gone)


def current_cases(connection: Connection, suite: int) -> list[tuple[str, Any]]:
    """(name, definition) of the suite's current case versions, in suite order."""
    rows = connection.execute(
        select(cases_table.c.name, cases_table.c.definition)
        .where(cases_table.c.suite_id == suite, cases_table.c.current.is_(True))
        .order_by(cases_table.c.position, cases_table.c.name)
    )
    return [(name, definition) for name, definition in rows]


def case_history(connection: Connection, suite: int, name: str) -> list[tuple[str, datetime, Any]]:
    """Every stored version of one case as (content hash, created at, definition), oldest first."""
    rows = connection.execute(
        select(cases_table.c.content_hash, cases_table.c.created_at, cases_table.c.definition)
        .where(cases_table.c.suite_id == suite, cases_table.c.name == name)
        .order_by(cases_table.c.id)
    )
    return [(digest, created, definition) for digest, created, definition in rows]


def case_names(connection: Connection, suite: int) -> dict[str, int]:
    """The suite's current cases: name -> current version id."""
    rows = connection.execute(
        select(cases_table.c.name, cases_table.c.id).where(
            cases_table.c.suite_id == suite, cases_table.c.current.is_(True)
        )
    )
    return {name: version for name, version in rows}
