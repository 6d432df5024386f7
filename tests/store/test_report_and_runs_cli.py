"""``jurybox runs`` and ``jurybox report RUN`` through the real app, on a SQLite store built with the Store API."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from store_testkit import make_record, record_run
from typer.testing import CliRunner

from jurybox.cli import app
from jurybox.store import Store

runner = CliRunner()
CASES = ["paris-weather-in-celsius-for-tomorrow", "refund-window", "opening-hours"]


@pytest.fixture
def store_url(tmp_path: Path) -> str:
    """SQLite only: the commands read the store through its backend-neutral API."""
    return f"sqlite:///{tmp_path / 'cli.db'}"


@pytest.fixture
def two_runs(store: Store) -> tuple[str, str]:
    first = record_run(store, "weather-bot", {name: (True, True) for name in CASES})
    second = record_run(store, "weather-bot", {name: (True, name != "refund-window") for name in CASES})
    return first, second


def invoke(store_url: str, *args: str, columns: int = 80) -> tuple[int, str, str]:
    result = runner.invoke(app, [*args, "--store", store_url], env={"COLUMNS": str(columns)})
    return result.exit_code, result.stdout, result.stderr


def test_runs_lists_every_run_newest_first_and_whole_at_80_columns(
    store: Store, store_url: str, two_runs: tuple[str, str]
) -> None:
    record_run(store, "an-assistant-with-a-rather-long-suite-name", {"only-case": (True, True)})
    code, out, _ = invoke(store_url, "runs")
    assert code == 0, out
    lines = out.splitlines()
    assert all(len(line) <= 80 for line in lines), out
    assert lines[0].split() == ["run", "suite", "status", "results", "time"]
    ids = [line.split()[0] for line in lines[1:] if re.match(r"\d{8}-\d{6}-[0-9a-f]{6}", line)]
    assert ids[1:] == [two_runs[1], two_runs[0]]  # newest first, ids never cut
    row = next(line for line in lines if line.startswith(two_runs[1]))
    assert "completed" in row and "2 pass 1 fail" in row
    # A long suite name wraps; every letter of it is still there.
    assert lines[1].split()[1] + lines[2].split()[0] == "an-assistant-with-a-rather-long-suite-name"


def test_runs_of_one_suite_with_a_limit_and_the_start_time_when_wide(
    store: Store, store_url: str, two_runs: tuple[str, str]
) -> None:
    record_run(store, "other", {"x": (True, True)})
    code, out, _ = invoke(store_url, "runs", "weather-bot", "--limit", "1", columns=140)
    assert code == 0, out
    assert two_runs[1] in out and two_runs[0] not in out and "other" not in out
    assert "started (UTC)" in out
    code, out, _ = invoke(store_url, "runs", "nothing-here")
    assert code == 0 and "no runs of suite 'nothing-here'" in out


def test_report_re_renders_a_stored_run_in_every_format(
    store_url: str, two_runs: tuple[str, str], tmp_path: Path
) -> None:
    out_dir = tmp_path / "reports"
    args = ["report", two_runs[1][:-2], "-f", "json", "-f", "junit", "-f", "markdown", "-f", "html", "-o"]
    code, out, err = invoke(store_url, *args, str(out_dir))
    assert code == 0, out + err
    data = json.loads((out_dir / "weather-bot.json").read_text(encoding="utf-8"))
    assert data["run_id"] == two_runs[1] and data["totals"]["cases"] == 3
    assert ET.parse(out_dir / "weather-bot.junit.xml").getroot().get("failures") == "1"
    assert "refund-window" in (out_dir / "weather-bot.md").read_text(encoding="utf-8")
    assert "<html" in (out_dir / "weather-bot.html").read_text(encoding="utf-8")
    # No console table asked for: the summary and every file written, on stderr.
    assert f"weather-bot · run {two_runs[1]} · completed: 2/3 passed (1 failed)" in err
    for name in ("weather-bot.json", "weather-bot.junit.xml", "weather-bot.md", "weather-bot.html"):
        assert str(out_dir / name) in err.replace("\n", "")


def test_report_last_prints_the_console_table_and_json_to_stdout(store_url: str, two_runs: tuple[str, str]) -> None:
    code, out, _ = invoke(store_url, "report", "last", columns=200)
    assert code == 0, out
    assert two_runs[1] in out and "refund-window" in out and "2/3 passed" in out
    code, verbose, _ = invoke(store_url, "report", "last", "-v", columns=200)
    assert code == 0, verbose
    # Without -v the passing cases share one line that says how to list them; -v gives each its row.
    assert "-v lists each" in out and "-v lists each" not in verbose
    code, out, err = invoke(store_url, "report", two_runs[0], "--format", "json", "--output", "-")
    assert code == 0, err
    assert json.loads(out)["run_id"] == two_runs[0]


def test_unknown_run_and_missing_store_are_one_line_errors(
    store_url: str, two_runs: tuple[str, str], tmp_path: Path
) -> None:
    code, out, err = invoke(store_url, "report", "nope")
    assert code == 2
    message = (out + err).strip()
    assert message.startswith("error:") and "nope" in message and "\n" not in message and "Traceback" not in message

    missing = tmp_path / "elsewhere" / "jurybox.db"
    for command in (["runs"], ["report", "last"]):
        code, out, err = invoke(f"sqlite:///{missing}", *command, columns=200)
        assert code == 2
        assert f"error: no jurybox store at {missing}" in out + err
    assert not missing.exists()  # reading never creates a store


def test_report_refuses_a_file_format_without_output(store_url: str, two_runs: tuple[str, str]) -> None:
    code, out, err = invoke(store_url, "report", "last", "-f", "html", columns=200)
    assert code == 2 and "give an output path (--output)" in out + err


def test_an_unfinished_run_is_listed_as_running_with_what_it_recorded(store: Store, store_url: str) -> None:
    run_id = store.runs.begin("single", cases={"a": {"prompt": "q"}, "b": {"prompt": "r"}}, judge_model="fake")
    store.results.record(run_id, make_record("a", deterministic=False, llm=True))
    code, out, _ = invoke(store_url, "runs", columns=200)
    assert code == 0, out
    row = next(line for line in out.splitlines() if line.startswith(run_id))
    assert "running" in row and "0 pass 1 fail of 2" in row
