"""``trials:``: a case run several times, each run (a trial) an ordinary case of its own named ``case~k``.

A trial is a case like any other for the runner, the store and resume: the run
plans ``refund~1`` ... ``refund~5``, records each as it finishes, and a resumed
run judges only the trials it is missing, so every trial is judged exactly once.
The experiment view (``jurybox.experiments``) groups them back into their case:
its pass probability with an interval, and its status by the declared rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from jurybox.suites._experiment_spec import TrialsModel

TRIAL_MARK = "~"
"""Between a case's name and its trial's number: ``refund~3`` is the third trial of ``refund``."""


@dataclass(frozen=True)
class Trial:
    """Which trial of which case a case is.

    Attributes:
        of: The case's name as written in the suite.
        index: The trial's number, from 1.
        count: How many trials the case runs.
        rule: Which trials must pass for the case to pass: ``all``, ``majority``, or at least k (an int).
    """

    of: str
    index: int
    count: int
    rule: str | int

    def to_config(self) -> dict[str, Any]:
        """The case's rule as a run's config keeps it (``{"count": 5, "pass": "majority"}``)."""
        return {"count": self.count, "pass": self.rule}


def trial_name(case: str, index: int) -> str:
    """The name trial ``index`` of ``case`` is planned and stored under."""
    return f"{case}{TRIAL_MARK}{index}"


def trials_of(suite_trials: TrialsModel | None, case_trials: TrialsModel | None) -> TrialsModel | None:
    """The trials a case runs: its own ``trials:``, else the suite's; None: once, as a plain case."""
    chosen = case_trials if case_trials is not None else suite_trials
    return chosen if chosen is not None and chosen.count > 1 else None


def expand(case: Any, trials: TrialsModel | None) -> list[Any]:
    """``case`` (a ``Case``) as its trials, each a copy named ``case~k``; the case itself when it runs once."""
    if trials is None:
        return [case]
    return [
        replace(
            case,
            name=trial_name(case.name, index),
            trial=Trial(case.name, index, trials.count, trials.pass_rule),
        )
        for index in range(1, trials.count + 1)
    ]


def trial_config(cases: Sequence[Any]) -> dict[str, dict[str, Any]]:
    """Each repeated case's rule, by case name, for the run's config (the view groups trials by it)."""
    rules: dict[str, dict[str, Any]] = {}
    for case in cases:
        trial: Trial | None = getattr(case, "trial", None)
        if trial is not None and trial.of not in rules:
            rules[trial.of] = trial.to_config()
    return rules
