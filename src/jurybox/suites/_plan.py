"""What a run will do before it does it: cases, judges per tier, judge-model calls and an estimated cost."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from jurybox.models import Usage, get_price, parse_spec
from jurybox.suites._case import Case, Suite
from jurybox.suites._registry import TIER_DETERMINISTIC

# A typical judge prompt (instructions, the case and the answer) and verdict; used only for estimates.
TYPICAL_INPUT_TOKENS = 900
TYPICAL_OUTPUT_TOKENS = 150


@dataclass(frozen=True)
class CasePlan:
    """One case as it will run.

    Attributes:
        case: The case.
        tiers: Tier -> judge keys that will run, in cascade order.
        skipped: LLM judge keys left out because no judge model is configured.
        min_calls: Judge-model calls when a cheaper tier fails first.
        max_calls: Judge-model calls when every tier runs (follow-up handling included).
        thresholds: Judge key -> the pass mark it was built with, for the judges that have one.
    """

    case: Case
    tiers: dict[str, list[str]]
    skipped: list[str]
    min_calls: int
    max_calls: int
    thresholds: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class RunPlan:
    """Every selected case's plan and the run's totals."""

    suite: Suite
    cases: tuple[CasePlan, ...]

    @property
    def min_calls(self) -> int:
        return sum(c.min_calls for c in self.cases)

    @property
    def max_calls(self) -> int:
        return sum(c.max_calls for c in self.cases)

    @property
    def skipped_judges(self) -> int:
        return sum(len(c.skipped) for c in self.cases)

    def estimated_cost(self) -> float | None:
        """USD for ``max_calls`` typical judge calls at the suite model's price, or None when unknown.

        Unknown too when the suite has no judge model but judges that name their own will be
        called: their prices are not looked up here.
        """
        if self.max_calls == 0:
            return 0.0
        if self.suite.judge_model is None:
            return None
        try:
            provider, model = parse_spec(self.suite.judge_model)
        except ValueError:
            return None
        price = get_price(provider, model)
        if price is None:
            return None
        cost = price.cost(Usage(TYPICAL_INPUT_TOKENS, TYPICAL_OUTPUT_TOKENS))
        return None if cost is None else cost * self.max_calls


def plan_run(suite: Suite, cases: Sequence[Case]) -> RunPlan:
    """The plan of running ``cases`` of ``suite`` with its judge model (or without one)."""
    return RunPlan(suite, tuple(_plan_case(case, llm_enabled=suite.llm_enabled) for case in cases))


def _plan_case(case: Case, *, llm_enabled: bool) -> CasePlan:
    tiers = {tier: [j.key for j in members] for tier, members in case.tiers(llm_enabled=llm_enabled).items()}
    if case.sql_checks:
        keys = [check.name or f"sql_checks[{i}]" for i, check in enumerate(case.sql_checks)]
        merged = {TIER_DETERMINISTIC: [*tiers.get(TIER_DETERMINISTIC, []), *keys]}
        merged.update((tier, keys) for tier, keys in tiers.items() if tier != TIER_DETERMINISTIC)
        tiers = merged
    skipped = [j.key for j in case.skipped_without_model(llm_enabled=llm_enabled)]
    fewest, most = case.judge_calls(llm_enabled=llm_enabled)
    if llm_enabled:
        # The model-backed clarification detector runs after each reply that may be a question,
        # and the follow-up writer once the scripted replies run out.
        for plan in case.rounds:
            limit = max(case.max_follow_ups, len(plan.follow_ups))
            if limit:
                most += (limit + 1) + max(0, case.max_follow_ups - len(plan.follow_ups))
                fewest += 1
    thresholds = {j.key: j.threshold for j in case.judges if j.threshold is not None}
    return CasePlan(case, tiers, skipped, fewest, most, thresholds)
