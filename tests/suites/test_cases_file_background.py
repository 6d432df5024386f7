"""A big ``cases_file`` checked in a forked child while its run starts: the same problems, file and line, after."""

from __future__ import annotations

import io
import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console
from suite_helpers import TOY_HEADER

from jurybox import runs
from jurybox._cli.run import RunRequest, execute
from jurybox.suites import StreamedCases, SuiteError, _case_file_check, _loader_stream, load_suite, plan_run

STREAMED = TOY_HEADER + "cases_file: cases.jsonl\n"


@pytest.fixture(autouse=True)
def small_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any file is 'big', and the lines checked before the run are the first 3."""
    monkeypatch.setattr(_loader_stream, "BACKGROUND_BYTES", 1)
    monkeypatch.setattr(_loader_stream, "PREFIX_LINES", 3)
    assert _case_file_check.BACKGROUND_BYTES > 1  # the default is a big file's


def write(path: Path, count: int, bad: dict[int, str] | None = None) -> Path:
    case = {"prompt": "hello", "judges": [{"contains": "Beach"}]}
    lines = [json.dumps({"name": f"case-{i:03d}", **case}) for i in range(count)]
    for index, text in (bad or {}).items():
        lines[index] = text
    file = path.parent / "cases.jsonl"
    file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return file


def test_the_first_lines_are_checked_at_once_and_the_rest_in_a_child(toy_suite: Callable[..., Path]) -> None:
    path = toy_suite(STREAMED)
    twice = json.dumps({"name": "case-000", "prompt": "x", "judges": [{"contains": "y"}]})
    file = write(path, 12, {1: "{oops", 9: twice})
    with pytest.raises(SuiteError, match=f"{file}:2: invalid JSON"):  # a typo near the top: before anything runs
        load_suite(path, check_cases_file="background")

    write(path, 12, {9: twice, 10: "[1]"})
    suite = load_suite(path, check_cases_file="background")
    assert isinstance(suite.cases, StreamedCases)
    streamed = suite.cases.file
    assert streamed.pending is not None and len(suite.cases) == 12  # counted without building a line
    plan = plan_run(suite, suite.select())
    assert plan.estimated and plan.max_calls == 0
    problems = [str(p) for p in streamed.settle()]
    assert problems == [
        f"{file}:11: each line of a cases file is one case: a JSON object with 'name'",
        f"{file}:10: name: duplicate case name 'case-000' (first at line 1)",
    ]
    assert streamed.pending is None and streamed.settle() == tuple(streamed.problems)


def test_a_good_file_runs_while_it_is_checked_and_gets_its_totals(toy_suite: Callable[..., Path]) -> None:
    path = toy_suite(STREAMED)
    write(path, 8)
    request = runs.RunRequest(suites=(path,), no_store=True)
    with runs.prepare(request, tune_gc=True) as prepared:
        (planned,) = prepared.suites
        assert planned.plan.estimated
        (result,) = prepared.run()
        assert result.status == "completed" and len(result.records) == 8
        cases = planned.suite.cases
        assert isinstance(cases, StreamedCases) and cases.file.pending is None
        assert cases.file.totals is not None and cases.file.totals.cases == 8


def test_bad_lines_found_while_the_run_goes_stop_it_with_file_and_line(toy_suite: Callable[..., Path]) -> None:
    path = toy_suite(STREAMED)
    file = write(path, 30, {25: json.dumps({"name": "case-x", "prompt": "hi", "judges": [{"contians": "x"}]})})
    request = runs.RunRequest(suites=(path,), no_store=True, concurrency=1)
    with runs.prepare(request, tune_gc=True) as prepared, pytest.raises(SuiteError) as caught:
        prepared.run()
    assert f"{file}:26: judges[0]" in str(caught.value) and "contians" in str(caught.value)


def test_a_dry_run_waits_for_the_check_and_plans_with_its_totals(toy_suite: Callable[..., Path]) -> None:
    path = toy_suite(STREAMED)
    write(path, 6)
    with runs.prepare(runs.RunRequest(suites=(path,), no_store=True), tune_gc=True) as prepared:
        prepared.settle()
        assert not prepared.suites[0].plan.estimated and len(prepared.suites[0].plan.cases) == 6


def test_an_interrupted_run_stops_the_check_instead_of_waiting_for_it(
    toy_suite: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    class SlowCheck(_case_file_check.BackgroundCheck):
        def __init__(self, check: Callable[[], _case_file_check.CheckOutcome], path: Path) -> None:
            def slow() -> _case_file_check.CheckOutcome:
                time.sleep(60)  # in the forked child: a check far longer than the run
                return check()

            super().__init__(slow, path)

    monkeypatch.setattr(_loader_stream, "BackgroundCheck", SlowCheck)
    path = toy_suite(STREAMED)
    write(path, 8)
    started = time.perf_counter()
    with runs.prepare(runs.RunRequest(suites=(path,), no_store=True), tune_gc=True) as prepared:
        # As Ctrl-C as the run starts.
        (result,) = prepared.run(starting=lambda planned: prepared.stop())
        assert result.status == "interrupted"
    assert time.perf_counter() - started < 20


def test_the_command_names_a_late_bad_line_and_exits_2(toy_suite: Callable[..., Path]) -> None:
    path = toy_suite(STREAMED)
    file = write(path, 30, {27: "{oops"})
    err = io.StringIO()
    request = RunRequest(suites=(path,), no_store=True, concurrency=1, progress=False)
    code = execute(request, console=Console(file=io.StringIO(), width=200), status=Console(file=err, width=400))
    assert code == 2
    assert f"{file}:28: invalid JSON" in err.getvalue()


def test_a_suite_that_fails_after_its_file_check_started_stops_the_child(
    toy_suite: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[_case_file_check.BackgroundCheck] = []
    real = _loader_stream.BackgroundCheck

    def spy(*args: object, **kwargs: object) -> _case_file_check.BackgroundCheck:
        check = real(*args, **kwargs)  # type: ignore[arg-type]
        started.append(check)
        return check

    monkeypatch.setattr(_loader_stream, "BackgroundCheck", spy)
    path = toy_suite(STREAMED.replace("toy_agent:make_agent", "no_such_module_here:make_agent"))
    write(path, 50)
    with pytest.raises(SuiteError, match="no_such_module_here"):
        load_suite(path, check_cases_file="background")
    [check] = started
    assert check._reaping  # reaped: no child left checking a file nobody will run, no open pipe
    with pytest.raises(ChildProcessError):
        os.waitpid(check._pid, os.WNOHANG)


LINE_OF_CASE = st.builds(
    lambda name, skip, key: json.dumps({"name": name, key: skip, "prompt": "x"}, ensure_ascii=False),
    st.uuids().map(str),
    st.sampled_from([True, False, None, "true", 1]),
    st.sampled_from(["skip", "sk\\u0069p", "\\u0073kip", "skipped", "tags"]),
)
BLANK = st.text(alphabet=" \t\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2028\u3000\ufeff", max_size=4)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.one_of(LINE_OF_CASE, BLANK), max_size=25))
def test_the_count_made_while_the_check_runs_equals_what_the_loader_reads(tmp_path: Path, lines: list[str]) -> None:
    file = tmp_path / "cases.jsonl"
    # JSON text written with its escapes as they are: a key spelt "sk\u0069p" is the key skip.
    file.write_bytes("\n".join(line.replace("\\\\u", "\\u") for line in lines).encode() + b"\n")
    read = [text for text in file.read_text(encoding="utf-8").split("\n") if text.strip()]
    cases = [text for text in read if not _marked_skip(text)]
    assert _case_file_check.count_cases(file, _loader_stream._skipped) == (len(cases), len(read))


def _marked_skip(text: str) -> bool:
    try:
        return json.loads(text).get("skip") is True
    except ValueError:  # a line that will not load (a stray BOM): a case to the count, a problem to the check
        return False
