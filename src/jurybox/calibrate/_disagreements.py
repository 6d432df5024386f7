"""The rows where a judge and the people disagree, most confident first: where to read its reasoning."""

from __future__ import annotations

from collections.abc import Sequence

from jurybox.calibrate._labels import LabelledRow
from jurybox.calibrate._result import Disagreement
from jurybox.calibrate._verdicts import UNDECIDED, RowVerdict

EXCERPT = 400
"""Characters of input and output kept per disagreement (the row id finds the rest)."""
RAW_EXCERPT = 2000
RANK_GAP = 0.5
"""Numeric labels: a row disagrees when judge and people put it this far apart in rank (as a share of the rows)."""


def disagreements(kind: str, rows: Sequence[LabelledRow], verdicts: Sequence[RowVerdict]) -> list[Disagreement]:
    """Every row where a decided judge disagrees with the human label, most confident first.

    Undecided rows are not disagreements (they are counted on their own).
    Rows the judge gave no confidence for come after those it did, by id.
    """
    found: list[Disagreement] = []
    gaps = _rank_gaps(rows, verdicts) if kind == "numeric" else {}
    for row, verdict in zip(rows, verdicts, strict=True):
        if row.label is None or verdict.outcome in UNDECIDED:
            continue
        if kind == "numeric":
            if gaps.get(row.id, 0.0) < RANK_GAP:
                continue
        elif verdict.outcome == str(row.label):
            continue
        found.append(
            Disagreement(
                id=row.id,
                human=row.label,
                judge=verdict.outcome if kind != "numeric" else f"{verdict.value:g}",
                value=verdict.value,
                orders=verdict.orders,
                confidence=verdict.confidence,
                reasoning=verdict.reasoning,
                raw=verdict.raw[:RAW_EXCERPT] if verdict.raw else None,
                input=row.context.input[:EXCERPT],
                output=(row.output_a if row.output_a is not None else row.context.output)[:EXCERPT],
                tags=row.tags,
            )
        )
    found.sort(key=lambda d: (d.confidence is None, -(d.confidence or 0.0), -_gap(gaps, d.id), d.id))
    return found


def _gap(gaps: dict[str, float], row_id: str) -> float:
    return gaps.get(row_id, 0.0)


def _rank_gaps(rows: Sequence[LabelledRow], verdicts: Sequence[RowVerdict]) -> dict[str, float]:
    """Per row, how far apart people and judge rank it, as a share of the scored rows."""
    scored = [
        (row.id, float(row.label), v.value)
        for row, v in zip(rows, verdicts, strict=True)
        if row.label is not None and v.value is not None
    ]
    if len(scored) < 2:
        return {}
    human = _percentiles([s[1] for s in scored])
    judge = _percentiles([s[2] for s in scored])
    return {s[0]: abs(h - j) for s, h, j in zip(scored, human, judge, strict=True)}


def _percentiles(values: list[float]) -> list[float]:
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for position in range(start, end + 1):
            ranks[order[position]] = (start + end) / 2 / (len(values) - 1)
        start = end + 1
    return ranks
