"""A store that cannot be read, locked or down: the store's own error, one clear line, exit 2; a wait is announced."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import OperationalError
from typer.testing import CliRunner

from jurybox._cli.common import BUSY_TIMEOUT
from jurybox.cli import app
from jurybox.store import Store, StoreAccessError, StoreError, lock_notice, open_store, shown_url, store_file
from jurybox.store._engine import create_store_engine

SUITE = """\
name: s
agent: {python: toy:agent, kind: function}
cases:
  - name: a
    prompt: hi
    judges: [{contains: ok}]
"""


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "toy.py").write_text("def agent(message, session_id):\n    return 'ok'\n", encoding="utf-8")
    (tmp_path / "s.yaml").write_text(SUITE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("JURYBOX_JUDGE_MODEL", raising=False)
    return tmp_path


@pytest.mark.parametrize("content", [b"this is not a database at all" * 100, b"SQLite format 3\x00" + b"\xff" * 4096])
def test_an_unreadable_store_is_one_line_and_exit_2(folder: Path, content: bytes) -> None:
    (folder / "bad.db").write_bytes(content)
    result = CliRunner().invoke(app, ["run", "s.yaml", "--store", "sqlite:///bad.db", "--no-progress"])
    assert result.exit_code == 2, result.output
    message = " ".join(result.output.split())
    assert "bad.db: the store cannot be read" in message
    assert "move it aside" in message
    assert "Traceback" not in result.output and "[SQL:" not in result.output


def test_open_store_names_the_file_and_what_to_do(tmp_path: Path) -> None:
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"garbage" * 1000)
    with pytest.raises(StoreError) as caught:
        open_store(f"sqlite:///{bad}")
    assert str(caught.value).startswith(f"{bad}: the store cannot be read (file is not a database)")
    assert len(str(caught.value).splitlines()) == 1


def test_a_failing_statement_never_shows_its_parameters(tmp_path: Path) -> None:
    engine = create_store_engine(f"sqlite:///{tmp_path / 'x.db'}")
    try:
        with engine.connect() as connection, pytest.raises(OperationalError) as caught:
            connection.execute(text("INSERT INTO nowhere VALUES (:content)"), {"content": "the case's private answer"})
    finally:
        engine.dispose()
    assert "private answer" not in str(caught.value)


def test_a_locked_store_says_it_waits_and_for_how_long(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    open_store("sqlite:///runs.db").close()
    assert lock_notice("sqlite:///runs.db", 30) is None
    holder = sqlite3.connect(folder / "runs.db", isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    release = threading.Timer(1.0, lambda: holder.execute("ROLLBACK"))

    def notice_then_release(url: str | None, busy_timeout: float) -> str | None:
        # The lock is held until the command has looked, however slowly it starts on a busy machine.
        notice = lock_notice(url, busy_timeout)
        release.start()
        return notice

    monkeypatch.setattr("jurybox.store.lock_notice", notice_then_release)  # where the run service finds it
    try:
        assert "waiting up to 30 s" in str(lock_notice("sqlite:///runs.db", 30))
        result = CliRunner().invoke(app, ["run", "s.yaml", "--store", "sqlite:///runs.db", "--no-progress"])
    finally:
        if release.is_alive() or release.finished.is_set():
            release.join()
        else:
            holder.execute("ROLLBACK")
        holder.close()
    assert result.exit_code == 0, result.output
    assert "runs.db is locked by another process; waiting up to 30 s" in " ".join(result.output.split())


def _hold_exclusive_lock(path: Path) -> sqlite3.Connection:
    """Lock a SQLite store for every other connection, readers too, as a process in a long write would."""
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("INSERT INTO suites (name, created_at, updated_at) VALUES ('lock', '2026-01-01', '2026-01-01')")
    return holder


def test_a_locked_store_raises_the_stores_own_error_on_every_read_and_write(folder: Path) -> None:
    with open_store("sqlite:///runs.db") as setup:
        run_id = setup.runs.begin("s", cases={"a": {}})
    store = open_store("sqlite:///runs.db", busy_timeout=0.2)
    store.close()  # an exclusive lock on a WAL database needs every other connection closed; the store reopens
    holder = _hold_exclusive_lock(folder / "runs.db")
    try:
        calls: dict[str, Callable[[], object]] = {
            "runs.get": lambda: store.runs.get(run_id),
            "runs.begin": lambda: store.runs.begin("s", cases={"b": {}}),
            "results.read_all": lambda: store.results.read_all(run_id),
            "lessons.find": lambda: store.lessons.find("s"),
            "open_store": lambda: open_store("sqlite:///runs.db", busy_timeout=0.2),
        }
        for name, call in calls.items():
            with pytest.raises(StoreAccessError) as caught:
                call()
            error = caught.value
            assert error.locked and error.reason == "database is locked", name
            assert str(error) == "the store sqlite:///runs.db cannot be used right now: database is locked", name
            assert not isinstance(error, StoreError), name  # a "no such run" handler must not swallow it
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert store.runs.get(run_id).suite == "s"  # the same store works again once the lock is gone
    store.close()


@pytest.mark.postgres
def test_an_unreachable_database_is_an_access_error_not_an_unreadable_store() -> None:
    with pytest.raises(StoreAccessError) as caught:
        open_store("postgresql+psycopg://nobody:secret@127.0.0.1:1/nothing?connect_timeout=2")
    error = caught.value
    assert not error.locked and "refused" in error.reason.lower()
    assert "secret" not in str(error) and "***" in error.url
    assert "restore it from a backup" not in str(error)


def test_a_command_on_a_locked_store_is_one_error_line_and_exit_2(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open_store("sqlite:///runs.db") as setup:
        setup.runs.begin("s", cases={"a": {}})
    # The command gives up after its busy timeout (30 s); what it says then is the same after 0.2 s.
    waited: list[float] = []

    def open_briefly(url: str | None, *, busy_timeout: float) -> Store:
        waited.append(busy_timeout)
        return open_store(url, busy_timeout=0.2)

    monkeypatch.setattr("jurybox.store.open_store", open_briefly)  # where the commands find it
    holder = _hold_exclusive_lock(folder / "runs.db")
    try:
        result = CliRunner().invoke(app, ["history", "s", "--store", "sqlite:///runs.db"], env={"COLUMNS": "200"})
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert result.exit_code == 2, result.output
    assert waited == [BUSY_TIMEOUT]  # the command itself would have waited its whole timeout
    assert "error: the store sqlite:///runs.db cannot be used right now: database is locked" in result.output
    assert "Traceback" not in result.output and "[SQL:" not in result.output


def test_every_writing_command_says_it_waits_for_a_lock(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    open_store("sqlite:///runs.db").close()
    holder = sqlite3.connect(folder / "runs.db", isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    release = threading.Timer(1.0, lambda: holder.execute("ROLLBACK"))

    def notice_then_release(url: str | None, busy_timeout: float) -> str | None:
        notice = lock_notice(url, busy_timeout)
        release.start()
        return notice

    monkeypatch.setattr("jurybox.store.lock_notice", notice_then_release)  # where the commands find it
    try:
        result = CliRunner().invoke(app, ["lessons", "add", "s", "Quote the window.", "--store", "sqlite:///runs.db"])
    finally:
        if release.is_alive() or release.finished.is_set():
            release.join()
        else:
            holder.execute("ROLLBACK")
        holder.close()
    assert result.exit_code == 0, result.output
    assert "waiting: the store runs.db is locked by another process; waiting up to 30 s" in " ".join(
        result.output.split()
    )
    with open_store("sqlite:///runs.db") as store:
        assert [lesson.text for lesson in store.lessons.find("s", manual=True)] == ["Quote the window."]


@pytest.mark.parametrize(
    ("url", "file", "shown"),
    [
        ("sqlite:///runs/jurybox.db", Path("runs/jurybox.db"), "sqlite:///runs/jurybox.db"),
        ("sqlite:////abs/jurybox.db?timeout=5", Path("/abs/jurybox.db"), "sqlite:////abs/jurybox.db?timeout=5"),
        ("sqlite:///~/evals.db", Path("~/evals.db").expanduser(), "sqlite:///~/evals.db"),
        ("sqlite://", None, "sqlite://"),
        ("sqlite:///:memory:", None, None),
        ("postgresql://ci:hunter2@db.internal/evals", None, "postgresql+psycopg://ci:***@db.internal/evals"),
        ("not a store url", None, "(an invalid store URL)"),
    ],
)
def test_store_file_and_shown_url_read_a_url_as_the_store_does(url: str, file: Path | None, shown: str | None) -> None:
    assert store_file(url) == file
    if shown is not None:
        assert shown_url(url) == shown
