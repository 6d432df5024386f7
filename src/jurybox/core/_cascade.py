"""A cascade: cheap judges first, expensive ones only when the cheap ones cannot settle it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from jurybox.core._context import Context
from jurybox.core._judgment import Judgment, Status, to_score
from jurybox.core._jury import ErrorPolicy, Jury, apply_error_policy, check_error_policy, run_judges, unique_names
from jurybox.core._voting import Consensus, Voting, vote_value


class TierPolicy(StrEnum):
    """What a tier may decide on its own."""

    REJECT_ON_ANY_FAIL = "reject_on_any_fail"
    """Any fail ends the cascade with FAIL; all pass goes on to the next tier."""
    ACCEPT_ON_ALL_PASS = "accept_on_all_pass"
    """All pass ends the cascade with PASS; anything else goes on to the next tier."""
    FINAL = "final"
    """Decides by vote, whatever the outcome. Only the last tier is final."""


@dataclass(frozen=True)
class Tier:
    """One step of a cascade: judges, a policy and (for the final tier) a vote.

    Build tiers with the class methods, e.g. ``Tier.reject_on_any_fail(a, b)``.
    """

    judges: tuple[Any, ...]
    policy: TierPolicy
    voting: Voting | None = None
    errors: ErrorPolicy = "propagate"
    name: str = ""

    def __post_init__(self) -> None:
        if not self.judges:
            raise ValueError(f"tier {self.name or self.policy.value!r} has no judges")
        for item in self.judges:
            if not callable(item):
                raise TypeError(f"tier members must be judges (callables), got {type(item).__name__}: {item!r}")
        check_error_policy(self.errors)
        if self.voting is not None:
            self.voting.check_names(unique_names(self.judges))

    @classmethod
    def reject_on_any_fail(cls, *judges: Any, errors: ErrorPolicy = "propagate", name: str = "") -> Tier:
        return cls(tuple(judges), TierPolicy.REJECT_ON_ANY_FAIL, errors=errors, name=name)

    @classmethod
    def accept_on_all_pass(cls, *judges: Any, errors: ErrorPolicy = "propagate", name: str = "") -> Tier:
        return cls(tuple(judges), TierPolicy.ACCEPT_ON_ALL_PASS, errors=errors, name=name)

    @classmethod
    def final(
        cls, *judges: Any, voting: Voting | None = None, errors: ErrorPolicy = "propagate", name: str = ""
    ) -> Tier:
        """The deciding tier; ``voting`` defaults to ``Consensus()`` (every judge must pass)."""
        return cls(tuple(judges), TierPolicy.FINAL, voting=voting or Consensus(), errors=errors, name=name)


class Cascade:
    """Ordered tiers; each runs only when the tiers before it could not decide.

    The verdict's ``decided_by`` names the tier that decided, ``children`` holds
    one judgment per tier that ran (each with its judges' judgments), and
    ``metadata["skipped"]`` lists tiers never called. A failing cheap tier
    therefore means the expensive judges are never called.

    Raises:
        ValueError: when there are no tiers, the last tier is not final, or a
            tier before the last is final.
    """

    def __init__(self, *tiers: Tier, name: str = "cascade") -> None:
        if not tiers:
            raise ValueError("a Cascade needs at least one tier")
        for index, tier in enumerate(tiers):
            if not isinstance(tier, Tier):
                raise TypeError(f"Cascade takes Tier objects; argument {index + 1} is {type(tier).__name__}")
        if tiers[-1].policy is not TierPolicy.FINAL:
            raise ValueError(
                f"the last tier of a cascade must be final (Tier.final(...)); it is {tiers[-1].policy.value}, "
                "so some executions would get no verdict"
            )
        early_final = [i + 1 for i, t in enumerate(tiers[:-1]) if t.policy is TierPolicy.FINAL]
        if early_final:
            raise ValueError(f"only the last tier may be final; tier(s) {early_final} are final too")
        self.tiers = tiers
        self.tier_names = [t.name or f"tier{i + 1}:{t.policy.value}" for i, t in enumerate(tiers)]
        if len(set(self.tier_names)) != len(self.tier_names):
            raise ValueError(f"tier names must differ: {self.tier_names}")
        self.name = name

    async def __call__(self, context: Context) -> Judgment:
        children: dict[str, Judgment] = {}
        # Judges of earlier tiers that could not decide: the verdict names them, so an
        # escalation past an abstention is visible, not only buried in a tier's reasoning.
        abstained: list[str] = []
        for index, (tier, tier_name) in enumerate(zip(self.tiers, self.tier_names, strict=True)):
            names = unique_names(tier.judges)
            results = await run_judges(tier.judges, names, context)
            tier_judgment, decided = self._decide_tier(tier, tier_name, list(zip(names, results, strict=True)))
            children[tier_name] = tier_judgment
            if decided:
                reasoning = f"{tier_name} decided: {tier_judgment.reasoning}"
                if abstained:
                    reasoning += f" (undecided in earlier tiers: {', '.join(abstained)})"
                return Judgment(
                    tier_judgment.status,
                    score=tier_judgment.score,
                    reasoning=reasoning,
                    judge=self.name,
                    confidence=tier_judgment.confidence,
                    degraded=any(j.degraded for judgment in children.values() for _, j in judgment.walk()),
                    children=children,
                    decided_by=tier_name,
                    metadata={"skipped": self.tier_names[index + 1 :], "abstained": abstained},
                )
            abstained += [f"{tier_name}/{n}" for n, j in zip(names, results, strict=True) if j.status is Status.ABSTAIN]
        raise AssertionError("unreachable: the last tier is final and always decides")

    def _decide_tier(self, tier: Tier, tier_name: str, named: Sequence[tuple[str, Judgment]]) -> tuple[Judgment, bool]:
        """The tier's own judgment, and whether it ends the cascade."""
        if tier.policy is TierPolicy.FINAL:
            jury = Jury(*tier.judges, voting=tier.voting, errors=tier.errors, name=tier_name)
            return jury.combine(named), True
        children = dict(named)
        votes, undecided, errored = apply_error_policy(named, tier.errors)
        values = [vote_value(j) for _, j in votes]
        score = sum(values) / len(values) if values else None
        if errored and tier.errors == "propagate":
            reasons = "; ".join(f"{n}: {children[n].reasoning}" for n in errored)
            return Judgment.errored(
                f"{len(errored)} judge(s) errored: {reasons}", judge=tier_name, children=children
            ), True
        failing = [name for name, j in votes if j.status is Status.FAIL]
        if tier.policy is TierPolicy.REJECT_ON_ANY_FAIL:
            if failing:
                reasons = "; ".join(f"{n}: {children[n].reasoning}" for n in failing if n in children)
                return Judgment.failed(
                    score, f"{', '.join(failing)} failed. {reasons}".strip(), judge=tier_name, children=children
                ), True
            if not votes:
                return Judgment(
                    Status.ABSTAIN,
                    reasoning=f"no judge decided ({', '.join(undecided)}); escalating",
                    judge=tier_name,
                    children=children,
                ), False
            note = f"no fail among {len(votes)} judge(s)"
            if undecided:
                note += f"; abstained: {', '.join(undecided)}"
            return Judgment.passed(score, note + "; escalating", judge=tier_name, children=children), False
        # ACCEPT_ON_ALL_PASS: accept only when every member passed; otherwise escalate.
        if votes and not failing and not undecided and not errored:
            return Judgment.passed(score, f"all {len(votes)} judge(s) passed", judge=tier_name, children=children), True
        held_back = failing + undecided + errored
        return Judgment(
            Status.ABSTAIN,
            score=to_score(score),
            reasoning=f"not all passed ({', '.join(held_back)}); escalating",
            judge=tier_name,
            children=children,
        ), False

    def __repr__(self) -> str:
        return f"Cascade({', '.join(self.tier_names)})"
