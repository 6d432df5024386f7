"""A jury: several judges decide together, and the jury is itself a judge."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Literal

from jurybox.core._context import Context
from jurybox.core._judge import aevaluate, judge_name
from jurybox.core._judgment import Judgment, Status, to_score
from jurybox.core._voting import Majority, Voting

ErrorPolicy = Literal["propagate", "fail", "ignore"]
ERROR_POLICIES: tuple[str, ...] = ("propagate", "fail", "ignore")


def unique_names(judges: Sequence[Any]) -> list[str]:
    """Names for the judges, with ``#2``, ``#3`` added to repeats so every judgment keeps its own key."""
    seen: dict[str, int] = {}
    names = []
    for item in judges:
        base = judge_name(item)
        seen[base] = seen.get(base, 0) + 1
        names.append(base if seen[base] == 1 else f"{base}#{seen[base]}")
    return names


def check_error_policy(errors: str) -> None:
    if errors not in ERROR_POLICIES:
        raise ValueError(f"errors= must be one of {', '.join(ERROR_POLICIES)}; got {errors!r}")


async def run_judges(judges: Sequence[Any], names: Sequence[str], context: Context) -> list[Judgment]:
    """Run judges concurrently; each result is named after its judge."""
    if len(judges) == len(names) == 1:  # a tier of one judge: awaited in place, no task to create and schedule
        return [(await aevaluate(judges[0], context)).named(names[0])]
    results = await asyncio.gather(*(aevaluate(j, context) for j in judges))
    return [result.named(name) for result, name in zip(results, names, strict=True)]


def apply_error_policy(
    named: Sequence[tuple[str, Judgment]], errors: str
) -> tuple[list[tuple[str, Judgment]], list[str], list[str]]:
    """Split members into votes, undecided names and errored names under the policy.

    With ``fail`` an errored member votes FAIL (score 0); with ``ignore`` it is
    left out of the vote; with ``propagate`` the caller turns the whole
    verdict into ERROR. Abstentions never vote.
    """
    votes: list[tuple[str, Judgment]] = []
    undecided: list[str] = []
    errored: list[str] = []
    for name, judgment in named:
        if judgment.status is Status.ERROR:
            errored.append(name)
            if errors == "fail":
                votes.append((name, Judgment.failed(0.0, f"counted as fail: {judgment.reasoning}")))
        elif judgment.status is Status.ABSTAIN:
            undecided.append(name)
        else:
            votes.append((name, judgment))
    return votes, undecided, errored


class Jury:
    """Judges that run concurrently and decide by vote.

    Args:
        *judges: Any judges, including juries and cascades (juries nest).
        voting: A strategy from ``jurybox.core``; default ``Majority()``.
        errors: What a member's ERROR means: ``"propagate"`` (default: the jury's
            verdict is ERROR, so a broken judge is never hidden), ``"fail"``
            (counts as a failing vote) or ``"ignore"`` (left out of the vote; the
            error stays visible in ``children``).
        name: The jury's name in reports; default ``"jury"``.
    """

    def __init__(
        self, *judges: Any, voting: Voting | None = None, errors: ErrorPolicy = "propagate", name: str = "jury"
    ) -> None:
        if not judges:
            raise ValueError("a Jury needs at least one judge")
        for item in judges:
            if not callable(item):
                raise TypeError(f"Jury members must be judges (callables), got {type(item).__name__}: {item!r}")
        check_error_policy(errors)
        self.judges = tuple(judges)
        self.names = unique_names(self.judges)
        self.voting: Voting = voting if voting is not None else Majority()
        self.voting.check_names(self.names)
        self.errors = errors
        self.name = name

    async def __call__(self, context: Context) -> Judgment:
        results = await run_judges(self.judges, self.names, context)
        return self.combine(list(zip(self.names, results, strict=True)))

    def combine(self, named: Sequence[tuple[str, Judgment]]) -> Judgment:
        """Apply the error policy and the vote to the members' judgments."""
        children = dict(named)
        votes, undecided, errored = apply_error_policy(named, self.errors)
        metadata: dict[str, Any] = {"voting": type(self.voting).__name__, "errors": self.errors}
        if errored and self.errors == "propagate":
            reasons = "; ".join(f"{n}: {children[n].reasoning}" for n in errored)
            return Judgment.errored(
                f"{len(errored)} judge(s) errored: {reasons}", judge=self.name, children=children, metadata=metadata
            )
        if errored and self.errors == "ignore" and not votes and not undecided:
            return Judgment.errored(
                f"every judge errored ({', '.join(errored)})", judge=self.name, children=children, metadata=metadata
            )
        vote = self.voting.decide(votes, undecided)
        reasoning = vote.reasoning
        if errored:
            reasoning += f"; errored ({self.errors}): {', '.join(errored)}"
        if undecided and "undecided" not in reasoning and "did not decide" not in reasoning:
            reasoning += f"; abstained: {', '.join(undecided)}"
        return Judgment(
            vote.status,
            score=to_score(vote.score),
            reasoning=reasoning,
            judge=self.name,
            degraded=any(j.degraded for _, j in named),
            children=children,
            metadata=metadata,
        )

    def __repr__(self) -> str:
        return f"Jury({', '.join(self.names)}, voting={self.voting!r}, errors={self.errors!r})"
