"""Repeated trials of a non-deterministic check, decided by the sequential stopping rule."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from jurybox.core import Judgment, run_sync
from jurybox.stats import wilson_interval
from jurybox.testing._errors import JuryboxAssertionError
from jurybox.testing._scope import current_scope
from jurybox.testing._stats import Decision, StoppingRule

#: How many failure messages a result keeps (the first ones), so a report stays readable.
KEPT_FAILURES = 3


@dataclass(frozen=True)
class TrialsResult:
    """What a run of trials found.

    Attributes:
        passes: Trials that passed.
        trials: Trials run (at most ``max_trials``; fewer when the rule stopped early).
        max_trials: The budget ``n``.
        min_pass_rate: The required pass rate ``p``.
        confidence: Confidence level of ``interval``.
        interval: Wilson interval of the pass rate.
        decision: PASS or FAIL (never CONTINUE once finished).
        failures: Messages of the first failing trials.
    """

    passes: int
    trials: int
    max_trials: int
    min_pass_rate: float
    confidence: float
    interval: tuple[float, float]
    decision: Decision
    failures: tuple[str, ...] = ()

    @property
    def rate(self) -> float:
        return self.passes / self.trials if self.trials else 0.0

    @property
    def passed(self) -> bool:
        return self.decision is Decision.PASS

    @property
    def flaky(self) -> bool:
        """Both outcomes were seen: the check is non-deterministic, whatever the verdict."""
        return 0 < self.passes < self.trials

    @property
    def stopped_early(self) -> bool:
        return self.trials < self.max_trials

    @property
    def label(self) -> str:
        if self.flaky:
            return "flaky"
        return "stable pass" if self.passes else "stable fail"

    def summary(self) -> str:
        """One line: verdict, label, trials used, observed rate and interval."""
        low, high = self.interval
        verdict = "passed" if self.passed else "FAILED"
        early = f", stopped early of {self.max_trials}" if self.stopped_early else ""
        return (
            f"{verdict} ({self.label}): {self.passes}/{self.trials} trials passed{early}; "
            f"rate {self.rate:.0%}, {self.confidence:.0%} Wilson interval [{low:.2f}, {high:.2f}], "
            f"required >= {self.min_pass_rate:.0%}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "decision": self.decision.value,
            "label": self.label,
            "passes": self.passes,
            "trials": self.trials,
            "max_trials": self.max_trials,
            "min_pass_rate": self.min_pass_rate,
            "rate": round(self.rate, 4),
            "confidence": self.confidence,
            "interval": [round(self.interval[0], 4), round(self.interval[1], 4)],
            "failures": list(self.failures),
        }


def _is_pytest_control(exc: BaseException) -> bool:
    """Skip, xfail and exit requests from pytest must end the test, not count as failed trials."""
    outcomes = sys.modules.get("_pytest.outcomes")
    if outcomes is None:
        return False
    return isinstance(exc, outcomes.Skipped | outcomes.Exit | outcomes.XFailed)


def _wait(value: Awaitable[Any]) -> Any:
    async def await_it() -> Any:
        return await value

    return run_sync(await_it, thread_name="jurybox-trial")


def run_one(trial: Callable[[], Any]) -> str | None:
    """Run one trial; None when it passed, else why it failed.

    A trial passes when it returns without raising and does not return False or
    a non-passing Judgment. Any exception (an assertion, a provider timeout) is a
    failed trial; pytest's skip/xfail/exit and KeyboardInterrupt propagate.
    """
    try:
        value = trial()
        if inspect.isawaitable(value):
            value = _wait(value)
    except (KeyboardInterrupt, SystemExit, GeneratorExit):
        raise
    except BaseException as exc:
        if _is_pytest_control(exc):
            raise
        first_line = (str(exc).strip().splitlines() or [""])[0]
        return f"{type(exc).__name__}: {first_line}" if first_line else type(exc).__name__
    if value is False:
        return "trial returned False"
    if isinstance(value, Judgment) and not value.ok:
        return f"judgment {value.status.value}: {value.reasoning}"
    return None


def run_trials(
    trial: Callable[[], Any],
    min_pass_rate: float,
    *,
    max_trials: int = 10,
    confidence: float = 0.95,
    min_trials: int = 1,
) -> TrialsResult:
    """Run ``trial`` until the stopping rule decides (see ``StoppingRule``) and return the result."""
    rule = StoppingRule(min_pass_rate, max_trials, confidence, min_trials)
    passes = trials = 0
    failures: list[str] = []
    decision = Decision.CONTINUE
    while decision is Decision.CONTINUE:
        failure = run_one(trial)
        trials += 1
        if failure is None:
            passes += 1
        elif len(failures) < KEPT_FAILURES:
            failures.append(f"trial {trials}: {failure}")
        decision = rule.decide(passes, trials)
    return TrialsResult(
        passes=passes,
        trials=trials,
        max_trials=max_trials,
        min_pass_rate=min_pass_rate,
        confidence=confidence,
        interval=wilson_interval(passes, trials, confidence),
        decision=decision,
        failures=tuple(failures),
    )


def report_trials(result: TrialsResult, name: str = "trials") -> None:
    """Attach a trials result to the running pytest test (JUnit property and summary), if any."""
    scope = current_scope()
    if scope is not None:
        scope.record_trials(name, result)


def failure_message(result: TrialsResult) -> str:
    """What a failed trials test prints: the summary line, then each failing trial's reason."""
    lines = [result.summary(), *result.failures]
    return "\n".join(lines)


def assert_pass_rate(
    trial: Callable[[], Any],
    min_pass_rate: float,
    *,
    max_trials: int = 10,
    confidence: float = 0.95,
    min_trials: int = 1,
) -> TrialsResult:
    """Assert that ``trial`` passes at least ``min_pass_rate`` of the time.

    Runs ``trial`` (a callable running one attempt: it may assert, return a bool
    or a Judgment, or be async) up to ``max_trials`` times and stops as soon as
    the outcome is settled (see ``StoppingRule``): a stable case costs few calls
    and a flaky one is reported as flaky with its observed rate and Wilson interval.

    Returns:
        The result, when the pass rate is met.

    Raises:
        JuryboxAssertionError: when it is not; the message gives trials used,
            the observed rate, the interval and the first failures.
    """
    result = run_trials(trial, min_pass_rate, max_trials=max_trials, confidence=confidence, min_trials=min_trials)
    report_trials(result, getattr(trial, "__name__", "trials"))
    if not result.passed:
        raise JuryboxAssertionError(failure_message(result))
    return result
