"""Paired bootstrap intervals of a mean, with the standard library only.

Pass/fail differences (three values: -1, 0, 1) are resampled as multinomial
counts over those values: exactly the bootstrap distribution of resampling the
pairs, at a cost that does not grow with the number of pairs, so a pass-rate
difference always gets its bootstrap interval. Other values (scores) are
bootstrapped while the resampling stays cheap (``BOOTSTRAP_BUDGET``: 200 pairs
at 2,000 resamples); past that the normal interval of the mean is used, which
the percentile bootstrap matches at that size (the central limit theorem for a
mean of bounded values). The method used is always part of the result.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from jurybox.stats._sampling import multinomial
from jurybox.stats._tests import z_value

DEFAULT_RESAMPLES = 2000
"""Resamples per interval: enough for a 95% interval's ends to settle to about a point."""
MAX_CATEGORIES = 48
"""Distinct values up to which a resample is a multinomial draw over them."""
ALWAYS_BOOTSTRAPPED = 3
"""Distinct values (a pass/fail difference's -1, 0, 1) that are bootstrapped at any size."""
BOOTSTRAP_BUDGET = 400_000
"""Pairs x resamples up to which values with more distinct values are bootstrapped."""

BOOTSTRAP = "bootstrap"
NORMAL = "normal"


@dataclass(frozen=True)
class Interval:
    """A two-sided interval and how it was made.

    Attributes:
        low: Its lower end.
        high: Its upper end.
        confidence: Its level (0.95).
        method: ``bootstrap`` (paired percentile bootstrap), ``normal`` or ``wilson``.
    """

    low: float
    high: float
    confidence: float
    method: str

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high

    def to_dict(self) -> dict[str, float | str]:
        return {"low": self.low, "high": self.high, "confidence": self.confidence, "method": self.method}


def percentile(ordered: Sequence[float], share: float) -> float:
    """The ``share`` quantile of sorted values, interpolated linearly between ranks (numpy's default)."""
    if not ordered:
        raise ValueError("no values to take a percentile of")
    position = share * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


def bootstrap_means(values: Sequence[float], resamples: int, rng: random.Random) -> list[float]:
    """``resamples`` bootstrap means of ``values`` (multinomial over distinct values, or by index), sorted."""
    return _bootstrap_counts(Counter(values), len(values), resamples, rng)


def _bootstrap_counts(counts: Mapping[float, int], n: int, resamples: int, rng: random.Random) -> list[float]:
    # Levels in sorted order, not in the order values came: the same values (or the same counts of
    # them, aggregated by the store in SQL) give the same interval whatever order the rows were read in.
    levels = sorted(level for level, count in counts.items() if count)
    means: list[float]
    if len(levels) <= MAX_CATEGORIES:
        weights = [counts[level] / n for level in levels]
        means = []
        for _ in range(resamples):
            drawn = multinomial(n, weights, rng)
            means.append(math.fsum(level * count for level, count in zip(levels, drawn, strict=True)) / n)
    else:
        values = [level for level in levels for _ in range(counts[level])]
        means = [math.fsum(rng.choices(values, k=n)) / n for _ in range(resamples)]
    means.sort()
    return means


def mean_interval(
    values: Sequence[float],
    *,
    confidence: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Interval:
    """The interval of the mean of paired differences (percentile bootstrap, or normal past the budget).

    Args:
        values: One value per pair (B's minus A's).
        confidence: The interval's level.
        resamples: Bootstrap resamples.
        seed: The resampling's seed: the same data give the same interval.

    Raises:
        ValueError: no values, or a level outside (0, 1).
    """
    return counts_interval(Counter(values), confidence=confidence, resamples=resamples, seed=seed)


def counts_interval(
    counts: Mapping[float, int],
    *,
    confidence: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Interval:
    """``mean_interval`` of values given as how many times each occurs (``{value: count}``).

    The store aggregates paired differences in SQL (``GROUP BY`` the difference), so two
    100,000-case runs give a few thousand counts, not 100,000 values; the interval is the
    one ``mean_interval`` gives the values themselves.

    Raises:
        ValueError: no values, or a level outside (0, 1).
    """
    z = z_value(confidence)
    counts = {value: count for value, count in counts.items() if count > 0}
    n = sum(counts.values())
    if n == 0:
        raise ValueError("an interval needs at least one pair")
    distinct = len(counts)
    if distinct <= ALWAYS_BOOTSTRAPPED or n * resamples <= BOOTSTRAP_BUDGET:
        means = _bootstrap_counts(counts, n, resamples, random.Random(seed))
        tail = (1.0 - confidence) / 2
        return Interval(percentile(means, tail), percentile(means, 1.0 - tail), confidence, BOOTSTRAP)
    levels = sorted(counts)
    centre = math.fsum(value * counts[value] for value in levels) / n
    variance = math.fsum(counts[value] * (value - centre) ** 2 for value in levels) / n
    spread = z * math.sqrt(variance) / math.sqrt(n - 1)
    return Interval(centre - spread, centre + spread, confidence, NORMAL)
