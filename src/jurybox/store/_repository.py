"""What every repository of the store shares: its engine and short read and write transactions."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.engine import Connection, Engine

from jurybox.store._engine import WRITE, describe


class Repository:
    """Base of the store's repositories: each one job's queries over one shared engine.

    Every read and every write is one short transaction, so results stream to
    the database as cases finish and concurrent writers wait only briefly.
    """

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    @property
    def url(self) -> str:
        """The store's URL, password hidden (for error messages)."""
        return describe(self._engine.url)

    @contextmanager
    def _write(self) -> Iterator[Connection]:
        # The WRITE option makes SQLite take its write lock at BEGIN, so two writers queue
        # instead of failing when one upgrades a read lock.
        with self._engine.connect().execution_options(**WRITE) as connection, connection.begin():
            yield connection

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        with self._engine.connect() as connection, connection.begin():
            yield connection
