"""A store that is missing, locked, older, newer or unreachable gives a page in words, never a stack trace."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic import command
from alembic.config import Config
from fastapi.testclient import TestClient
from sqlalchemy import text

from jurybox.core import CaseRecord, Judgment
from jurybox.store import open_store
from jurybox.store._engine import create_store_engine, stored_revisions
from jurybox.web import WebSettings, create_app


def _client(url: str, **settings: float) -> TestClient:
    return TestClient(create_app(url, settings=WebSettings(**settings)), raise_server_exceptions=False)  # type: ignore[arg-type]


def _message(html: str) -> str:
    found = re.search(r'<p class="error-message">(.*?)</p>', html, re.S)
    assert found, html[:2000]
    return found.group(1)


def _no_trace(response_text: str) -> None:
    assert "Traceback" not in response_text and 'File "' not in response_text


@pytest.fixture
def sqlite_url(tmp_path: Path) -> Iterator[str]:
    yield f"sqlite:///{tmp_path / 'store.db'}"


def _one_run(url: str) -> str:
    with open_store(url) as store:
        run_id = store.runs.begin("suite", cases={"a": {}})
        store.results.record(run_id, CaseRecord("a", Judgment.passed(1.0, "fine", judge="contains")))
        store.finish_run(run_id)
    return run_id


def test_a_missing_store_says_how_to_make_one_and_is_not_created(sqlite_url: str, tmp_path: Path) -> None:
    client = _client(sqlite_url)
    response = client.get("/runs")
    assert response.status_code == 503 and response.headers["retry-after"] == "5"
    assert "There is no store at" in _message(response.text) and "jurybox run" in response.text
    assert '<meta http-equiv="refresh" content="5">' in response.text  # it tries again by itself
    _no_trace(response.text)
    assert not (tmp_path / "store.db").exists()  # the dashboard never creates a store
    assert client.get("/api/runs").json()["status"] == 503
    run_id = _one_run(sqlite_url)  # a run creates it: the next request reads it
    assert client.get("/api/runs").json()["runs"][0]["id"] == run_id


def test_an_older_schema_is_upgraded_as_the_cli_does(sqlite_url: str) -> None:
    engine = create_store_engine(sqlite_url)
    with engine.begin() as connection:
        config = Config()
        config.set_main_option("script_location", "jurybox.store:migrations")
        config.attributes["connection"] = connection
        command.upgrade(config, "0001_initial")
        connection.execute(
            text("INSERT INTO suites (id, name, created_at, updated_at) VALUES (1, 'old', '2026-01-01', '2026-01-01')")
        )
        connection.execute(
            text(
                "INSERT INTO runs (id, suite_id, status, planned, started_at, finished_at, total, passed, failed, "
                "errored, abstained) VALUES ('old-run', 1, 'completed', 0, '2026-01-01', '2026-01-01', 0, 0, 0, 0, 0)"
            )
        )
    engine.dispose()
    client = _client(sqlite_url)
    assert "old-run" in client.get("/runs").text
    assert client.get("/runs/old-run").status_code == 200
    engine = create_store_engine(sqlite_url)
    with engine.connect() as connection:
        assert stored_revisions(connection) == ("0003_single_verdict_rows",) or stored_revisions(connection)[0] > "0003"
    engine.dispose()


def test_a_newer_schema_is_refused_with_a_clear_message_and_not_touched(sqlite_url: str) -> None:
    _one_run(sqlite_url)
    engine = create_store_engine(sqlite_url)
    with engine.begin() as connection:
        connection.execute(text("UPDATE alembic_version SET version_num = '0099_future'"))
    engine.dispose()
    client = _client(sqlite_url)
    response = client.get("/runs")
    assert response.status_code == 503
    message = _message(response.text)
    assert "newer jurybox" in message and "0099_future" in message and "Upgrade jurybox" in message
    assert "retry-after" not in response.headers  # waiting will not help
    _no_trace(response.text)
    assert "newer jurybox" in client.get("/api/runs").json()["error"]
    engine = create_store_engine(sqlite_url)
    with engine.connect() as connection:
        assert stored_revisions(connection) == ("0099_future",)
    engine.dispose()


def _lock(path: str) -> sqlite3.Connection:
    """Hold an exclusive lock on a SQLite store, as a process in the middle of a long write would."""
    locker = sqlite3.connect(path, isolation_level=None)
    locker.execute("PRAGMA locking_mode=EXCLUSIVE")
    locker.execute("BEGIN EXCLUSIVE")
    locker.execute("INSERT INTO suites (name, created_at, updated_at) VALUES ('lock', '2026-01-01', '2026-01-01')")
    return locker


def test_a_locked_store_says_so_and_the_page_tries_again(sqlite_url: str, tmp_path: Path) -> None:
    _one_run(sqlite_url)
    client = _client(sqlite_url, busy_timeout=0.2)
    assert client.get("/runs").status_code == 200  # opened before the lock
    # An exclusive lock on a WAL database needs every other connection closed: return the pooled ones.
    client.app.state.jurybox.access.store().engine.dispose()  # type: ignore[attr-defined]
    locker = _lock(str(tmp_path / "store.db"))
    try:
        for path in ("/runs", "/suites", "/api/runs"):
            response = client.get(path)
            assert response.status_code == 503, path
            assert response.headers["retry-after"] == "5"
            _no_trace(response.text)
        assert "is locked by another process" in _message(client.get("/runs").text)
        fresh = _client(sqlite_url, busy_timeout=0.2)  # opening while locked: the same page
        assert "locked" in _message(fresh.get("/runs").text)
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    assert client.get("/runs").status_code == 200


def test_an_unreachable_database_is_a_page_not_a_trace() -> None:
    client = _client("postgresql+psycopg://nobody@127.0.0.1:1/nothing?connect_timeout=2")
    response = client.get("/runs")
    assert response.status_code == 503
    assert "cannot be read" in _message(response.text) or "cannot be opened" in _message(response.text)
    _no_trace(response.text)


def test_an_unexpected_error_is_a_500_page_without_a_trace(sqlite_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _one_run(sqlite_url)
    from jurybox.web import _page_runs

    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("secret internals /etc/passwd")

    monkeypatch.setattr(_page_runs, "runs_data", broken)
    response = _client(sqlite_url).get("/runs")
    assert response.status_code == 500
    assert "RuntimeError" in response.text and "secret internals" not in response.text
    _no_trace(response.text)
