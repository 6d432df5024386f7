"""A case's verdict: its judges, each looking at its own round, run as one cascade of tiers.

The cascade's tiers are named ``deterministic``, ``similarity``,
``llm_operations`` (checks a suite places there with ``tier: llm_operations``)
and ``llm_judge`` (the names the store tracks regressions by): a failure in a
cheaper tier ends the case before any judge-model token is spent. With no
judge model the LLM tier is left out, and the verdict says so in its
reasoning and in ``metadata["llm_tier"] = "skipped"``; it is never counted
as a pass.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from jurybox.core import (
    PASS_MARK_KEY,
    Cascade,
    CaseRecord,
    Context,
    Judgment,
    NumericScore,
    Status,
    Tier,
    aevaluate,
    vote_value,
)
from jurybox.suites import HOW_TO_ENABLE, TIER_LLM, TIERS, Case

LLM_SKIPPED = "skipped"
# Said once per case; how to configure a judge model is said once per run (the run's notes).
LLM_SKIP_REASON = "no judge model configured"


class OnContext:
    """A judge bound to the context it must look at (its round's, or the whole conversation's).

    A cascade hands every judge the same context; a round's judge needs its own round.
    """

    def __init__(self, judge: Any, context: Context, name: str, pass_mark: float | None = None) -> None:
        self.judge = judge
        self.context = context
        self.name = name
        self.pass_mark = pass_mark

    async def __call__(self, _context: Context) -> Judgment:
        judgment = await aevaluate(self.judge, self.context)
        if self.pass_mark is None or PASS_MARK_KEY in judgment.metadata:
            return judgment
        # Kept with the verdict, so a report can say "correctness 0.10 < 0.70" without the suite.
        return judgment.with_changes(metadata={**judgment.metadata, PASS_MARK_KEY: self.pass_mark})


def case_verdict_judge(
    case: Case,
    rounds: Sequence[Context],
    final: Context,
    *,
    llm_enabled: bool,
    extra: Sequence[tuple[str, str, Any]] = (),
    leave_out: Collection[str] = (),
) -> tuple[Cascade | None, list[str]]:
    """The cascade that judges one execution of ``case``, and the keys of the LLM judges left out.

    Args:
        case: The case.
        rounds: Each round's context, in order.
        final: The whole conversation's context (case-level judges see it).
        llm_enabled: False when the suite has no judge model (a case whose every LLM judge names
            its own model still runs them).
        extra: (tier, key, judge) added at run time, e.g. SQL checks bound to the session.
        leave_out: Keys of judges this install cannot run (``unavailable_judges``), left out.

    Returns:
        (cascade, skipped LLM judge keys); the cascade is None when nothing is left to run.
    """
    groups: dict[str, list[OnContext]] = {tier: [] for tier in TIERS}
    skipped: list[str] = []
    llm_runs = case.llm_tier_runs(llm_enabled=llm_enabled)
    for item in case.judges:
        if item.key in leave_out:
            continue
        if item.tier == TIER_LLM and not llm_runs:
            skipped.append(item.key)
            continue
        context = rounds[item.round] if item.round is not None else final
        groups[item.tier].append(OnContext(item.judge, context, item.key, item.threshold))
    for tier, key, judge in extra:
        groups[tier].append(OnContext(judge, final, key))
    present = [tier for tier in TIERS if groups[tier]]
    if not present:
        return None, skipped
    if case.voting is not None:
        members = [judge for tier in present for judge in groups[tier]]
        return Cascade(Tier.final(*members, voting=case.voting, name=present[-1]), name=case.name), skipped
    tiers = [
        Tier.final(*groups[tier], name=tier)
        if index == len(present) - 1
        else Tier.reject_on_any_fail(*groups[tier], name=tier)
        for index, tier in enumerate(present)
    ]
    return Cascade(*tiers, name=case.name), skipped


def unavailable_judges(case: Case) -> dict[str, tuple[str, str]]:
    """The case's judges this install cannot run: key -> (tier, why), e.g. similarity without ``jurybox[embed]``.

    A judge says so through an ``unavailable()`` method returning the reason (None when it can run).
    Its tier is skipped with that reason, as the LLM tier is without a judge model: a missing
    optional package is a note on the run, never an ERROR case.
    """
    missing: dict[str, tuple[str, str]] = {}
    for item in case.judges:
        check = getattr(item.judge, "unavailable", None)
        reason = check() if callable(check) else None
        if isinstance(reason, str) and reason:
            missing[item.key] = (item.tier, reason)
    return missing


def mark_unavailable(judgment: Judgment, missing: Mapping[str, tuple[str, str]]) -> Judgment:
    """Say in the verdict which judges did not run because this install lacks what they need."""
    if not missing:
        return judgment
    tiers = sorted({tier for tier, _ in missing.values()})
    note = f" [{', '.join(tiers)} tier skipped: {', '.join(missing)} not run; decided by the other tiers]"
    metadata = dict(judgment.metadata)
    metadata["unavailable_judges"] = list(missing)
    return judgment.with_changes(reasoning=judgment.reasoning + note, metadata=metadata)


def llm_was_skipped(record: CaseRecord) -> bool:
    """True when a recorded case's LLM tier was left out for want of a judge model."""
    return record.metadata.get("llm_tier") == LLM_SKIPPED


def not_judged(case: Case, skipped: Sequence[str], missing: Mapping[str, tuple[str, str]] | None = None) -> Judgment:
    """The verdict of a case none of whose judges could run (LLM judges without a judge model, or
    judges whose optional packages are not installed)."""
    if missing:
        reasons = "; ".join(sorted({reason for _, reason in missing.values()}))
        left = [*skipped, *missing]
        return Judgment.abstained(
            f"not judged: none of the case's judges could run ({', '.join(left)}): {reasons}"
            + (f"; {HOW_TO_ENABLE}" if skipped else ""),
            judge=case.name,
            metadata={"llm_tier": LLM_SKIPPED, "skipped_judges": list(skipped)} if skipped else {},
        )
    return Judgment.abstained(
        f"not judged: the case has only LLM judges ({', '.join(skipped)}) and the llm tier was skipped "
        f"({LLM_SKIP_REASON})",
        judge=case.name,
        metadata={"llm_tier": LLM_SKIPPED, "skipped_judges": list(skipped), "skipped": [TIER_LLM]},
    )


def mark_llm_skipped(judgment: Judgment, skipped: Sequence[str]) -> Judgment:
    """Say in the verdict that the LLM tier did not run, and how to make it run."""
    if not skipped:
        return judgment
    note = (
        f" [llm tier skipped: {len(skipped)} LLM judge(s) not run ({', '.join(skipped)}); decided by the other tiers]"
    )
    metadata = dict(judgment.metadata)
    metadata.update(
        llm_tier=LLM_SKIPPED,
        skipped_judges=list(skipped),
        how_to_enable=HOW_TO_ENABLE,
        skipped=[*metadata.get("skipped", ()), TIER_LLM]
        if TIER_LLM not in metadata.get("skipped", ())
        else metadata["skipped"],
    )
    return judgment.with_changes(reasoning=judgment.reasoning + note, metadata=metadata)


def round_judgment(
    case_judgment: Judgment, index: int, skipped: Sequence[str], planned: Sequence[str] = ()
) -> Judgment:
    """One round's verdict, gathered from the judges of that round inside the case's cascade.

    Args:
        case_judgment: The case's cascade verdict.
        index: The round (0-based).
        skipped: Keys of the LLM judges left out (no judge model).
        planned: Keys of every judge the cascade held; a round judge among them that
            never ran (the cascade was decided before its tier) keeps the round from passing.
    """
    prefix = f"round{index + 1}."
    found: dict[str, Judgment] = {}
    for tier in case_judgment.children.values():
        for key, judgment in tier.children.items():
            if key.startswith(prefix):
                found[key.removeprefix(prefix)] = judgment
    round_skipped = [key.removeprefix(prefix) for key in skipped if key.startswith(prefix)]
    not_run = [
        key.removeprefix(prefix)
        for key in planned
        if key.startswith(prefix) and key not in skipped and key.removeprefix(prefix) not in found
    ]
    metadata: dict[str, Any] = {"skipped_judges": round_skipped} if round_skipped else {}
    if not_run:
        metadata["not_run"] = not_run
    if not found:
        why = "its LLM judges were skipped (no judge model)" if round_skipped else "no judge of this round ran"
        return Judgment.abstained(f"round {index + 1} not judged: {why}", judge=f"round{index + 1}", metadata=metadata)
    statuses = [j.status for j in found.values()]
    decided = [j for j in found.values() if j.status.decided]
    score = NumericScore(sum(vote_value(j) for j in decided) / len(decided)) if decided else None
    for status in (Status.ERROR, Status.FAIL, Status.ABSTAIN):
        if status in statuses:
            names = [k for k, j in found.items() if j.status is status]
            return Judgment(
                status,
                score=score,
                reasoning=f"{status.value}: {', '.join(names)}",
                judge=f"round{index + 1}",
                children=found,
                metadata=metadata,
            )
    if not_run:
        # The case was decided before these judges' tier: the round was never shown to pass.
        decided_by = case_judgment.decided_by or "an earlier tier"
        return Judgment(
            Status.ABSTAIN,
            score=score,
            reasoning=f"round {index + 1} not fully judged: {', '.join(not_run)} did not run "
            f"(the case was decided by {decided_by}); the {len(found)} judge(s) that ran passed",
            judge=f"round{index + 1}",
            children=found,
            metadata=metadata,
        )
    return Judgment(
        Status.PASS,
        score=score,
        reasoning=f"all {len(found)} judge(s) passed",
        judge=f"round{index + 1}",
        children=found,
        metadata=metadata,
    )
