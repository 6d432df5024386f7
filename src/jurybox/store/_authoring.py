"""Cases written and changed one at a time (the dashboard's editor), with history and edit conflicts.

A save names the version it started from (``base_version``). When someone saved
the case since, the save is refused with ``EditConflictError`` holding what is there
now, so the second writer sees the difference instead of overwriting the first.
Saving makes a version current (a definition saved before is its old version
again: versions are identified by content) and writes one ``case_edits`` row: who,
when, what. Retiring leaves the case's versions for old runs and only takes it out
of the suite; a save brings it back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import func, insert, select, update
from sqlalchemy.engine import Connection

from jurybox.store._cases import log_case_edit as _log
from jurybox.store._cases import now, suite_id
from jurybox.store._errors import StoreError
from jurybox.store._json import db_jsonable, hashed_definition
from jurybox.store._models import as_utc
from jurybox.store._repository import Repository
from jurybox.store._schema import case_edits_table, cases_table, suites_table

EditAction = Literal["create", "edit", "duplicate", "retire", "revert", "import"]


@dataclass(frozen=True)
class CaseVersion:
    """One stored version of a case."""

    id: int
    name: str
    definition: Mapping[str, Any]
    current: bool
    position: int
    created_at: datetime | None = None
    number: int = 0
    """Its number among the case's versions, 1 for the first (0: not counted by the reader)."""
    versions: int = 0
    """How many versions the case has (0: not counted by the reader)."""


@dataclass(frozen=True)
class CaseEdit:
    """One change to a case: the version it made current (None for a retire), by whom, when."""

    id: int
    case: str
    action: str
    author: str
    version_id: int | None
    definition: Mapping[str, Any] | None
    created_at: datetime | None = None


class EditConflictError(StoreError):
    """Someone saved the case after the version this save started from.

    Attributes:
        case: The case.
        base_version: The version the refused save started from.
        current: What is there now (None: the case was retired).
    """

    def __init__(self, case: str, base_version: int | None, current: CaseVersion | None) -> None:
        now_there = f"version {current.id}" if current is not None else "nothing (it was retired)"
        started = f"version {base_version}" if base_version is not None else "a new case"
        super().__init__(f"case {case!r} changed since you opened it: you started from {started}, it is {now_there}")
        self.case = case
        self.base_version = base_version
        self.current = current


class AuthoringRepository(Repository):
    """Case-by-case writes on the ``cases`` table, logged in ``case_edits``."""

    def case_versions(self, suite: str, *, include_retired: bool = False) -> list[CaseVersion]:
        """The suite's current cases in order; with ``include_retired``, each retired case's last version too."""
        with self._read() as connection:
            key = _suite(connection, suite, self.url)
            rows = connection.execute(
                select(cases_table)
                .where(cases_table.c.suite_id == key)
                .order_by(cases_table.c.position, cases_table.c.name, cases_table.c.id)
            ).all()
        current = {row.name for row in rows if row.current}
        ids: dict[str, list[int]] = {}
        for row in rows:
            ids.setdefault(row.name, []).append(row.id)
        numbers = {name: {version: n for n, version in enumerate(sorted(got), 1)} for name, got in ids.items()}
        found: dict[str, CaseVersion] = {}
        for row in rows:
            if row.current or (include_retired and row.name not in current):
                # For a retired case the last row wins: rows of one name come in id order.
                found[row.name] = replace(_version(row), number=numbers[row.name][row.id], versions=len(ids[row.name]))
        return list(found.values())

    def version_numbers(self, suite: str, case: str) -> dict[int, int]:
        """Each stored version of ``case`` (by id) -> its number among the case's versions (1, 2, ...)."""
        with self._read() as connection:
            key = _suite(connection, suite, self.url)
            ids = connection.execute(
                select(cases_table.c.id)
                .where(cases_table.c.suite_id == key, cases_table.c.name == case)
                .order_by(cases_table.c.id)
            ).scalars()
            return {version: number for number, version in enumerate(ids, 1)}

    def current_version(self, suite: str, case: str) -> CaseVersion | None:
        with self._read() as connection:
            return _current(connection, _suite(connection, suite, self.url), case)

    def version(self, version_id: int) -> CaseVersion | None:
        with self._read() as connection:
            row = connection.execute(select(cases_table).where(cases_table.c.id == version_id)).one_or_none()
        return None if row is None else _version(row)

    def save_case(
        self,
        suite: str,
        case: str,
        definition: Mapping[str, Any],
        *,
        author: str,
        base_version: int | None,
        action: EditAction = "edit",
    ) -> int:
        """Make ``definition`` the current version of ``case``; return the version's id.

        Raises:
            EditConflictError: the case's current version is not ``base_version``.
            StoreError: no such suite.
        """
        with self._write() as connection:
            key = _locked_suite(connection, suite, self.url)
            current = _current(connection, key, case)
            if (current.id if current is not None else None) != base_version:
                raise EditConflictError(case, base_version, current)
            version = _make_current(connection, key, case, definition, current)
            _log(connection, key, case, version, action, author)
            return version

    def retire_case(self, suite: str, case: str, *, author: str, base_version: int) -> None:
        """Take ``case`` out of the suite (its versions stay for the runs that ran them)."""
        with self._write() as connection:
            key = _locked_suite(connection, suite, self.url)
            current = _current(connection, key, case)
            if current is None or current.id != base_version:
                raise EditConflictError(case, base_version, current)
            connection.execute(update(cases_table).where(cases_table.c.id == current.id).values(current=False))
            _log(connection, key, case, None, "retire", author)

    def duplicate_case(self, suite: str, case: str, new_name: str, *, author: str) -> int:
        """A new case ``new_name`` with ``case``'s current definition; return its version id."""
        with self._write() as connection:
            key = _locked_suite(connection, suite, self.url)
            source = _current(connection, key, case)
            if source is None:
                raise StoreError(f"no current case {case!r} in suite {suite!r}")
            taken = _current(connection, key, new_name)
            if taken is not None:
                raise EditConflictError(new_name, None, taken)
            definition = {**dict(source.definition), "name": new_name}
            version = _make_current(connection, key, new_name, definition, None)
            _log(connection, key, new_name, version, "duplicate", author)
            return version

    def revert_case(self, suite: str, case: str, version_id: int, *, author: str, base_version: int | None) -> int:
        """Make an earlier version of ``case`` current again (a new edit in its history)."""
        old = self.version(version_id)
        if old is None or old.name != case:
            raise StoreError(f"case {case!r} has no version {version_id}")
        with self._write() as connection:
            key = _locked_suite(connection, suite, self.url)
            current = _current(connection, key, case)
            if (current.id if current is not None else None) != base_version:
                raise EditConflictError(case, base_version, current)
            version = _make_current(connection, key, case, old.definition, current)
            _log(connection, key, case, version, "revert", author)
            return version

    def set_agent(self, suite: str, agent: Mapping[str, Any]) -> None:
        """Make ``agent`` the suite's ``agent:`` (an admin's change: the agent runs where the suite runs)."""
        with self._write() as connection:
            key = _locked_suite(connection, suite, self.url)
            values = {"agent": db_jsonable(dict(agent)), "updated_at": now()}
            connection.execute(update(suites_table).where(suites_table.c.id == key).values(**values))

    def case_history(self, suite: str, case: str) -> list[CaseEdit]:
        """Every change to ``case``, newest first, each with the definition it made current."""
        edits, versions = case_edits_table.c, cases_table
        with self._read() as connection:
            key = _suite(connection, suite, self.url)
            rows = connection.execute(
                select(
                    edits.id, edits.case_name, edits.action, edits.author, edits.case_id, edits.created_at,
                    versions.c.definition,
                )
                .outerjoin(versions, versions.c.id == edits.case_id)
                .where(edits.suite_id == key, edits.case_name == case)
                .order_by(edits.id.desc())
            ).all()  # fmt: skip
        return [
            CaseEdit(row.id, row.case_name, row.action, row.author, row.case_id, row.definition, as_utc(row.created_at))
            for row in rows
        ]


def _suite(connection: Connection, name: str, url: str) -> int:
    key = suite_id(connection, name, create=False)
    if key is None:
        raise StoreError(f"no suite {name!r} in store {url}")
    return key


def _locked_suite(connection: Connection, name: str, url: str) -> int:
    key = _suite(connection, name, url)
    # Writers of one suite take turns (PostgreSQL row lock; SQLite already has one writer at a time).
    connection.execute(select(suites_table.c.id).where(suites_table.c.id == key).with_for_update())
    return key


def _current(connection: Connection, suite: int, case: str) -> CaseVersion | None:
    row = connection.execute(
        select(cases_table).where(
            cases_table.c.suite_id == suite, cases_table.c.name == case, cases_table.c.current.is_(True)
        )
    ).one_or_none()
    return None if row is None else _version(row)


def _make_current(
    connection: Connection, suite: int, case: str, definition: Mapping[str, Any], current: CaseVersion | None
) -> int:
    data, digest = hashed_definition(definition)
    existing = connection.execute(
        select(cases_table.c.id).where(
            cases_table.c.suite_id == suite, cases_table.c.name == case, cases_table.c.content_hash == digest
        )
    ).scalar()
    if current is not None and current.id != existing:
        connection.execute(update(cases_table).where(cases_table.c.id == current.id).values(current=False))
    if existing is not None:
        connection.execute(update(cases_table).where(cases_table.c.id == existing).values(current=True))
        return int(existing)
    if current is not None:
        position = current.position
    else:
        last = connection.execute(select(func.max(cases_table.c.position)).where(cases_table.c.suite_id == suite))
        position = int(last.scalar() or 0) + 1
    inserted = connection.execute(
        insert(cases_table)
        .values(
            suite_id=suite,
            name=case,
            content_hash=digest,
            definition=data,
            position=position,
            current=True,
            created_at=now(),
        )
        .returning(cases_table.c.id)
    )
    return int(inserted.scalar_one())


def _version(row: Any) -> CaseVersion:
    return CaseVersion(row.id, row.name, row.definition, bool(row.current), row.position, as_utc(row.created_at))
