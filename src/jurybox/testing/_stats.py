"""The sequential stopping rule for trials (the Wilson interval itself is ``jurybox.stats``'s)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

from jurybox.stats import wilson_interval


class Decision(StrEnum):
    """Where a sequence of trials stands."""

    CONTINUE = "continue"
    PASS = "pass"
    FAIL = "fail"


@dataclass(frozen=True)
class StoppingRule:
    """Decide after each trial whether the pass rate is settled.

    The contract of ``trials(n, min_pass_rate=p)`` is: at least ``ceil(p·n)`` of
    ``n`` trials pass. Two rules stop early, checked after every trial:

    1. Curtailment (exact): stop as soon as the outcome of all ``n`` trials is
       already certain -- enough passes that the remaining trials cannot undo it,
       or too many failures to recover.
    2. Statistical: stop as soon as the Wilson interval at ``confidence`` lies
       wholly above ``p`` (pass) or wholly below it (fail), after at least
       ``min_trials`` trials.

    Args:
        min_pass_rate: The required pass rate ``p`` (0 < p <= 1).
        max_trials: ``n``, the most trials to run.
        confidence: Confidence level of the Wilson interval (default 0.95).
        min_trials: Trials always run before the statistical rule may stop.
    """

    min_pass_rate: float
    max_trials: int
    confidence: float = 0.95
    min_trials: int = 1

    def __post_init__(self) -> None:
        if not 0.0 < self.min_pass_rate <= 1.0:
            raise ValueError(f"min_pass_rate must be in (0, 1], got {self.min_pass_rate!r}")
        if isinstance(self.max_trials, bool) or not isinstance(self.max_trials, int) or self.max_trials < 1:
            raise ValueError(f"max_trials must be a positive integer, got {self.max_trials!r}")
        if not 0.0 < self.confidence < 1.0:
            raise ValueError(f"confidence must be strictly between 0 and 1, got {self.confidence!r}")
        if self.min_trials < 1:
            raise ValueError(f"min_trials must be at least 1, got {self.min_trials!r}")

    @property
    def required_passes(self) -> int:
        """Passes needed out of ``max_trials`` (``ceil(p·n)``, guarding float noise such as 0.7·10)."""
        return math.ceil(round(self.min_pass_rate * self.max_trials, 9))

    def decide(self, passes: int, trials: int) -> Decision:
        """The decision after ``trials`` trials of which ``passes`` passed."""
        failures = trials - passes
        if passes >= self.required_passes:
            return Decision.PASS
        if failures > self.max_trials - self.required_passes:
            return Decision.FAIL
        if trials >= self.min_trials:
            low, high = wilson_interval(passes, trials, self.confidence)
            if low >= self.min_pass_rate:
                return Decision.PASS
            if high < self.min_pass_rate:
                return Decision.FAIL
        return Decision.CONTINUE
