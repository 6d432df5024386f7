"""Running judges on the labelled rows (when there are no recorded replies), a bounded number at once."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from jurybox.calibrate._labels import LabelledRow, LabelledSet
from jurybox.calibrate._specs import JudgeSpec
from jurybox.calibrate._verdicts import ABSTAIN, RowVerdict, combined, single_outcome, usage, winner
from jurybox.core import Judgment, aevaluate

DEFAULT_CONCURRENCY = 8
# PairwiseJudge's children: the candidate (output_a) first is order ab, the baseline (output_b) first is ba.
_ORDER_CHILDREN = (("ab", "candidate_first"), ("ba", "baseline_first"))


async def live_verdicts(
    labelled: LabelledSet, specs: Sequence[JudgeSpec], *, concurrency: int = DEFAULT_CONCURRENCY
) -> dict[str, list[RowVerdict]]:
    """Each spec's verdict on every row, by running its judge.

    A pairwise row is judged with ``output`` = output_a (the candidate) and
    ``expected`` = output_b (the baseline), so ``jurybox.llm.pairwise`` asks in
    both orders and each order's verdict is kept.
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency}")
    gate = asyncio.Semaphore(concurrency)

    async def one(spec: JudgeSpec, row: LabelledRow) -> RowVerdict:
        async with gate:
            judgment = await aevaluate(spec.judge, row.context)
        return verdict_of(spec, labelled, row, judgment)

    out: dict[str, list[RowVerdict]] = {}
    for spec in specs:
        if spec.judge is None:
            raise ValueError(f"judge {spec.name!r} only reads recorded replies: give the recorded file")
        out[spec.name] = list(await asyncio.gather(*(one(spec, row) for row in labelled.rows)))
    return out


def verdict_of(spec: JudgeSpec, labelled: LabelledSet, row: LabelledRow, judgment: Judgment) -> RowVerdict:
    """A live judgment as a row verdict in the labels' terms."""
    tokens, cost, latency = usage(judgment)
    raw = judgment.metadata.get("raw")
    orders: tuple[str, str] | None = None
    if labelled.kind == "preference":
        winners = []
        for order, child in _ORDER_CHILDREN:
            part = judgment.children.get(child) if spec.mode == "pairwise" else None
            winners.append(winner(part, order, spec.positions) if part is not None else _undecided_or(judgment))
        orders = (winners[0], winners[1])
        outcome, value = combined(orders), None
    else:
        outcome, value = single_outcome(judgment, labelled.kind)
    return RowVerdict(
        id=row.id,
        outcome=outcome,
        value=value,
        orders=orders,
        reasoning=judgment.reasoning,
        confidence=judgment.confidence,
        raw=raw if isinstance(raw, str) else None,
        tokens=tokens,
        cost=cost,
        latency=latency,
    )


def _undecided_or(judgment: Judgment) -> str:
    """A judge that did not say what each order gave: its own undecided outcome, or ABSTAIN."""
    return judgment.status.value if not judgment.status.decided else ABSTAIN
