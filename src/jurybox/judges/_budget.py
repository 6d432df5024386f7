"""Budgets read from the Context: how long the execution took and what it cost."""

from __future__ import annotations

from jurybox.core import Context, Judgment
from jurybox.judges._base import DeterministicJudge


def _positive(value: float, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ValueError(f"{what} must be a positive number, got {value!r}")
    return float(value)


class _MaxLatency(DeterministicJudge):
    def __init__(self, seconds: float, name: str) -> None:
        super().__init__(name)
        self.seconds = seconds

    def check(self, context: Context) -> Judgment:
        if context.duration is None:
            return Judgment.abstained("no duration recorded in the Context; cannot check the latency budget")
        reason = f"took {context.duration:.3f}s, budget {self.seconds:g}s"
        if context.duration <= self.seconds:
            return Judgment.passed(True, reason)
        return Judgment.failed(False, reason)


def max_latency(seconds: float, *, name: str | None = None) -> DeterministicJudge:
    """Pass when ``Context.duration`` is within ``seconds``; ABSTAIN when no duration was recorded."""
    budget = _positive(seconds, "max_latency(seconds)")
    return _MaxLatency(budget, name or f"max_latency({budget:g}s)")


class _MaxCost(DeterministicJudge):
    def __init__(self, usd: float, name: str) -> None:
        super().__init__(name)
        self.usd = usd

    def check(self, context: Context) -> Judgment:
        if context.cost is None:
            return Judgment.abstained("cost unknown (no metadata['cost']); cannot check the cost budget")
        reason = f"cost ${context.cost:.6g}, budget ${self.usd:g}"
        if context.cost <= self.usd:
            return Judgment.passed(True, reason)
        return Judgment.failed(False, reason)


def max_cost(usd: float, *, name: str | None = None) -> DeterministicJudge:
    """Pass when ``Context.metadata["cost"]`` (USD) is within budget; ABSTAIN when the cost is unknown."""
    budget = _positive(usd, "max_cost(usd)")
    return _MaxCost(budget, name or f"max_cost(${budget:g})")
