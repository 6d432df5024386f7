"""Score types a judge can give, and the one function that maps any of them to 0..1."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType


@dataclass(frozen=True)
class BooleanScore:
    """Yes or no. Normalizes to 1.0 or 0.0."""

    value: bool

    def __post_init__(self) -> None:
        if not isinstance(self.value, bool):
            raise TypeError(f"BooleanScore needs a bool, got {type(self.value).__name__}: {self.value!r}")

    def normalized(self) -> float:
        return 1.0 if self.value else 0.0


@dataclass(frozen=True)
class NumericScore:
    """A number on a closed scale such as 1..10 or 0..100."""

    value: float
    min: float = 0.0
    max: float = 1.0

    def __post_init__(self) -> None:
        for name in ("value", "min", "max"):
            number = getattr(self, name)
            if isinstance(number, bool) or not isinstance(number, int | float) or not math.isfinite(number):
                raise ValueError(f"NumericScore.{name} must be a finite number, got {number!r}")
        if self.min >= self.max:
            raise ValueError(f"NumericScore bounds are empty: min {self.min} is not below max {self.max}")
        if not self.min <= self.value <= self.max:
            raise ValueError(f"NumericScore {self.value} is outside its bounds [{self.min}, {self.max}]")

    def normalized(self) -> float:
        return (self.value - self.min) / (self.max - self.min)


@dataclass(frozen=True)
class CategoricalScore:
    """A label from a fixed set, each label worth a score in 0..1 (e.g. A=1.0, B=0.5, C=0.0)."""

    value: str
    categories: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.categories:
            raise ValueError("CategoricalScore needs at least one category")
        for label, worth in self.categories.items():
            if isinstance(worth, bool) or not isinstance(worth, int | float) or not 0.0 <= worth <= 1.0:
                raise ValueError(f"category {label!r} is worth {worth!r}; worth must be a number in 0..1")
        if self.value not in self.categories:
            allowed = ", ".join(repr(c) for c in self.categories)
            raise ValueError(f"unknown category {self.value!r}; allowed: {allowed}")
        object.__setattr__(self, "categories", MappingProxyType(dict(self.categories)))

    def normalized(self) -> float:
        return float(self.categories[self.value])


Score = BooleanScore | NumericScore | CategoricalScore


def normalize(score: Score | bool | float | int) -> float:
    """Map any score to 0..1.

    A bare bool counts as a BooleanScore and a bare number must already be in
    0..1; anything else raises rather than being clipped, so an out-of-range
    judge is noticed instead of silently capped.
    """
    if score.__class__ is float and 0.0 <= score <= 1.0:
        return score  # what NumericScore(score).normalized() answers, without building one (scores are read often)
    if isinstance(score, BooleanScore | NumericScore | CategoricalScore):
        return score.normalized()
    if isinstance(score, bool):
        return 1.0 if score else 0.0
    if isinstance(score, int | float):
        return NumericScore(float(score)).normalized()
    raise TypeError(f"not a score: {score!r}")
