"""What a run will do before it does it: cases, judges per tier, judge-model calls and an estimated cost."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import overload

from jurybox.models import Usage, get_price, parse_spec
from jurybox.suites._case import Case, Suite
from jurybox.suites._case_file import PlanTotals, StreamedCases
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
    """Every selected case's plan and the run's totals.

    For a suite with a ``cases_file``, ``cases`` is lazy (each case is built as the listing reaches
    it) and the totals are the load's check pass's, when the run takes the whole suite.
    """

    suite: Suite
    cases: Sequence[CasePlan]
    totals: tuple[int, int, int] | None = None
    """(fewest calls, most calls, skipped judges) counted before; None: summed over ``cases``."""
    estimated: bool = False
    """The totals are scaled from a big cases file's first lines: its check runs while the run starts."""

    @property
    def min_calls(self) -> int:
        return self.totals[0] if self.totals is not None else sum(c.min_calls for c in self.cases)

    @property
    def max_calls(self) -> int:
        return self.totals[1] if self.totals is not None else sum(c.max_calls for c in self.cases)

    @property
    def skipped_judges(self) -> int:
        return self.totals[2] if self.totals is not None else sum(len(c.skipped) for c in self.cases)

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
    llm_enabled = suite.llm_enabled
    if not isinstance(cases, StreamedCases):
        return RunPlan(suite, tuple(case_plan(case, llm_enabled=llm_enabled) for case in cases))
    plans = _LazyPlans(cases, llm_enabled)
    file = cases.file
    counted = file.totals
    first, count = file.estimate, file.counted
    if cases.whole_selection and (counted is not None or (first is not None and count is not None)):
        inline = [case_plan(case, llm_enabled=llm_enabled) for case in cases.inline if not case.skip]
        estimated = counted is None
        if counted is None:  # the check is still running: the first lines' totals, scaled to the file's count
            assert first is not None and count is not None
            scale = count[0] / first.cases if first.cases else 0.0
            counted = PlanTotals(
                count[0],
                count[1],
                round(first.min_calls * scale),
                round(first.max_calls * scale),
                round(first.skipped_judges * scale),
            )
        totals = (
            sum(c.min_calls for c in inline) + counted.min_calls,
            sum(c.max_calls for c in inline) + counted.max_calls,
            sum(len(c.skipped) for c in inline) + counted.skipped_judges,
        )
        return RunPlan(suite, plans, totals, estimated=estimated)
    else:  # a selection: one pass that builds each case, not one per total
        totals = (0, 0, 0)
        for plan in plans:
            totals = (totals[0] + plan.min_calls, totals[1] + plan.max_calls, totals[2] + len(plan.skipped))
    return RunPlan(suite, plans, totals)


class _LazyPlans(Sequence[CasePlan]):
    """Each streamed case's plan, made as the listing reaches it."""

    def __init__(self, cases: StreamedCases, llm_enabled: bool) -> None:
        self._cases = cases
        self._llm_enabled = llm_enabled

    def __len__(self) -> int:
        return len(self._cases)

    def __bool__(self) -> bool:
        return bool(self._cases)

    def __iter__(self) -> Iterator[CasePlan]:
        for case in self._cases:
            yield case_plan(case, llm_enabled=self._llm_enabled)

    @overload
    def __getitem__(self, index: int) -> CasePlan: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[CasePlan]: ...

    def __getitem__(self, index: int | slice) -> CasePlan | Sequence[CasePlan]:
        if isinstance(index, slice):
            return tuple(self)[index]
        return case_plan(self._cases[index], llm_enabled=self._llm_enabled)


def case_plan(case: Case, *, llm_enabled: bool) -> CasePlan:
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
