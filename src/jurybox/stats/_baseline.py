"""One run against the per-case outcomes of its baseline runs: did it drop by more than the noise?

The gate's question. Each case the run and its baseline both decided is a
*matched set*: the run's outcome (pass or fail) and the baseline's m outcomes
of the same case (m baseline runs, less those that could not decide it). Under
"no change" the run is one more draw from each case's own pass probability, so
given how many of the set's m + 1 outcomes passed (t), the run's outcome is a
pass with probability t / (m + 1). The number of cases the run passed is then a
sum of independent Bernoulli variables (a Poisson-binomial), and its tails are
the p-value: the conditional test for matched sets, which is exactly McNemar's
exact test when the baseline is one run, and whose normal form is the
Cochran-Mantel-Haenszel test with each case a stratum (statsmodels'
``StratifiedTable.test_null_odds``). Cases whose whole set agrees (always pass,
always fail) carry no information and drop out, as concordant pairs do in
McNemar's test. A case the baseline never saw is *added*; one the run lacks is
*removed*; one either side could not decide is *undecided*: none is a failure.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

from jurybox.stats._bootstrap import DEFAULT_RESAMPLES, Interval, mean_interval
from jurybox.stats._compare import ALPHA, DETECTABLE, MIN_PAIRS
from jurybox.stats._tests import mcnemar_exact, pairs_needed
from jurybox.stats._words import finding

EXACT_SETS = 5000
"""Informative cases up to which the Poisson-binomial tails are summed exactly; the normal form past that."""

EXACT = "exact"
NORMAL = "normal"


@dataclass(frozen=True)
class BaselineDifference:
    """A run's pass rate against its baseline's, case by case.

    Attributes:
        pairs: Cases decided by the run and by at least one baseline run.
        baseline_runs: The most baseline outcomes any case has.
        current_rate: The run's pass rate over those cases.
        baseline_rate: The mean of the cases' baseline pass rates.
        difference: current_rate - baseline_rate (negative: a drop); None with no pairs.
        interval: Its paired bootstrap interval; None below ``MIN_PAIRS``.
        p_value: The two-sided matched-sets p-value; None below ``MIN_PAIRS``.
        informative: Cases whose outcomes were not all the same (the ones the test reads).
        method: ``exact`` (Poisson-binomial tails) or ``normal`` (Cochran-Mantel-Haenszel).
        needed: About how many cases a difference of ``detectable`` would need to be seen.
        detectable: The difference ``needed`` is for.
        alpha: The level a difference is called significant at.
    """

    pairs: int
    baseline_runs: int
    current_rate: float | None
    baseline_rate: float | None
    difference: float | None
    interval: Interval | None
    p_value: float | None
    informative: int
    method: str
    needed: int | None
    detectable: float
    alpha: float

    @property
    def significant(self) -> bool:
        return self.p_value is not None and self.p_value < self.alpha

    @property
    def verdict(self) -> str:
        """``worse``, ``better``, ``no detectable difference`` or ``not enough cases``."""
        if self.p_value is None or self.difference is None:
            return "not enough cases"
        if not self.significant:
            return "no detectable difference"
        return "better" if self.difference > 0 else "worse"

    def describe(self, name: str = "the run") -> str:
        """The finding in plain words, with the number of cases it rests on."""
        if self.difference is None or self.interval is None or self.p_value is None:
            return f"not enough cases to tell ({self.pairs} decided cases; at least {MIN_PAIRS} are needed)"
        runs = f"{self.baseline_runs} baseline run{'s' if self.baseline_runs != 1 else ''}"
        test = f"{self.informative} of {self.pairs} cases varied, {runs}"
        return finding(
            f"{name} passes {{}} than its baseline", self, self.difference, self.interval, self.p_value, test
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "pairs": self.pairs,
            "baseline_runs": self.baseline_runs,
            "current_rate": self.current_rate,
            "baseline_rate": self.baseline_rate,
            "difference": self.difference,
            "interval": None if self.interval is None else self.interval.to_dict(),
            "p_value": self.p_value,
            "test": f"matched-sets-{self.method}",
            "informative": self.informative,
            "significant": self.significant,
            "verdict": self.verdict,
            "needed": self.needed,
            "detectable": self.detectable,
            "alpha": self.alpha,
        }


def compare_to_baseline(
    cases: Sequence[tuple[int, int, bool]],
    *,
    confidence: float = 0.95,
    alpha: float = ALPHA,
    detectable: float = DETECTABLE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> BaselineDifference:
    """A run against its baseline, from each decided case's (baseline passes, baseline decided, run passed).

    Raises:
        ValueError: a case with no baseline outcome or more passes than outcomes.
    """
    for passes, decided, _ in cases:
        if decided < 1 or not 0 <= passes <= decided:
            raise ValueError(f"a case needs 0 <= baseline passes <= baseline outcomes >= 1, got {passes}/{decided}")
    pairs = len(cases)
    most = max((decided for _, decided, _ in cases), default=0)
    if pairs == 0:
        return BaselineDifference(0, 0, None, None, None, None, None, 0, EXACT, None, detectable, alpha)
    current = sum(1 for *_, passed in cases if passed) / pairs
    deltas = [float(passed) - passes / decided for passes, decided, passed in cases]
    difference = math.fsum(deltas) / pairs
    baseline = current - difference
    sets = [(passes + passed, decided + 1, passed) for passes, decided, passed in cases]
    informative = [(t, size, passed) for t, size, passed in sets if 0 < t < size]
    needed = pairs_needed(len(informative) / pairs, detectable, alpha=alpha)
    if pairs < MIN_PAIRS:
        return BaselineDifference(
            pairs, most, current, baseline, difference, None, None, len(informative), EXACT, needed, detectable, alpha
        )
    p_value, method = matched_sets_p(informative)
    interval = mean_interval(deltas, confidence=confidence, resamples=resamples, seed=seed)
    return BaselineDifference(
        pairs,
        most,
        current,
        baseline,
        difference,
        interval,
        p_value,
        len(informative),
        method,
        needed,
        detectable,
        alpha,
    )


def matched_sets_p(sets: Sequence[tuple[int, int, bool]]) -> tuple[float, str]:
    """The two-sided p-value of the run's passes over informative (passes in the set, set size, run passed).

    Twice the smaller tail of the Poisson-binomial of the run's passes, capped at 1 (the
    convention of statsmodels' exact McNemar test, which this is when every set has two
    outcomes), and the method used.
    """
    if not sets:
        return 1.0, EXACT
    observed = sum(1 for *_, passed in sets if passed)
    groups = Counter((t, size) for t, size, _ in sets)
    if set(groups) == {(1, 2)}:  # one baseline run: McNemar's exact test, for any count
        return mcnemar_exact(len(sets) - observed, observed), EXACT
    if len(sets) > EXACT_SETS:
        mean = math.fsum(t / size * count for (t, size), count in groups.items())
        variance = math.fsum(t / size * (1 - t / size) * count for (t, size), count in groups.items())
        z = (observed - mean) / math.sqrt(variance)
        return min(1.0, 2 * NormalDist().cdf(-abs(z))), NORMAL
    pmf = [1.0]
    for (t, size), count in groups.items():
        pmf = _convolve(pmf, _binomial_pmf(count, t / size))
    below = math.fsum(pmf[: observed + 1])
    above = math.fsum(pmf[observed:])
    return min(1.0, 2 * min(below, above)), EXACT


def _binomial_pmf(n: int, p: float) -> list[float]:
    log_p, log_q = math.log(p), math.log1p(-p)
    base = math.lgamma(n + 1)
    return [
        math.exp(base - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * log_p + (n - k) * log_q) for k in range(n + 1)
    ]


def _convolve(left: list[float], right: list[float]) -> list[float]:
    out = [0.0] * (len(left) + len(right) - 1)
    for i, weight in enumerate(left):
        if weight < 1e-300:  # a term this small moves no p-value a report prints
            continue
        for j, other in enumerate(right):
            out[i + j] += weight * other
    return out
