"""Commands opening one SQLite store at the same moment: none fails with "database is locked"."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from jurybox.store import open_store
from jurybox.store._engine import _use_wal


def test_threads_opening_a_new_store_together_all_open_it(tmp_path: Path) -> None:
    for attempt in range(3):
        url = f"sqlite:///{tmp_path / f'store-{attempt}.db'}"
        start = threading.Barrier(3)
        failures: list[str] = []

        def open_it(url: str = url, start: threading.Barrier = start, failures: list[str] = failures) -> None:
            start.wait()
            try:
                with open_store(url) as store:
                    store.runs.newest(limit=1)
            except Exception as exc:  # what this test looks for: a lock error while the other one migrates
                failures.append(f"{type(exc).__name__}: {exc}")

        threads = [threading.Thread(target=open_it) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert not failures, failures


def test_a_store_being_written_can_still_be_opened(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'busy.db'}"
    with open_store(url):
        pass
    writer = sqlite3.connect(tmp_path / "busy.db", isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # another command's write transaction, held while this one opens
    try:
        with open_store(url) as store:
            assert store.runs.newest(limit=1) == []
    finally:
        writer.execute("ROLLBACK")
        writer.close()


class _FlakyCursor:
    """A cursor whose journal-mode change fails ``locked`` times as SQLite's deadlock check makes it fail."""

    def __init__(self, locked: int, error: str = "database is locked", mode: str = "delete") -> None:
        self.locked, self.error, self.mode, self.changes = locked, error, mode, 0

    def execute(self, sql: str) -> _FlakyCursor:
        if sql == "PRAGMA journal_mode = WAL":
            self.changes += 1
            if self.locked:
                self.locked -= 1
                raise sqlite3.OperationalError(self.error)
            self.mode = "wal"
        return self

    def fetchone(self) -> tuple[str]:
        return (self.mode,)


def test_switching_to_wal_is_retried_while_another_connection_holds_the_lock() -> None:
    cursor = _FlakyCursor(locked=3)
    _use_wal(cursor, busy_timeout=5.0)
    assert cursor.mode == "wal" and cursor.changes == 4


def test_a_store_already_in_wal_is_not_switched_again() -> None:
    cursor = _FlakyCursor(locked=99, mode="wal")
    _use_wal(cursor, busy_timeout=0.0)
    assert cursor.changes == 0


def test_a_lock_held_past_the_busy_timeout_and_other_errors_are_raised() -> None:
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        _use_wal(_FlakyCursor(locked=10**6), busy_timeout=0.2)
    broken = _FlakyCursor(locked=5, error="disk I/O error")
    with pytest.raises(sqlite3.OperationalError, match="disk I/O"):
        _use_wal(broken, busy_timeout=5.0)
    assert broken.changes == 1  # not retried: only a lock is worth waiting for
