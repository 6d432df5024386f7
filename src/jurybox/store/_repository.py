"""What every repository of the store shares: its engine and short read and write transactions."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Table
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import InterfaceError, OperationalError

from jurybox.store._engine import WRITE, access_error, describe


class Repository:
    """Base of the store's repositories: each one job's queries over one shared engine.

    Every read and every write is one short transaction, so results stream to
    the database as cases finish and concurrent writers wait only briefly. Both are
    the store's edge: a database that is locked, down or gone mid-transaction raises
    :class:`~jurybox.store.StoreAccessError` (a ``StoreError``), never a SQLAlchemy error.
    """

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    @property
    def url(self) -> str:
        """The store's URL, password hidden (for error messages)."""
        return describe(self._engine.url)

    @contextmanager
    def _write(self) -> Iterator[Connection]:
        try:
            # The WRITE option makes SQLite take its write lock at BEGIN, so two writers queue
            # instead of failing when one upgrades a read lock.
            with self._engine.connect().execution_options(**WRITE) as connection, connection.begin():
                yield connection
        except (OperationalError, InterfaceError) as exc:
            raise access_error(self._engine.url, exc) from exc

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        try:
            with self._engine.connect() as connection, connection.begin():
                yield connection
        except (OperationalError, InterfaceError) as exc:
            raise access_error(self._engine.url, exc) from exc


def dialect_insert(connection: Connection, table: Table) -> Any:
    """The dialect's INSERT (it has ``on_conflict_do_nothing``) for the connection's database."""
    return (postgresql if connection.dialect.name == "postgresql" else sqlite).insert(table)
