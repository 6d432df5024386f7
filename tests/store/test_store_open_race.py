"""Commands opening one SQLite store at the same moment: none fails with "database is locked"."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from jurybox.store import open_store


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
