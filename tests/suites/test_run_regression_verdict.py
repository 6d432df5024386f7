"""``jurybox run`` ends with the regression verdict when the store holds a baseline, and can exit on it."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console
from suite_helpers import TOY_HEADER

from jurybox._cli import run as run_command
from jurybox._cli.run import EXIT_NOT_PASSED, EXIT_OK, RunRequest, execute
from jurybox.store import lessons_for, open_store

PASSING = (
    TOY_HEADER
    + "cases:\n"
    + "".join(f"  - name: c{n}\n    prompt: listings\n    judges: [{{contains: Beach}}]\n" for n in range(4))
)


def _run(request: RunRequest) -> tuple[int, str]:
    err = io.StringIO()
    code = execute(request, console=Console(file=io.StringIO(), width=200), status=Console(file=err, width=200))
    return code, err.getvalue()


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JURYBOX_JUDGE_MODEL", raising=False)
    monkeypatch.setenv("JURYBOX_CACHE", "off")
    return tmp_path


def test_the_run_says_regression_detected_and_fails_only_when_asked(
    toy_suite: Callable[[str], Path], in_tmp: Path
) -> None:
    store = f"sqlite:///{in_tmp / 'runs.db'}"
    suite = toy_suite(PASSING)
    code, said = _run(RunRequest(suites=(suite,), store=store))
    assert code == EXIT_OK and "egression detected" not in said and "No regression" not in said  # nothing to compare
    for _ in range(5):  # a full baseline window
        code, said = _run(RunRequest(suites=(suite,), store=store))
    assert code == EXIT_OK and "No regression against the baseline of 5 earlier run(s)." in said
    # Half the cases now look for a word the agent never says: the deterministic pass rate falls.
    worse = PASSING.replace("contains: Beach}]\n  - name: c1", "contains: Lighthouse}]\n  - name: c1", 1)
    worse = worse.replace("contains: Beach}]\n  - name: c2", "contains: Lighthouse}]\n  - name: c2", 1)
    suite.write_text(worse.replace("{db}", str(in_tmp / "toy.db")), encoding="utf-8")
    code, said = _run(RunRequest(suites=(suite,), store=store))
    assert code == EXIT_NOT_PASSED  # cases failed: the exit code says so already
    assert "Regression detected: deterministic 50.0% vs baseline 100.0%" in said
    assert "jurybox gate toy" in said and "jurybox lessons --suite toy" in said
    with open_store(store) as opened:  # kept once as a lesson when the run finished; the verdict only reads
        assert lessons_for(opened, suite="toy", limit=50).count("the tier 'deterministic' pass rate fell") == 1


def test_fail_on_regression_turns_a_passing_regressed_run_into_exit_1(
    toy_suite: Callable[[str], Path], in_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = f"sqlite:///{in_tmp / 'runs.db'}"
    suite = toy_suite(PASSING)
    # Every case passes; the baseline check is made to find a regression (its own figures are tested above).
    monkeypatch.setattr(run_command, "print_regression_verdict", lambda *_: True)
    assert _run(RunRequest(suites=(suite,), store=store))[0] == EXIT_OK
    assert _run(RunRequest(suites=(suite,), store=store, fail_on_regression=True))[0] == EXIT_NOT_PASSED
    # Without a store there is no baseline, so nothing to fail on.
    assert _run(RunRequest(suites=(suite,), no_store=True, fail_on_regression=True))[0] == EXIT_OK
