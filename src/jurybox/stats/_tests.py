"""Significance tests and intervals with closed forms: exact McNemar, Wilson, Wilcoxon signed-rank, Holm.

Each is checked against a well-kept implementation in the tests (statsmodels'
``mcnemar(exact=True)`` and ``proportion_confint(method="wilson")``, scipy's
``wilcoxon``), so the figures a report prints can be reproduced elsewhere.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from fractions import Fraction
from statistics import NormalDist

EXACT_LIMIT = 20_000
"""Discordant pairs up to which McNemar's p-value is summed in exact integers."""


def z_value(confidence: float) -> float:
    """The two-sided normal quantile of a confidence level (1.96 for 0.95).

    Raises:
        ValueError: a level outside (0, 1).
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """The exact (binomial) two-sided McNemar p-value of paired pass/fail outcomes.

    Only the discordant pairs count: ``only_a`` passed in A and not in B, ``only_b`` the
    reverse. Under "no difference" each discordant pair goes either way with
    probability 1/2, so the p-value is twice the binomial tail of the smaller count,
    capped at 1 (the convention of statsmodels' ``mcnemar(exact=True)``). Computed with
    exact integers, so it is right to the last bit for any count.

    Raises:
        ValueError: a negative count.
    """
    if only_a < 0 or only_b < 0:
        raise ValueError(f"discordant counts must be >= 0, got {only_a}, {only_b}")
    n = only_a + only_b
    smaller = min(only_a, only_b)
    if n > EXACT_LIMIT:
        return min(1.0, 2.0 * _binomial_tail_by_logs(n, smaller))
    term = tail = 1  # C(n, 0); each next term from the last, in exact integers
    for i in range(smaller):
        term = term * (n - i) // (i + 1)
        tail += term
    return min(1.0, float(Fraction(2 * tail, 2**n)))


def _binomial_tail_by_logs(n: int, k: int) -> float:
    """P(X <= k) for X ~ Binomial(n, 1/2), summed from the largest term down in floating point.

    For counts past ``EXACT_LIMIT`` exact integers get slow; the terms are summed
    from C(n, k) downwards (each a ratio of the last) until they stop mattering, so
    the relative error stays near the float's own.
    """
    log_term = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) - n * math.log(2)
    total = 0.0
    ratio_term = 1.0
    for i in range(k, -1, -1):
        total += ratio_term
        ratio_term *= i / (n - i + 1)  # C(n, i-1) / C(n, i)
        if ratio_term < 1e-18 * total:
            break
    return min(1.0, math.exp(log_term) * total)


def wilson_interval(passes: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of a pass rate: inside 0..1 and honest at 0/n and n/n.

    Args:
        passes: Trials that passed.
        trials: Trials run (0 gives the uninformative interval 0..1).
        confidence: Two-sided level, e.g. 0.95.

    Raises:
        ValueError: counts or a level that make no sense.
    """
    z = z_value(confidence)
    if trials < 0 or not 0 <= passes <= trials:
        raise ValueError(f"need 0 <= passes <= trials, got passes={passes}, trials={trials}")
    if trials == 0:
        return 0.0, 1.0
    rate = passes / trials
    denominator = 1 + z * z / trials
    centre = (rate + z * z / (2 * trials)) / denominator
    spread = z * math.sqrt(rate * (1 - rate) / trials + z * z / (4 * trials * trials)) / denominator
    # At 0/n and n/n the exact bound is 0 or 1; clamp float noise there.
    low = 0.0 if passes == 0 else max(0.0, centre - spread)
    high = 1.0 if passes == trials else min(1.0, centre + spread)
    return low, high


def wilcoxon_signed_rank(differences: Sequence[float]) -> tuple[float, float]:
    """(statistic, two-sided p-value) of the Wilcoxon signed-rank test, normal approximation.

    Zero differences are dropped (Wilcoxon's convention), tied magnitudes get their
    average rank and the variance is corrected for ties, without a continuity
    correction: scipy's ``wilcoxon(d, zero_method="wilcox", correction=False,
    method="approx")``. The statistic is the smaller of the positive and negative rank
    sums. With no non-zero difference the p-value is 1.
    """
    return wilcoxon_counts(Counter(differences))


def wilcoxon_counts(counts: Mapping[float, int]) -> tuple[float, float]:
    """``wilcoxon_signed_rank`` of differences given as ``{difference: how many times}``.

    Ranks go to distinct magnitudes with their tie counts, so a store's ``GROUP BY`` of
    100,000 differences into a few thousand gives the same statistic and p-value (rank
    sums are multiples of one half: exact in floating point at any realistic size).
    """
    positive_at: dict[float, int] = {}
    negative_at: dict[float, int] = {}
    for d, count in counts.items():
        if d == 0 or math.isnan(d) or count <= 0:
            continue
        into = positive_at if d > 0 else negative_at
        into[abs(d)] = into.get(abs(d), 0) + count
    n = sum(positive_at.values()) + sum(negative_at.values())
    if n == 0:
        return 0.0, 1.0
    positive = negative = tie_term = 0.0
    start = 0
    for magnitude in sorted(set(positive_at) | set(negative_at)):
        up, down = positive_at.get(magnitude, 0), negative_at.get(magnitude, 0)
        size = up + down
        average = (start + start + size - 1) / 2 + 1
        positive += average * up
        negative += average * down
        tie_term += size**3 - size
        start += size
    statistic = min(positive, negative)
    mean = n * (n + 1) / 4
    variance = n * (n + 1) * (2 * n + 1) / 24 - tie_term / 48
    if variance <= 0:
        return statistic, 1.0
    z = (statistic - mean) / math.sqrt(variance)
    return statistic, min(1.0, 2 * NormalDist().cdf(-abs(z)))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values, in the order given (family-wise error held at any level).

    Raises:
        ValueError: a p-value outside 0..1.
    """
    for p in p_values:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"p-values must be in 0..1, got {p!r}")
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted = [0.0] * len(p_values)
    running = 0.0
    for position, index in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - position) * p_values[index]))
        adjusted[index] = running
    return adjusted


def pairs_needed(discordance: float, effect: float, *, alpha: float = 0.05, power: float = 0.8) -> int:
    """About how many paired cases a McNemar test needs to see a pass-rate difference of ``effect``.

    Connor's (1987) formula for paired proportions: n = (z_a·√ψ + z_b·√(ψ - δ²))² / δ², with
    ψ the share of cases whose outcome differs between the two runs. A difference of δ
    needs at least δ of the cases to differ, so ψ is taken as at least δ (the fewest
    cases that could show it): with no observed change the answer is a lower bound.

    Raises:
        ValueError: an effect outside (0, 1], or alpha/power outside (0, 1).
    """
    if not 0.0 < effect <= 1.0:
        raise ValueError(f"effect must be in (0, 1], got {effect!r}")
    if not 0.0 < power < 1.0:
        raise ValueError(f"power must be strictly between 0 and 1, got {power!r}")
    psi = min(1.0, max(discordance, effect))
    z_a = z_value(1.0 - alpha)
    z_b = NormalDist().inv_cdf(power)
    root = z_a * math.sqrt(psi) + z_b * math.sqrt(max(0.0, psi - effect * effect))
    return math.ceil(root * root / (effect * effect))
