"""What a report says about one case: its ``CaseSummary`` and the verdict helpers behind it.

Which verdicts a case holds (``case_judgments``, ``own_verdict``), which cascade
tiers ran or were skipped (``tier_verdicts``, ``skipped_tiers``) and why it got
its verdict (``case_reason``, ``explain``). The run-level model (``_model.py``)
and every renderer read a case through these, so they never disagree about it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from jurybox.core import SKIPPED_TIERS_KEY, CaseRecord, Judgment, RoundRecord, Status


@dataclass(frozen=True)
class CaseSummary:
    """The facts about one case that every renderer shows.

    Attributes:
        record: The underlying record (full fidelity).
        reason: Why the case got its verdict: the error for ERROR, else the reasoning.
        tier: The tier that decided (``decided_by``), or None when no cascade decided.
        degraded: True when any verdict in the case (rounds included) came from a fallback policy.
        skipped: Tier name -> why it did not run for this case; covers tiers the runner
            left out (``metadata["skipped_tiers"]``) and tiers a cascade did not need.
        degraded_judgments: How many individual judge verdicts in the case were degraded.
    """

    record: CaseRecord
    reason: str
    tier: str | None
    degraded: bool
    skipped: Mapping[str, str]
    degraded_judgments: int

    @property
    def name(self) -> str:
        return self.record.case

    @property
    def status(self) -> Status:
        return self.record.status

    @property
    def score(self) -> float | None:
        return self.record.score

    @property
    def ok(self) -> bool:
        return self.record.status is Status.PASS


def own_verdict(record: CaseRecord, round_: RoundRecord) -> bool:
    """True when a round has a verdict of its own, not just the case verdict again.

    A single-round case usually stores its one verdict both as the case verdict
    and as the round's; reports show and count it once.
    """
    return round_.judgment is not record.judgment and round_.judgment != record.judgment


def case_judgments(record: CaseRecord) -> Iterator[tuple[str, Judgment]]:
    """Every verdict of a case with a path: the case tree, then each round's own tree under ``round<N>``."""
    yield from record.judgment.walk()
    for round_ in record.rounds:
        if own_verdict(record, round_):
            yield from round_.judgment.walk(f"round{round_.index + 1}")


def tier_verdicts(record: CaseRecord) -> list[tuple[str, Judgment, bool]]:
    """(tier, tier verdict, decided) for each cascade tier that ran in a case.

    A tier is the key of a top-level child of a verdict whose ``decided_by`` is
    set. The case verdict is used when it is a cascade; otherwise each round's
    verdict that is one, so a multi-round case contributes one verdict per round.
    """
    roots: list[Judgment] = []
    if record.judgment.decided_by is not None:
        roots.append(record.judgment)
    else:
        roots.extend(r.judgment for r in record.rounds if r.judgment.decided_by is not None)
    return [(name, child, root.decided_by == name) for root in roots for name, child in root.children.items()]


def skipped_tiers(record: CaseRecord) -> dict[str, str]:
    """Tiers that did not run for a case, with why.

    Two sources: the runner's ``metadata["skipped_tiers"]`` (a tier left out, e.g.
    no judge model) and a cascade's ``metadata["skipped"]`` (tiers after the one
    that decided, so never needed). The runner's reason wins when both name a tier.
    """
    result: dict[str, str] = {}
    roots = [record.judgment, *(r.judgment for r in record.rounds)]
    for root in roots:
        not_needed = root.metadata.get("skipped")
        if root.decided_by is not None and isinstance(not_needed, list | tuple):
            for tier in not_needed:
                result.setdefault(str(tier), f"not needed: {root.decided_by} decided")
    configured = record.metadata.get(SKIPPED_TIERS_KEY)
    if isinstance(configured, Mapping):
        result.update({str(tier): str(reason) for tier, reason in configured.items()})
    return result


def degraded_counts(record: CaseRecord) -> tuple[bool, int]:
    """Whether any verdict of a case was degraded, and how many of its judges' own verdicts were.

    The verdicts of ``case_judgments``, walked without their paths: this runs for every case
    of a run as it finishes (``LiveTally``).
    """
    # A cascade or jury marks itself degraded when a member was; count members, flag the case.
    degraded = False
    degraded_leaves = 0
    pending = [record.judgment]
    pending.extend(round_.judgment for round_ in record.rounds if own_verdict(record, round_))
    while pending:
        judgment = pending.pop()
        if judgment.degraded:
            degraded = True
            degraded_leaves += not judgment.children
        pending.extend(judgment.children.values())
    return degraded, degraded_leaves


def summarize_case(record: CaseRecord) -> CaseSummary:
    """The facts about one case that every renderer shows."""
    degraded, degraded_leaves = degraded_counts(record)
    return CaseSummary(
        record=record,
        reason=case_reason(record),
        tier=record.judgment.decided_by,
        degraded=degraded,
        skipped=MappingProxyType(skipped_tiers(record)),
        degraded_judgments=degraded_leaves,
    )


def case_reason(record: CaseRecord) -> str:
    """Why a case got its verdict: the runner's error for an ERROR case, else ``explain(judgment)``.

    A case that did not pass while the agent was still asking a clarifying question says so:
    its reply was a question, not an answer, and nothing (no scripted follow-up, no judge
    model to write one, or the max_follow_ups bound) answered it.
    """
    reason = record.error if record.status is Status.ERROR and record.error else explain(record.judgment)
    if record.status is Status.PASS:
        return reason
    asking = [r.index + 1 for r in record.rounds if r.context.metadata.get("unanswered_question") is True]
    if asking:
        where = "round " + ", ".join(map(str, asking))
        reason += (
            f" (in {where} the agent asked a clarifying question that was not answered: give the case "
            "follow_ups, a judge model to write the reply, or a higher max_follow_ups)"
        )
    return reason


def explain(judgment: Judgment) -> str:
    """Why a verdict is what it is, in the words of whoever decided it.

    For a cascade, the reasoning of the judges in the deciding tier that agree
    with the verdict (a cascade's own reasoning says only *that* a tier
    decided); for a jury of plain judges, that of the members that agree;
    otherwise the verdict's own reasoning, or its error.
    """
    tier = judgment.children.get(judgment.decided_by) if judgment.decided_by else None
    if tier is not None:
        leaves = [(path, j) for path, j in tier.walk() if path and not j.children]
    elif judgment.children and all(not child.children for child in judgment.children.values()):
        # A jury of plain judges: its own reasoning is a tally ("all 2 judge(s) passed").
        leaves = list(judgment.children.items())
    else:
        leaves = []
    agreeing = [(path, j) for path, j in leaves if j.status is judgment.status and j.reasoning]
    if agreeing:
        return "; ".join(f"{j.judge or path}: {j.reasoning}" for path, j in agreeing)
    if judgment.reasoning:
        return judgment.reasoning
    if judgment.error is not None:
        return f"{judgment.error.type}: {judgment.error.message}"
    return ""
