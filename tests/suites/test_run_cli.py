"""``jurybox run``: the example suite offline and with a judge model, dry runs, filters, exit codes, resume."""

from __future__ import annotations

import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console
from suite_helpers import REPO, TOY_HEADER, stub_reply
from typer.testing import CliRunner

from jurybox._cli.run import (
    EXIT_INTERRUPTED,
    EXIT_NOT_PASSED,
    EXIT_OK,
    EXIT_USAGE,
    RunRequest,
    _resume_command,
    execute,
)
from jurybox.cli import app
from jurybox.executors import fork_available
from jurybox.store import open_store
from jurybox.stubs import StubServer
from jurybox.suites import load_suite

EXAMPLE = REPO / "examples" / "property_agent" / "suite.yaml"


def run(request: RunRequest) -> tuple[int, str, str]:
    """Execute a run in-process; returns (exit code, report text, status text)."""
    out, err = io.StringIO(), io.StringIO()
    code = execute(request, console=Console(file=out, width=200), status=Console(file=err, width=200))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run from an empty folder (the example agent's database and the store are created there)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JURYBOX_JUDGE_MODEL", raising=False)
    monkeypatch.setenv("JURYBOX_CACHE", "off")
    monkeypatch.syspath_prepend(str(REPO))
    return tmp_path


@pytest.mark.embed
def test_the_example_suite_passes_offline_with_the_llm_tier_skipped(in_tmp: Path) -> None:
    code, report, status = run(RunRequest(suites=(EXAMPLE,), formats=("console", "json"), output=str(in_tmp)))

    assert code == EXIT_OK, report + status
    data = json.loads((in_tmp / "property-agent.json").read_text())
    assert data["totals"]["cases"] >= 15
    assert data["totals"]["by_status"]["pass"] == data["totals"]["cases"]
    assert data["totals"]["judge_calls"] == 0
    assert "LLM tier SKIPPED" in status and "how to configure one: in the notes at the end" in status
    assert "SKIPPED" in report
    # How to configure a judge model is said once, in the notes, not on each line that skips it.
    assert (report + status).count("--judge-model ollama:llama3.1") == 1
    tiers = {tier for case in data["cases"] for tier in case["judgment"]["children"]}
    assert tiers == {"deterministic", "similarity"}
    assert (in_tmp / ".jurybox" / "jurybox.db").exists()  # streamed to the default store


@pytest.mark.embed
@pytest.mark.skipif(not fork_available(), reason="--workers forks its worker processes")
def test_the_example_suite_passes_in_two_worker_processes(in_tmp: Path) -> None:
    """The similarity judge's model, the agent's SQLite database and the store, each used from two processes."""
    code, report, status = run(RunRequest(suites=(EXAMPLE,), formats=("json",), output=str(in_tmp), workers=2))

    assert code == EXIT_OK, report + status
    data = json.loads((in_tmp / "property-agent.json").read_text())
    assert data["totals"]["cases"] >= 15
    assert data["totals"]["by_status"]["pass"] == data["totals"]["cases"]
    assert data["status"] == "completed"


def test_workers_without_a_store_is_a_usage_error(in_tmp: Path) -> None:
    code, _, status = run(RunRequest(suites=(EXAMPLE,), no_store=True, workers=2))

    assert code == EXIT_USAGE
    assert "--workers" in status and "--no-store" in status


@pytest.mark.embed
def test_the_example_suite_runs_its_llm_tier_with_a_judge_model(in_tmp: Path) -> None:
    with StubServer("openai", stub_reply) as stub:
        code, report, status = run(
            RunRequest(
                suites=(EXAMPLE,),
                judge_model=f"openai:gpt-4o-mini@{stub.base_url}",
                formats=("json",),
                output=str(in_tmp / "report.json"),
                no_store=True,
            )
        )
        requests = [(request.method, request.path) for request in stub.requests]

    assert code == EXIT_OK, report + status
    data = json.loads((in_tmp / "report.json").read_text())
    # One check of the server before the first case (GET /v1/models), then the judge calls.
    assert requests[0] == ("GET", "/v1/models")
    assert data["totals"]["judge_calls"] == len(requests) - 1 > 0
    assert "SKIPPED" not in status
    decided = {case["case"]: case["judgment"]["decided_by"] for case in data["cases"]}
    assert decided["lists-properties"] == "llm_judge"
    assert decided["occupancy-of-first"] == "llm_judge"  # the rounds' criteria ran
    assert decided["counts-listings"] == "deterministic"  # no LLM judge in that case


def test_dry_run_lists_cases_tiers_and_judge_calls_without_running(in_tmp: Path) -> None:
    code, report, _ = run(RunRequest(suites=(EXAMPLE,), dry_run=True, judge_model="openai:gpt-4o-mini@http://x/v1"))

    assert code == EXIT_OK
    assert "occupancy-of-first" in report and "round1.criteria" in report
    assert "deterministic" in report and "similarity" in report and "llm_judge" in report
    assert "judge calls:" in report and "estimated cost" in report
    assert not (in_tmp / ".jurybox").exists()  # nothing ran, nothing was stored

    code, report, _ = run(RunRequest(suites=(EXAMPLE,), dry_run=True))
    assert "(SKIPPED)" in report and "judge calls: 0" in report


def test_filter_by_tag_and_a_filter_that_matches_nothing(in_tmp: Path) -> None:
    code, report, _ = run(RunRequest(suites=(EXAMPLE,), selectors=("revival",), no_store=True))

    assert code == EXIT_OK
    assert "occupancy-of-first" in report and "second-listing-then-its-revenue" in report
    assert "lists-properties" not in report

    code, _, status = run(RunRequest(suites=(EXAMPLE,), selectors=("no-such-case",), no_store=True))
    assert code == EXIT_USAGE and "matches --filter no-such-case" in status


def test_exit_codes(toy_suite: Callable[[str], Path], in_tmp: Path) -> None:
    passing = toy_suite(TOY_HEADER + "cases:\n  - name: a\n    prompt: listings\n    judges: [{contains: Beach}]\n")
    failing = toy_suite(
        TOY_HEADER + "cases:\n  - name: a\n    prompt: listings\n    judges: [{contains: Lighthouse}]\n", "f.yaml"
    )
    erroring = toy_suite(TOY_HEADER + "cases:\n  - name: a\n    prompt: crash\n    judges: [{contains: x}]\n", "e.yaml")
    broken = toy_suite(TOY_HEADER + "cases:\n  - name: a\n    prompt: hi\n    judges: [{contians: x}]\n", "b.yaml")

    assert run(RunRequest(suites=(passing,), no_store=True))[0] == EXIT_OK
    assert run(RunRequest(suites=(failing,), no_store=True))[0] == EXIT_NOT_PASSED
    assert run(RunRequest(suites=(erroring,), no_store=True))[0] == EXIT_NOT_PASSED
    code, _, status = run(RunRequest(suites=(broken,), no_store=True))
    assert code == EXIT_USAGE and "b.yaml:8" in status and "valid judges" in status
    assert run(RunRequest(suites=(passing,), formats=("json",), no_store=True))[0] == EXIT_USAGE  # no --output


def test_the_typer_command_is_registered(toy_suite: Callable[[str], Path], in_tmp: Path) -> None:
    suite = toy_suite(TOY_HEADER + "cases:\n  - name: a\n    prompt: listings\n    judges: [{contains: Beach}]\n")

    result = CliRunner().invoke(app, ["run", str(suite), "--no-store", "--format", "junit", "--output", "-"])

    assert result.exit_code == EXIT_OK, result.output
    assert "<testsuite" in result.output


@pytest.mark.parametrize("module", ["jurybox", "jurybox.cli"])
def test_python_dash_m_runs_the_command_and_passes_its_exit_code_on(
    toy_suite: Callable[[str], Path], in_tmp: Path, module: str
) -> None:
    # A CI step calling `python -m jurybox.cli run` once did nothing and exited 0, whatever the suite.
    failing = toy_suite(TOY_HEADER + "cases:\n  - name: a\n    prompt: listings\n    judges: [{contains: Nowhere}]\n")

    done = subprocess.run(
        [sys.executable, "-m", module, "run", str(failing), "--no-store", "--no-progress"],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert done.returncode == EXIT_NOT_PASSED, done.stdout + done.stderr
    assert "FAIL" in done.stdout


def test_the_console_table_of_a_big_run_shows_failures_first_and_counts_the_rest(
    toy_suite: Callable[[str], Path], in_tmp: Path
) -> None:
    expected = ["Lighthouse" if i == 7 else "Beach" for i in range(12)]
    cases = "".join(
        f"  - name: case-{i:02d}\n    prompt: listings\n    judges: [{{contains: {text}}}]\n"
        for i, text in enumerate(expected)
    )
    suite = toy_suite(TOY_HEADER + "cases:\n" + cases)

    code, report, _ = run(RunRequest(suites=(suite,), rows=3))
    _, everything, _ = run(RunRequest(suites=(suite,), rows=0))

    assert code == EXIT_NOT_PASSED
    assert "case-07" in report and "FAIL" in report  # the failure is shown though it is 8th in the suite
    # The passing cases are one line: those among the first rows by name, the rest counted.
    assert " PASS  11 case(s): case-00, case-01 and 9 more" in report and "not shown" not in report
    assert all(f"case-{i:02d}" in everything for i in range(12)) and "not shown" not in everything


KILLABLE = (
    TOY_HEADER.replace("timeout: 5", "timeout: 20")
    + "cases:\n"
    + "".join(
        f"  - name: case-{i:02d}\n    prompt: 'slow listings {i}'\n    judges: [{{contains: Beach}}]\n"
        for i in range(40)
    )
)


STOPS = [(signal.SIGKILL, 2, 1), (signal.SIGKILL, 17, 1), (signal.SIGINT, 5, 1)]
if fork_available():
    STOPS.append((signal.SIGINT, 5, 2))  # Ctrl-C at a terminal reaches the parent and both workers


@pytest.mark.parametrize(("stop_with", "after", "workers"), STOPS)
def test_a_stopped_run_resumed_with_resume_last_judges_every_case_exactly_once(
    toy_suite: Callable[[str], Path], in_tmp: Path, stop_with: signal.Signals, after: int, workers: int
) -> None:
    suite = toy_suite(KILLABLE)
    store_url = f"sqlite:///{in_tmp / 'runs.db'}"
    jurybox = str(Path(sys.executable).parent / "jurybox")
    command = [jurybox, "run", str(suite), "--store", store_url, "--no-progress", "-j", "2", "--workers", str(workers)]
    log = (in_tmp / "stopped.log").open("w")
    # Its own process group, as a command started from a shell is: a Ctrl-C goes to the whole group.
    process = subprocess.Popen(
        command, stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ), start_new_session=True
    )
    try:
        recorded: set[str] = set()
        deadline = time.monotonic() + 60
        while len(recorded) < after and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.02)
            recorded = _recorded(store_url)
    finally:
        if stop_with is signal.SIGINT:
            os.killpg(process.pid, signal.SIGINT)
        else:
            process.send_signal(stop_with)
        code = process.wait(timeout=30)
        log.close()
    before = _recorded(store_url)
    output = (in_tmp / "stopped.log").read_text()
    assert after <= len(before) < 40, output
    if stop_with is signal.SIGINT:
        # Ctrl-C: the run stops cleanly, keeps what finished, says how to resume, and is marked interrupted.
        assert code == EXIT_INTERRUPTED, output
        # A command to paste as it is: this suite, this store, the run's settings, this run.
        (hint,) = [line for line in output.splitlines() if line.startswith("finish it with: ")]
        expected = f"finish it with: jurybox run {suite} --store {store_url} --concurrency 2"
        assert hint.startswith(expected + (f" --workers {workers}" if workers > 1 else "") + " --resume "), hint
        assert "Traceback" not in output and "worker" not in output.replace("--workers", ""), output  # none crashed
        assert _status(store_url) == "interrupted"

    code, _, status = run(RunRequest(suites=(suite,), store=store_url, resume="last"))

    assert code == EXIT_OK, status
    assert "resuming run" in status
    store = open_store(store_url)
    try:
        run_info = store.runs.latest("toy")
        assert run_info is not None and run_info.status == "completed"
        records = store.results.read_all(run_info.id)
        assert len(store.runs.newest("toy")) == 1  # the same run, finished; no second run was started
    finally:
        store.close()
    assert sorted(r.case for r in records) == [f"case-{i:02d}" for i in range(40)]
    # Cases recorded before the stop were not sent to the agent again after the restart.
    sessions = _sessions_per_case(in_tmp / "toy.db")
    assert all(sessions[case] == 1 for case in before)


def _status(store_url: str) -> str | None:
    store = open_store(store_url)
    try:
        latest = store.runs.latest("toy")
        return None if latest is None else latest.status
    finally:
        store.close()


def _recorded(store_url: str) -> set[str]:
    store = open_store(store_url)
    try:
        latest = store.runs.latest("toy")
        return set() if latest is None else store.results.recorded(latest.id)
    finally:
        store.close()


def _sessions_per_case(db: Path) -> dict[str, int]:
    with sqlite3.connect(db) as connection:
        sessions = [row[0] for row in connection.execute("select distinct session_id from messages")]
    counts: dict[str, int] = {}
    for session in sessions:
        case = next(part for part in session.split("-case-")[1:2])
        name = "case-" + case.rsplit("-", 1)[0]
        counts[name] = counts.get(name, 0) + 1
    return counts


HUNG_AGENT = (
    "import pathlib, time\n\n"
    "def respond(message, session_id):\n"
    "    pathlib.Path('agent-called').touch()\n"
    "    time.sleep(600)\n"
)


@pytest.mark.parametrize("stop", ["timeout", "ctrl-c"])
def test_a_sync_agent_that_never_returns_does_not_keep_the_command_alive(in_tmp: Path, stop: str) -> None:
    # Its case ends (a timeout or Ctrl-C) while the agent's thread still sleeps: the command must
    # still exit after its report, or a CI job waits for the thread until the job's own limit.
    (in_tmp / "hung_agent.py").write_text(HUNG_AGENT, encoding="utf-8")
    timeout = 1 if stop == "timeout" else 300
    (in_tmp / "hung.yaml").write_text(
        f'name: hung\nagent: {{python: "hung_agent:respond"}}\ndefaults: {{retries: 0, timeout: {timeout}}}\n'
        "cases:\n  - name: a\n    prompt: hi\n    judges: [{contains: hi}]\n",
        encoding="utf-8",
    )
    jurybox = str(Path(sys.executable).parent / "jurybox")
    command = [jurybox, "run", "hung.yaml", "--no-store", "--no-progress"]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True, cwd=in_tmp
    )
    started = time.monotonic()
    if stop == "ctrl-c":
        deadline = time.monotonic() + 60
        while not (in_tmp / "agent-called").exists() and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        os.killpg(process.pid, signal.SIGINT)  # once, while the case is in the agent
        started = time.monotonic()
    try:
        output, _ = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert time.monotonic() - started < 30, output
    assert process.returncode == (EXIT_NOT_PASSED if stop == "timeout" else EXIT_INTERRUPTED), output
    assert "Traceback" not in output
    if stop == "ctrl-c":  # nothing was stored, so there is nothing to --resume
        assert "--resume" not in output and "kept in memory only (--no-store)" in output, output


THREE_CASES = (
    TOY_HEADER
    + "cases:\n"
    + "".join(
        f"  - name: {name}\n    tags: [{tag}]\n    prompt: listings\n    judges: [{{contains: Beach}}]\n"
        for name, tag in (("a", "smoke"), ("b", "smoke"), ("c", "full"))
    )
)


def _interrupted_run(store_url: str, planned: list[str]) -> str:
    store = open_store(store_url)
    try:
        run_id = store.runs.begin("toy", cases={name: {"prompt": "listings"} for name in planned})
        store.finish_run(run_id, "interrupted")
        return run_id
    finally:
        store.close()


def test_a_resumed_run_judges_the_cases_it_planned_not_the_whole_suite(
    toy_suite: Callable[[str], Path], in_tmp: Path
) -> None:
    suite = toy_suite(THREE_CASES)
    store_url = f"sqlite:///{in_tmp / 'runs.db'}"
    run_id = _interrupted_run(store_url, ["a", "b"])  # as `-k smoke` planned it, stopped before any case

    code, _, status = run(RunRequest(suites=(suite,), store=store_url, resume="last", selectors=("a",)))
    assert code == EXIT_USAGE and "drop --filter" in status  # a filter would leave the run half judged

    code, _, status = run(RunRequest(suites=(suite,), store=store_url, resume="last"))
    assert code == EXIT_OK, status
    assert f"resuming run {run_id} of toy: 2 case(s)" in status  # its plan, not the suite's 3 cases
    store = open_store(store_url)
    try:
        assert sorted(store.results.recorded(run_id)) == ["a", "b"]  # not c: the run never planned it
        latest = store.runs.latest("toy")
        assert latest is not None and latest.status == "completed"
    finally:
        store.close()


def test_a_run_whose_planned_case_left_the_suite_is_not_resumed(toy_suite: Callable[[str], Path], in_tmp: Path) -> None:
    suite = toy_suite(THREE_CASES)
    store_url = f"sqlite:///{in_tmp / 'runs.db'}"
    run_id = _interrupted_run(store_url, ["a", "renamed-since"])

    code, _, status = run(RunRequest(suites=(suite,), store=store_url, resume="last"))

    assert code == EXIT_USAGE
    assert f"run {run_id} planned case(s) suite 'toy' no longer has: renamed-since" in status.replace("\n", " ")


def test_a_filter_over_several_suites_skips_those_without_a_match(
    toy_suite: Callable[[str], Path], in_tmp: Path
) -> None:
    smoke = toy_suite(THREE_CASES)
    other = toy_suite(THREE_CASES.replace("name: toy", "name: other").replace("smoke", "nightly"), "other.yaml")

    code, _, status = run(RunRequest(suites=(smoke, other), selectors=("smoke",), no_store=True))

    assert code == EXIT_OK, status
    assert "skipped: no case of suite other matches --filter smoke" in status
    assert "running toy" in status and "running other" not in status

    code, _, status = run(RunRequest(suites=(smoke, other), selectors=("no-such-case",), no_store=True))
    assert code == EXIT_USAGE and "no case of suite toy, other matches --filter no-such-case" in status


def test_two_suites_with_one_name_are_refused_before_anything_runs(
    toy_suite: Callable[[str], Path], in_tmp: Path
) -> None:
    first = toy_suite(THREE_CASES)
    second = toy_suite(THREE_CASES.replace("name: a", "name: z"), "copy.yaml")

    code, _, status = run(RunRequest(suites=(first, second), no_store=True))
    assert code == EXIT_USAGE
    said = " ".join(status.split())  # the two temporary paths fill the line: it wraps where the temp root puts it
    assert "are both named 'toy'" in said and "rename one" in said

    code, _, status = run(RunRequest(suites=(first, first), no_store=True))
    assert code == EXIT_USAGE and "is given twice" in " ".join(status.split())
    assert not (in_tmp / "toy.db").exists()  # no case ran


@pytest.mark.parametrize(
    ("formats", "output", "message"),
    [
        (("json", "junit"), "-", "output '-' (standard output) takes one format"),
        (("json",), "a-file.txt/report.json", "a-file.txt is a file, not a folder"),
        (("json", "html"), "a-file.txt/reports", "a-file.txt is a file, not a folder"),
    ],
)
def test_an_output_that_cannot_be_written_is_refused_before_the_run(
    toy_suite: Callable[[str], Path], in_tmp: Path, formats: tuple[str, ...], output: str, message: str
) -> None:
    suite = toy_suite(THREE_CASES)
    (in_tmp / "a-file.txt").write_text("not a folder", encoding="utf-8")

    code, _, status = run(RunRequest(suites=(suite,), formats=formats, output=output, no_store=True))

    assert code == EXIT_USAGE
    assert message in status.replace("\n", " ")
    assert not (in_tmp / "toy.db").exists()  # the agent was never called


def test_the_resume_hint_does_not_print_a_password(toy_suite: Callable[[str], Path]) -> None:
    suite = load_suite(toy_suite(THREE_CASES))
    request = RunRequest(
        suites=(suite.path,),
        store="postgresql+psycopg://bob:s3cret@db.internal:5432/jurybox",
        judge_model="openai:gpt-4o-mini@https://user:key@llm.internal/v1",
        timeout=30.0,
        retries=1,
        formats=("console", "junit"),
        output="reports",
    )

    command = _resume_command(suite, request, stored=True)

    assert command is not None and "s3cret" not in command and "key@" not in command
    assert "--store postgresql+psycopg://bob:***@db.internal:5432/jurybox" in command
    assert "--judge-model openai:gpt-4o-mini@https://user:***@llm.internal/v1" in command
    # The rest of the run is judged and reported as it began.
    assert command.endswith("--timeout 30.0 --retries 1 --output reports --format console --format junit")
