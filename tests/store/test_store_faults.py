"""A store that cannot be read, or is locked: one clear line, exit 2, never stored content; a wait is announced."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import OperationalError
from typer.testing import CliRunner

from jurybox.cli import app
from jurybox.store import StoreError, lock_notice, open_store
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

    monkeypatch.setattr("jurybox.runs._prepared.lock_notice", notice_then_release)
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
