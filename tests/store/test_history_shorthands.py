"""``jurybox history`` without a suite, ``compare last~1``, and a server store's error that is no damaged file."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import make_url
from sqlalchemy.exc import DatabaseError
from store_testkit import record_run
from typer.testing import CliRunner

from jurybox.cli import app
from jurybox.store import StoreAccessError, StoreError, open_store
from jurybox.store._engine import unreadable_store

runner = CliRunner()


def invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args), env={"COLUMNS": "200"})
    return result.exit_code, result.output


def test_history_needs_no_suite_when_the_store_has_one(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'one.db'}"
    with open_store(url) as store:
        for _ in range(2):
            record_run(store, "property-agent", {"a": (True, True)})
    code, out = invoke("history", "--store", url)
    assert code == 0, out
    assert "History of property-agent" in out
    with open_store(url) as store:
        record_run(store, "checkout-bot", {"a": (True, True)})
    code, out = invoke("history", "--store", url)
    assert code == 2
    assert out.strip() == (
        "error: the store has runs of several suites (checkout-bot, property-agent): name one, "
        "e.g. jurybox history checkout-bot"
    )


def test_history_of_an_empty_store_says_to_run_first(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'empty.db'}"
    open_store(url).close()
    code, out = invoke("history", "--store", url)
    assert code == 2 and "no runs in store" in out and "jurybox run SUITE.yaml" in out


def test_last_tilde_n_counts_back_among_the_latest_run_s_suite(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    with open_store(url) as store:
        first = record_run(store, "property-agent", {"a": (True, True)})
        second = record_run(store, "property-agent", {"a": (True, False)})
        other = record_run(store, "checkout-bot", {"a": (True, True)})
        third = record_run(store, "property-agent", {"a": (True, True)})
        assert store.runs.resolve("last~1").id == other
        assert store.runs.resolve("last~1", suite="property-agent").id == second
        assert store.runs.resolve("latest~2", suite="property-agent").id == first
        with pytest.raises(StoreError, match=r"last~9: there are only 3 run\(s\) of suite 'property-agent'"):
            store.runs.resolve("last~9", suite="property-agent")
    code, out = invoke("compare", "last~1", "--store", url)
    assert code == 0, out
    assert f"A = run {second} (property-agent" in out and f"B = run {third} (property-agent" in out
    code, out = invoke("compare", "last~2", "last~1", "--store", url)
    assert code == 0, out
    assert f"A = run {first}" in out and f"B = run {second}" in out  # both in the latest run's suite


def test_a_server_store_error_is_never_told_to_restore_a_backup() -> None:
    error = DatabaseError("SELECT 1", {}, Exception("server closed the connection unexpectedly"))
    server = unreadable_store(make_url("postgresql+psycopg://me:secret@db.invalid/evals"), error)
    assert isinstance(server, StoreAccessError)
    assert "backup" not in str(server) and "secret" not in str(server)
    assert "cannot be used right now: server closed the connection unexpectedly" in str(server)
    damaged = unreadable_store(
        make_url("sqlite:////tmp/x.db"), DatabaseError("x", {}, Exception("file is not a database"))
    )
    assert isinstance(damaged, StoreError) and "backup" in str(damaged)


def test_a_command_line_mistake_is_one_line() -> None:
    result = runner.invoke(app, ["run", "--concurrency", "0", "x.yaml"], env={"COLUMNS": "80"}, prog_name="jurybox")
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines == [
        "error: Invalid value for '--concurrency' / '-j': Input should be greater than or equal to 1 "
        "(see jurybox run --help)"
    ]
