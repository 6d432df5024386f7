"""Read access to an agent's databases for SQL checks: one pooled SQLAlchemy engine per URL.

The suites layer states what it needs as a port (``jurybox.suites`` ``SqlPort``);
this is the adapter, so the runner itself never imports SQLAlchemy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlalchemy import Engine


class SqlQueryError(Exception):
    """A query could not run (bad SQL, a missing table, an unreachable database); ``__cause__`` says why."""


class SqlDatabases:
    """One engine per database URL for the whole run (connections are pooled, never opened per check).

    URLs are SQLAlchemy URLs; a relative SQLite path is relative to the current
    directory, as it is for SQLAlchemy and for an agent that opens its own file.
    SQLAlchemy is imported on first use: most suites have no SQL check.
    """

    def __init__(self) -> None:
        self._engines: dict[str, Engine] = {}

    def parameters(self, query: str) -> set[str]:
        """The named parameters (``:name``) ``query`` needs."""
        from sqlalchemy import text

        return set(text(query).compile().params)

    def rows(self, url: str, query: str, params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        """Every row ``query`` returns on ``url``'s database.

        Raises:
            SqlQueryError: the query failed; the database's own exception is its cause.
        """
        from sqlalchemy import text
        from sqlalchemy.exc import SQLAlchemyError

        try:
            with self._engine(url).connect() as connection:
                return [tuple(row) for row in connection.execute(text(query), dict(params))]
        except SQLAlchemyError as exc:
            raise SqlQueryError(f"{type(exc).__name__}: {exc}") from exc

    def dispose(self) -> None:
        """Close every pooled connection."""
        for engine in self._engines.values():
            engine.dispose()
        self._engines.clear()

    def _engine(self, url: str) -> Engine:
        engine = self._engines.get(url)
        if engine is None:
            from sqlalchemy import create_engine

            engine = self._engines[url] = create_engine(url)
        return engine
