"""What a judge said about one labelled row, in the labels' own terms.

The outcome of a row is the judge's answer as a label (``pass``/``fail``, a
category, ``a``/``b``/``tie``), ``scored`` for a number, or one of the two
undecided outcomes, ``abstain`` and ``error``. Undecided rows are kept and
counted; they are never dropped and never turned into a guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from jurybox.calibrate._labels import LabelKind
from jurybox.calibrate._specs import Position
from jurybox.core import Judgment, Status

ABSTAIN, ERROR, SCORED = "abstain", "error", "scored"
UNDECIDED = (ABSTAIN, ERROR)
ORDERS = ("ab", "ba")
"""``ab``: output_a shown first; ``ba``: output_b shown first."""


@dataclass(frozen=True)
class RowVerdict:
    """A judge's verdict on one row.

    Attributes:
        id: The row's id.
        outcome: The judge's label, ``scored``, ``abstain`` or ``error``; for a
            pairwise row, the winner both orders agree on, ``inconsistent`` when
            they differ, or undecided when either order is.
        value: The judge's number (a rating, a 0..1 score), when it gave one.
        orders: Pairwise only: the winner (``a``, ``b``, ``tie``) or undecided outcome in order ``ab`` and ``ba``.
        reasoning: The judge's reasoning, or why it did not decide.
        confidence: The judge's confidence in 0..1, when it gave one.
        raw: The raw reply (the last one read), when there is one.
        tokens: Tokens spent, when known.
        cost: USD spent, when known.
        latency: Seconds spent, when known.
        detail: Anything else worth showing (per-output ratings, stages).
    """

    id: str
    outcome: str
    value: float | None = None
    orders: tuple[str, str] | None = None
    reasoning: str = ""
    confidence: float | None = None
    raw: str | None = None
    tokens: int | None = None
    cost: float | None = None
    latency: float | None = None
    detail: Mapping[str, Any] = field(default_factory=dict)

    @property
    def decided(self) -> bool:
        return self.outcome not in UNDECIDED

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "outcome": self.outcome,
            "value": self.value,
            "orders": list(self.orders) if self.orders else None,
            "reasoning": self.reasoning,
            "confidence": self.confidence,
            "raw": self.raw,
            "tokens": self.tokens,
            "cost": self.cost,
            "latency": self.latency,
            "detail": dict(self.detail),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RowVerdict:
        orders = data.get("orders")
        return cls(
            id=str(data["id"]),
            outcome=str(data["outcome"]),
            value=data.get("value"),
            orders=(str(orders[0]), str(orders[1])) if orders else None,
            reasoning=str(data.get("reasoning") or ""),
            confidence=data.get("confidence"),
            raw=data.get("raw"),
            tokens=data.get("tokens"),
            cost=data.get("cost"),
            latency=data.get("latency"),
            detail=dict(data.get("detail") or {}),
        )


def undecided(judgment: Judgment) -> str | None:
    """``abstain`` or ``error`` for an undecided judgment, None for a decided one."""
    if judgment.status is Status.ERROR:
        return ERROR
    if judgment.status is Status.ABSTAIN:
        return ABSTAIN
    return None


def number(judgment: Judgment) -> float | None:
    """The judge's own number: its raw ``value`` (a rating on its scale) or else its 0..1 value."""
    raw = judgment.metadata.get("value")
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        return float(raw)
    return judgment.value


def single_outcome(judgment: Judgment, kind: LabelKind) -> tuple[str, float | None]:
    """(outcome, value) of a one-reply judgment against labels of ``kind``."""
    missing = undecided(judgment)
    if missing is not None:
        return missing, None
    value = number(judgment)
    if kind == "binary":
        return judgment.status.value, value
    if kind == "numeric":
        return (SCORED, value) if value is not None else (ABSTAIN, None)
    label = judgment.metadata.get("label")
    return (str(label) if label is not None else judgment.status.value), value


def winner(judgment: Judgment, order: str, positions: Mapping[str, Position]) -> str:
    """The output a one-order pairwise judgment preferred (``a``, ``b``, ``tie``) or why it did not."""
    missing = undecided(judgment)
    if missing is not None:
        return missing
    position = positions.get(str(judgment.metadata.get("label")))
    if position is None:
        return ABSTAIN
    if position == "tie":
        return "tie"
    first = "a" if order == "ab" else "b"
    return first if position == "first" else ("b" if first == "a" else "a")


def combined(orders: tuple[str, str]) -> str:
    """One pairwise outcome from both orders: their shared winner, else ``inconsistent`` or undecided."""
    one, two = orders
    if one == two:
        return one
    if ERROR in orders:
        return ERROR
    if ABSTAIN in orders:
        return ABSTAIN
    return "inconsistent"


def compare_ratings(rating_a: Judgment, rating_b: Judgment) -> tuple[str, dict[str, Any]]:
    """The winner of two separate ratings (higher wins, equal is a tie), or why there is none."""
    detail: dict[str, Any] = {}
    for side, judgment in (("a", rating_a), ("b", rating_b)):
        missing = undecided(judgment)
        if missing is not None:
            return missing, detail
        detail[f"rating_{side}"] = number(judgment)
    a, b = detail["rating_a"], detail["rating_b"]
    if a is None or b is None:
        return ABSTAIN, detail
    return ("a" if a > b else "b" if b > a else "tie"), detail


def usage(judgment: Judgment) -> tuple[int | None, float | None, float | None]:
    """(tokens, cost, latency) recorded in a judgment's metadata, each None when unknown."""
    meta = judgment.metadata
    tokens = meta.get("tokens")
    total = tokens.get("total") if isinstance(tokens, Mapping) else tokens if isinstance(tokens, int) else None
    cost = meta.get("cost")
    latency = meta.get("latency")
    return (
        total if isinstance(total, int) and not isinstance(total, bool) else None,
        float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None,
        float(latency) if isinstance(latency, int | float) and not isinstance(latency, bool) else None,
    )
