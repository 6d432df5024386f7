"""Access to the property database: one short-lived connection per call, so any thread may use it."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from examples.property_agent.data import ensure_database

DB_ENV = "JURYBOX_PROPERTY_DB"
DEFAULT_DB_PATH = Path(".jurybox") / "property_agent.db"


def default_db_path() -> Path:
    """``$JURYBOX_PROPERTY_DB``, else ``.jurybox/property_agent.db`` under the current folder."""
    return Path(os.environ.get(DB_ENV) or DEFAULT_DB_PATH)


@dataclass(frozen=True)
class StoredMessage:
    """One persisted conversation message (tool calls and tool results included)."""

    role: str
    content: str
    tool_calls: tuple[Mapping[str, Any], ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)


class PropertyStore:
    """The platform's data and the assistant's conversation memory, in one SQLite file."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else default_db_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.connect() as connection:
            ensure_database(connection)

    @contextmanager
    def connect(self) -> Iterator[sqlite3.Connection]:
        # Autocommit mode: every statement commits unless a block opens a transaction itself.
        connection = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        connection.row_factory = sqlite3.Row
        try:
            yield connection
        finally:
            connection.close()

    def _rows(self, sql: str, parameters: Sequence[Any] | Mapping[str, Any] = ()) -> list[dict[str, Any]]:
        with self.connect() as connection:
            return [dict(row) for row in connection.execute(sql, parameters)]

    # Platform data -------------------------------------------------------

    def as_of(self) -> date:
        """The platform's "today": realized months end before it, upcoming bookings start after it."""
        return date.fromisoformat(self._rows("SELECT value FROM meta WHERE key = 'as_of'")[0]["value"])

    def listings(self) -> list[dict[str, Any]]:
        return self._rows("SELECT * FROM listings ORDER BY id")

    def listing(self, listing_id: int) -> dict[str, Any] | None:
        rows = self._rows("SELECT * FROM listings WHERE id = ?", (listing_id,))
        return rows[0] if rows else None

    def bookings(
        self,
        *,
        listing_id: int | None = None,
        status: str | None = None,
        start: date | None = None,
        end: date | None = None,
    ) -> list[dict[str, Any]]:
        """Bookings overlapping ``[start, end)``, in check-in order, with the listing name."""
        sql = "SELECT b.*, l.name AS listing FROM bookings b JOIN listings l ON l.id = b.listing_id WHERE 1 = 1"
        parameters: list[Any] = []
        if listing_id is not None:
            sql += " AND b.listing_id = ?"
            parameters.append(listing_id)
        if status is not None:
            sql += " AND b.status = ?"
            parameters.append(status)
        if start is not None:
            sql += " AND b.check_out > ?"
            parameters.append(start.isoformat())
        if end is not None:
            sql += " AND b.check_in < ?"
            parameters.append(end.isoformat())
        return self._rows(sql + " ORDER BY b.check_in, b.id", parameters)

    def revenue(self, *, listing_id: int | None = None, start_month: str, end_month: str) -> list[dict[str, Any]]:
        """Monthly revenue rows in ``[start_month, end_month]`` (``YYYY-MM``), with the listing name."""
        sql = (
            "SELECT r.*, l.name AS listing FROM revenue r JOIN listings l ON l.id = r.listing_id "
            "WHERE r.month BETWEEN ? AND ?"
        )
        parameters: list[Any] = [start_month, end_month]
        if listing_id is not None:
            sql += " AND r.listing_id = ?"
            parameters.append(listing_id)
        return self._rows(sql + " ORDER BY r.month, r.listing_id", parameters)

    def revenue_months(self) -> list[str]:
        return [row["month"] for row in self._rows("SELECT DISTINCT month FROM revenue ORDER BY month")]

    # Conversation memory -------------------------------------------------

    def messages(self, session_id: str) -> list[StoredMessage]:
        rows = self._rows("SELECT * FROM messages WHERE session_id = ? ORDER BY id", (session_id,))
        return [
            StoredMessage(
                role=row["role"],
                content=row["content"],
                tool_calls=tuple(json.loads(row["tool_calls"])) if row["tool_calls"] else (),
                tool_call_id=row["tool_call_id"],
                name=row["name"],
                meta=json.loads(row["meta"]) if row["meta"] else {},
            )
            for row in rows
        ]

    def append(self, session_id: str, messages: Sequence[StoredMessage]) -> None:
        """Persist messages in one transaction, so a turn is stored whole or not at all."""
        with self.connect() as connection:
            connection.execute("BEGIN IMMEDIATE")
            try:
                connection.executemany(
                    "INSERT INTO messages (session_id, role, content, tool_calls, tool_call_id, name, meta) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [
                        (
                            session_id,
                            m.role,
                            m.content,
                            json.dumps(list(m.tool_calls)) if m.tool_calls else None,
                            m.tool_call_id,
                            m.name,
                            json.dumps(dict(m.meta)) if m.meta else None,
                        )
                        for m in messages
                    ],
                )
                connection.execute("COMMIT")
            except BaseException:
                connection.execute("ROLLBACK")
                raise

    def forget(self, session_id: str | None = None) -> int:
        """Delete one session's messages (or all); returns how many were deleted."""
        with self.connect() as connection:
            if session_id is None:
                return connection.execute("DELETE FROM messages").rowcount
            return connection.execute("DELETE FROM messages WHERE session_id = ?", (session_id,)).rowcount
