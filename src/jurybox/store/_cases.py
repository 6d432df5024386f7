"""Suites and case versions: a case edited later gets a new version, and old runs keep theirs.

The functions work inside a caller's transaction (planning a run versions its
cases too); ``SuiteRepository`` imports and exports whole suites.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from itertools import islice
from typing import Any, NamedTuple, TypeVar

from sqlalchemy import Table, bindparam, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection

from jurybox.store._errors import StoreError
from jurybox.store._json import db_jsonable, hashed_definition
from jurybox.store._repository import Repository
from jurybox.store._schema import case_edits_table, cases_table, suites_table

CHUNK = 500
"""Rows per statement when a large run plans or imports many cases at once."""

T = TypeVar("T")


def chunked(items: Sequence[T], size: int = CHUNK) -> Iterator[Sequence[T]]:
    """Consecutive slices of at most ``size`` items."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


def batches(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """Consecutive lists of at most ``size`` items of an iterable read once (a plan streamed from a file)."""
    iterator = iter(items)
    while part := list(islice(iterator, size)):
        yield part


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


def lock_suite(connection: Connection, suite: int) -> None:
    """Make the suite's other planners wait for this transaction (once per transaction is enough).

    Planners of one suite take turns, so each reads the versions the one before left and
    exactly one version of each case stays current. PostgreSQL needs the row lock; SQLite
    (which has no FOR UPDATE) already runs one write transaction at a time.
    """
    connection.execute(select(suites_table.c.id).where(suites_table.c.id == suite).with_for_update())


def upsert_case_versions(
    connection: Connection,
    suite: int,
    cases: Iterable[tuple[str, Mapping[str, Any]]],
    *,
    first_position: int = 0,
    lock: bool = True,
) -> dict[str, int]:
    """Store each (name, definition) as a version of its case and mark it current.

    A definition already stored (same name, same content hash) reuses its row;
    a changed one adds a version. Returns the version id per case name.

    The stored versions of these names are read once and only what differs is
    written: a suite run again unchanged writes nothing here, a new one only its
    inserts (at 10,000 cases, planning a run cost 0.5 s while every row was updated).

    Args:
        connection: The caller's write transaction.
        suite: The suite's id.
        cases: (name, definition) pairs; all of them are held at once, so a caller with a
            huge plan passes it a chunk at a time (``runs.begin`` does).
        first_position: The suite position of the first pair (the pairs before it in an
            earlier chunk).
        lock: Take the suite's row lock (:func:`lock_suite`); a caller upserting chunk after
            chunk in one transaction takes it once, before the first.
    """
    if lock:
        lock_suite(connection, suite)
    wanted: dict[str, tuple[str, Any, int]] = {}
    for position, (name, definition) in enumerate(cases, start=first_position):
        data, digest = hashed_definition(definition)
        wanted[name] = (digest, data, position)
    names = list(wanted)
    known = _versions(connection, suite, names)
    stamp = now()
    missing = [
        {
            "suite_id": suite,
            "name": name,
            "content_hash": digest,
            "definition": data,
            "position": position,
            "current": True,
            "created_at": stamp,
        }
        for name, (digest, data, position) in wanted.items()
        if (name, digest) not in known
    ]
    for part in chunked(missing):
        insert_ignoring_duplicates(connection, cases_table, list(part))
    if missing:  # their ids, including rows another writer inserted first
        known.update(_versions(connection, suite, [row["name"] for row in missing]))
    ids = {name: known[(name, digest)].id for name, (digest, _, _) in wanted.items()}
    # Exactly the wanted version of each name is current, at its position in this suite.
    stale = [version.id for (name, _), version in known.items() if version.current and version.id != ids[name]]
    fresh = [ids[name] for name, (digest, _, _) in wanted.items() if not known[(name, digest)].current]
    moved = [
        {"version": ids[name], "new_position": position}
        for name, (digest, _, position) in wanted.items()
        if known[(name, digest)].position != position
    ]
    for versions in chunked(stale):
        connection.execute(update(cases_table).where(cases_table.c.id.in_(versions)).values(current=False))
    for versions in chunked(fresh):
        connection.execute(update(cases_table).where(cases_table.c.id.in_(versions)).values(current=True))
    if moved:
        connection.execute(
            update(cases_table)
            .where(cases_table.c.id == bindparam("version"))
            .values(position=bindparam("new_position")),
            moved,
        )
    return ids


class _Version(NamedTuple):
    id: int
    current: bool
    position: int


def _versions(connection: Connection, suite: int, names: Sequence[str]) -> dict[tuple[str, str], _Version]:
    """Every stored version of these case names: (name, content hash) -> its id, current flag and position."""
    found: dict[tuple[str, str], _Version] = {}
    for part in chunked(names):
        rows = connection.execute(
            select(
                cases_table.c.id,
                cases_table.c.name,
                cases_table.c.content_hash,
                cases_table.c.current,
                cases_table.c.position,
            ).where(cases_table.c.suite_id == suite, cases_table.c.name.in_(part))
        )
        for row_id, name, digest, current, position in rows:
            found[(name, digest)] = _Version(row_id, bool(current), position)
    return found


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


def case_names(connection: Connection, suite: int) -> dict[str, int]:
    """The suite's current cases: name -> current version id."""
    rows = connection.execute(
        select(cases_table.c.name, cases_table.c.id).where(
            cases_table.c.suite_id == suite, cases_table.c.current.is_(True)
        )
    )
    return {name: version for name, version in rows}


def log_case_edit(connection: Connection, suite: int, case: str, version: int | None, action: str, author: str) -> None:
    """One row of a case's history: ``version`` made current (None: retired) by ``author``, now."""
    connection.execute(
        insert(case_edits_table).values(
            suite_id=suite, case_name=case, case_id=version, action=action, author=author[:255], created_at=now()
        )
    )
    connection.execute(update(suites_table).where(suites_table.c.id == suite).values(updated_at=now()))


SETTINGS_ORDER = (
    "description", "judge_model", "judge_timeout", "judge_retries", "database", "concurrency",
    "seeds", "seed_schema", "plugins", "metadata",
)  # fmt: skip
"""Where an exported suite file puts its top-level keys (after ``name``; ``agent``, ``defaults``, ``cases`` last)."""


class SuiteRepository(Repository):
    """The ``suites`` and ``cases`` tables (``store.suites``): each suite's settings and its current cases."""

    def names(self) -> list[str]:
        """Names of every suite in the store."""
        with self._read() as connection:
            return list(connection.execute(select(suites_table.c.name).order_by(suites_table.c.name)).scalars())

    def save(
        self,
        name: str,
        cases: Sequence[tuple[str, Mapping[str, Any]]],
        *,
        agent: Mapping[str, Any] | None = None,
        defaults: Mapping[str, Any] | None = None,
        settings: Mapping[str, Any] | None = None,
        folder: str | None = None,
        author: str = "jurybox store import",
    ) -> dict[str, int]:
        """Make ``cases`` the suite's current cases (new versions for edited ones, others retired).

        ``settings`` are the suite file's other top-level keys (``database``, ``seeds``...);
        ``folder`` the suite file's absolute folder, where its relative paths resolve.
        Each change is in the case's history under ``author``.

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
            # The history of each case the file changed, as the dashboard's editor keeps it.
            for case_name, version in versions.items():
                if before.get(case_name) != version:
                    log_case_edit(connection, suite_key, case_name, version, "import", author)
            for case_name in sorted(set(before) - set(versions)):
                log_case_edit(connection, suite_key, case_name, None, "retire", author)
            connection.execute(
                update(suites_table)
                .where(suites_table.c.id == suite_key)
                .values(
                    agent=db_jsonable(agent) if agent is not None else None,
                    defaults=db_jsonable(defaults) if defaults is not None else None,
                    settings=db_jsonable(settings) if settings else None,
                    folder=folder,
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

    def remember_source(
        self,
        name: str,
        *,
        agent: Mapping[str, Any] | None,
        defaults: Mapping[str, Any] | None,
        settings: Mapping[str, Any] | None,
        folder: str,
    ) -> None:
        """Keep what a suite file says besides its cases (agent, defaults, settings, folder) with the suite.

        A run of a suite file versions its cases; this keeps the rest, so the stored suite runs
        later without the file (``jurybox run --suite``, the dashboard). The suite is created
        when the store does not hold it yet.
        """
        with self._write() as connection:
            suite_key = suite_id(connection, name)
            connection.execute(
                update(suites_table)
                .where(suites_table.c.id == suite_key)
                .values(
                    agent=db_jsonable(agent) if agent is not None else None,
                    defaults=db_jsonable(defaults) if defaults is not None else None,
                    settings=db_jsonable(settings) if settings else None,
                    folder=folder,
                )
            )

    def source(self, name: str) -> tuple[bool, str | None]:
        """Whether the store keeps an agent for suite ``name``, and the folder it keeps (False, None: no suite)."""
        with self._read() as connection:
            row = connection.execute(
                select(suites_table.c.agent.is_not(None), suites_table.c.folder).where(suites_table.c.name == name)
            ).one_or_none()
        return (bool(row[0]), row[1]) if row is not None else (False, None)

    def folder(self, name: str) -> str | None:
        """The absolute folder of the file the suite was imported or last run from (None: not known)."""
        with self._read() as connection:
            found: str | None = connection.execute(
                select(suites_table.c.folder).where(suites_table.c.name == name)
            ).scalar_one_or_none()
        return found

    def export(self, name: str) -> dict[str, Any]:
        """The suite's current cases in the suite-file shape ``{name, <settings>, agent, defaults, cases}``.

        Raises:
            StoreError: no such suite.
        """
        with self._read() as connection:
            row = connection.execute(select(suites_table).where(suites_table.c.name == name)).one_or_none()
            if row is None:
                raise StoreError(f"no suite {name!r} in store {self.url}")
            cases = current_cases(connection, row.id)
        data: dict[str, Any] = {"name": name}
        settings = dict(row.settings or {})
        # A fixed order, whatever the database kept (JSONB reorders keys): an export is reproducible.
        for key in [*SETTINGS_ORDER, *sorted(k for k in settings if k not in SETTINGS_ORDER)]:
            if key in settings:
                data[key] = settings[key]
        if row.agent is not None:
            data["agent"] = row.agent
        if row.defaults is not None:
            data["defaults"] = row.defaults
        data["cases"] = [
            definition if "name" in definition else {"name": case_name, **definition} for case_name, definition in cases
        ]
        return data
