"""Budgets read from the Context: how long the execution took and what it cost."""

from __future__ import annotations

from jurybox.core import TIER_DETERMINISTIC, Context, Judgment, judge_factory
from jurybox.judges._base import DeterministicJudge


def _positive(value: float, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ValueError(f"{what} must be a positive number, got {value!r}")
    return float(value)


class _Budget(DeterministicJudge):
    """Pass when a figure the Context measured is within ``limit``; ABSTAIN when it was not measured.

    An unmeasured figure is no verdict: no duration is not a fast run, no cost is not a free one.

    Args:
        name: The judge's name.
        limit: The budget.
        measure: The Context attribute holding the figure (None when not measured).
        reason: The verdict's reasoning, formatted with ``value`` and ``limit``.
        unknown: The reasoning of the ABSTAIN when the figure is None.
    """

    def __init__(self, name: str, limit: float, *, measure: str, reason: str, unknown: str) -> None:
        super().__init__(name)
        self.limit = limit
        self.measure = measure
        self.reason = reason
        self.unknown = unknown

    def check(self, context: Context) -> Judgment:
        value: float | None = getattr(context, self.measure)
        if value is None:
            return Judgment.abstained(self.unknown)
        reason = self.reason.format(value=value, limit=self.limit)
        if value <= self.limit:
            return Judgment.passed(True, reason)
        return Judgment.failed(False, reason)


@judge_factory(tier=TIER_DETERMINISTIC)
def max_latency(seconds: float, *, name: str | None = None) -> DeterministicJudge:
    """Pass when ``Context.duration`` is within ``seconds``; ABSTAIN when no duration was recorded.

    Args:
        seconds: The latency budget in seconds.
        name: The judge's name in reports.
    """
    budget = _positive(seconds, "max_latency(seconds)")
    return _Budget(
        name or f"max_latency({budget:g}s)",
        budget,
        measure="duration",
        reason="took {value:.3f}s, budget {limit:g}s",
        unknown="no duration recorded in the Context; cannot check the latency budget",
    )


@judge_factory(tier=TIER_DETERMINISTIC)
def max_cost(usd: float, *, name: str | None = None) -> DeterministicJudge:
    """Pass when ``Context.metadata["cost"]`` (USD) is within budget; ABSTAIN when the cost is unknown.

    Args:
        usd: The cost budget in US dollars.
        name: The judge's name in reports.
    """
    budget = _positive(usd, "max_cost(usd)")
    return _Budget(
        name or f"max_cost(${budget:g})",
        budget,
        measure="cost",
        reason="cost ${value:.6g}, budget ${limit:g}",
        unknown="cost unknown (no metadata['cost']); cannot check the cost budget",
    )
