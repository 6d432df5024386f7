"""A stored suite keeps its file's top-level keys, so it runs from the store as its file does.

``jurybox store import`` used to keep only ``agent`` and ``defaults``: a stored suite lost
its ``database`` (its SQL checks could not run), ``seeds``, ``concurrency``, ``description``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from jurybox.cli import app
from jurybox.store import export_suite_file, import_suite_file, open_store

AGENT = """
import sqlite3


def respond(message, session_id):
    with sqlite3.connect("app.db") as db:
        db.execute("create table if not exists messages (session_id text, text text)")
        db.execute("insert into messages values (?, ?)", (session_id, message))
    return f"Noted: {message}"
"""

SUITE = """\
name: notes
description: An agent that keeps what it is told.
database: sqlite:///app.db
concurrency: 2
metadata: {team: support}
agent: {python: "notes_agent:respond"}
defaults: {timeout: 30}
cases:
  - name: keeps-the-note
    prompt: Remember the code 1234
    judges: [{contains: "1234"}]
    sql_checks:
      - query: "select count(*) from messages where session_id = :session_id"
        expect: {min: 1}
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "notes_agent.py").write_text(AGENT)
    (tmp_path / "suite.yaml").write_text(SUITE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_import_keeps_every_top_level_key_and_round_trips(project: Path) -> None:
    url = f"sqlite:///{project / 'store.db'}"
    with open_store(url) as store:
        import_suite_file(store, project / "suite.yaml")
        exported = store.suites.export("notes")
        assert list(exported) == [
            "name", "description", "database", "concurrency", "metadata", "agent", "defaults", "cases",
        ]  # fmt: skip
        assert exported["database"] == "sqlite:///app.db" and exported["metadata"] == {"team": "support"}
        first = project / "first.yaml"
        export_suite_file(store, "notes", first)
        _, counts = import_suite_file(store, first)
        assert counts == {"added": 0, "changed": 0, "unchanged": 1, "retired": 0}
        second = project / "second.yaml"
        export_suite_file(store, "notes", second)
    assert second.read_bytes() == first.read_bytes()


def test_a_stored_suite_runs_its_sql_checks_from_the_store(project: Path) -> None:
    url = f"sqlite:///{project / 'store.db'}"
    with open_store(url) as store:
        import_suite_file(store, project / "suite.yaml")
    (project / "suite.yaml").unlink()  # only the store has it now
    result = CliRunner().invoke(
        app, ["run", "--store", url, "--suite", "notes", "--no-progress", "--format", "json", "--output", "-"]
    )
    assert result.exit_code == 0, result.output
    with open_store(url) as store:
        run = store.runs.latest("notes")
        assert run is not None and run.passed == 1
        [record] = store.results.read_all(run.id)
    # The SQL check ran against the stored suite's database and passed.
    deterministic = record.judgment.children["deterministic"]
    assert deterministic.children["sql_checks[0]"].status.value == "pass"
