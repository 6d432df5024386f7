"""The trials line of the plugin's summary: a pass reads as a pass with its rate, a caught failure is no FAIL."""

from __future__ import annotations

from collections.abc import Callable

from jurybox.pytest_plugin._summary import trials_line
from jurybox.testing import run_trials


def flips(pattern: list[bool]) -> Callable[[], None]:
    outcomes = iter(pattern * 10)

    def trial() -> None:
        assert next(outcomes), "answer drifted"

    return trial


def test_a_flaky_result_above_the_bar_reads_as_a_pass_with_its_rate() -> None:
    result = run_trials(flips([True] * 9 + [False]), 0.7, max_trials=10)
    line = trials_line(result.to_dict(), test_passed=True)
    assert line.startswith("PASS ")
    assert "FAIL" not in line and f"rate {result.rate:.0%}" in line and "required >= 70%" in line


def test_a_failing_result_fails_loudly_only_when_its_test_failed() -> None:
    data = run_trials(flips([True, False]), 0.9, max_trials=20).to_dict()
    assert trials_line(data, test_passed=False).startswith("FAIL flaky: 2/4 passed")
    caught = trials_line(data, test_passed=True)
    assert "FAIL" not in caught
    assert caught.startswith("flaky: 2/4 passed") and caught.endswith("(not met: the test handled it and passed)")
