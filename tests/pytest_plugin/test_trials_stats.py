"""The Wilson interval and the sequential stopping rule: stable cases stop early, flaky ones are named flaky."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator

import pytest

from jurybox.core import Judgment
from jurybox.testing import Decision, JuryboxAssertionError, StoppingRule, assert_pass_rate, run_trials, wilson_interval


def test_wilson_interval_known_values() -> None:
    low, high = wilson_interval(5, 10)
    assert math.isclose(low, 0.2366, abs_tol=1e-4) and math.isclose(high, 0.7634, abs_tol=1e-4)
    low, high = wilson_interval(10, 10)
    assert math.isclose(low, 10 / (10 + 1.959964**2), abs_tol=1e-6) and high == 1.0
    assert wilson_interval(0, 4)[0] == 0.0
    assert wilson_interval(0, 0) == (0.0, 1.0)


@pytest.mark.parametrize(("passes", "trials", "confidence"), [(-1, 3, 0.95), (4, 3, 0.95), (1, 3, 1.0)])
def test_wilson_interval_rejects_nonsense(passes: int, trials: int, confidence: float) -> None:
    with pytest.raises(ValueError):
        wilson_interval(passes, trials, confidence)


def test_rule_requires_ceil_of_rate_times_n() -> None:
    assert StoppingRule(0.7, 10).required_passes == 7  # 0.7 * 10 is 7.000000000000001 in floats
    assert StoppingRule(0.75, 10).required_passes == 8
    with pytest.raises(ValueError):
        StoppingRule(0.0, 10)
    with pytest.raises(ValueError):
        StoppingRule(0.5, 0)


def counting(outcomes: Iterator[bool]) -> tuple[list[int], Callable[[], None]]:
    calls: list[int] = []

    def trial() -> None:
        calls.append(1)
        assert next(outcomes), "the model answered off-topic"

    return calls, trial


def test_always_passing_case_stops_early() -> None:
    calls, trial = counting(itertools.cycle([True]))
    result = assert_pass_rate(trial, 0.5, max_trials=20)
    # The Wilson lower bound clears 0.5 after 4 straight passes (4/(4+z^2) = 0.51).
    assert len(calls) == result.trials == 4
    assert result.passed and result.stopped_early and not result.flaky
    assert result.label == "stable pass"


def test_always_passing_case_stops_early_at_a_high_bar_too() -> None:
    calls, trial = counting(itertools.cycle([True]))
    result = assert_pass_rate(trial, 0.8, max_trials=20)
    assert result.passed and result.trials == len(calls) == 16  # 16 of 20 is already the required count


def test_half_passing_case_is_reported_as_flaky() -> None:
    calls, trial = counting(itertools.cycle([True, False]))
    with pytest.raises(JuryboxAssertionError) as failure:
        assert_pass_rate(trial, 0.9, max_trials=20)
    message = str(failure.value)
    assert message.startswith("FAILED (flaky): ")
    assert "rate 50%" in message and "95% Wilson interval [" in message and "stopped early of 20" in message
    assert "trial 2: AssertionError: the model answered off-topic" in message
    assert len(calls) < 20


def test_half_passing_case_carries_rate_and_interval() -> None:
    _, trial = counting(itertools.cycle([True, False]))
    result = run_trials(trial, 0.8, max_trials=30)
    assert result.decision is Decision.FAIL and result.flaky and result.label == "flaky"
    assert result.rate == pytest.approx(0.5, abs=0.1)
    low, high = result.interval
    assert low < 0.5 < high < 0.8
    assert result.trials < 30


def test_flaky_case_above_the_bar_passes_but_is_labelled_flaky() -> None:
    # Fails one trial in ten: meets a 70% bar, and still says it is flaky.
    _, trial = counting(itertools.cycle([False] + [True] * 9))
    result = assert_pass_rate(trial, 0.7, max_trials=10)
    assert result.passed and result.flaky and result.trials == 8  # 7 passes settle it
    assert result.summary().startswith("passed (flaky): 7/8 trials passed, stopped early of 10")


def test_trial_outcomes_from_bools_judgments_and_exceptions() -> None:
    results = iter([False, Judgment.failed(reasoning="off"), RuntimeError("timeout"), True, Judgment.passed()])

    def trial() -> object:
        value = next(results)
        if isinstance(value, Exception):
            raise value
        return value

    result = run_trials(trial, 0.4, max_trials=5)
    assert (result.passes, result.trials) == (2, 5)
    assert result.failures == (
        "trial 1: trial returned False",
        "trial 2: judgment fail: off",
        "trial 3: RuntimeError: timeout",
    )


async def test_async_trials_run_inside_a_running_loop() -> None:
    async def trial() -> bool:
        return True

    result = assert_pass_rate(trial, 0.5, max_trials=6)
    assert result.passed and result.trials == 3  # 3 of 6 is the required count


def test_pytest_skip_inside_a_trial_is_not_a_failure() -> None:
    def trial() -> None:
        pytest.skip("no key")

    with pytest.raises(pytest.skip.Exception):
        run_trials(trial, 0.5, max_trials=3)
