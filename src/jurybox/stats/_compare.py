"""Two runs of the same cases compared pair by pair: is B better than A, and can the difference be believed?

Cases are paired by identity. A case in one run only is *added* or *removed*,
never a failure; a case that either run could not decide (ERROR, ABSTAIN) is
*undecided* and counted apart, never as a pass or a fail in a test. What is
left are decided pairs:

- the pass-rate difference, with a paired bootstrap interval and the exact
  McNemar p-value on the pairs that changed;
- mean score differences (overall, per tier, per judge), each with a paired
  interval and a Wilcoxon signed-rank p-value;
- with repeated trials, the per-case pass rates compared the same way;
- "no difference this suite can detect", with about how many cases would be
  needed to see a given difference, when that is the truth.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from jurybox.stats._bootstrap import DEFAULT_RESAMPLES, Interval, counts_interval
from jurybox.stats._tests import holm, mcnemar_exact, pairs_needed, wilcoxon_counts
from jurybox.stats._words import finding

ALPHA = 0.05
"""The significance level differences are called at, unless told otherwise."""
DETECTABLE = 0.05
"""The pass-rate difference (5 points) "cases needed" is worked out for."""
MIN_PAIRS = 5
"""Below this many decided pairs no test is run: "not enough cases to tell"."""


@dataclass(frozen=True)
class CaseSide:
    """One case as one run saw it.

    Attributes:
        passed: True or False when the run decided the case; None when it could not
            (ERROR or ABSTAIN), so the case is left out of every test.
        score: The case's score on 0..1, or None.
        tiers: Each tier's score on 0..1 (tiers that ran).
        judges: Each judge's score on 0..1 (judges that decided).
        trials: (passes, trials) when the case ran repeatedly; None otherwise.
        verdicts: Each judge's decided verdict (True: pass), for judge-corrected differences.
    """

    passed: bool | None
    score: float | None = None
    tiers: Mapping[str, float] = field(default_factory=dict)
    judges: Mapping[str, float] = field(default_factory=dict)
    trials: tuple[int, int] | None = None
    verdicts: Mapping[str, bool] = field(default_factory=dict)


@dataclass(frozen=True)
class PassRateDifference:
    """B's pass rate minus A's over the decided pairs.

    Attributes:
        pairs: Decided pairs the figures rest on.
        a_passed: Pairs A passed.
        b_passed: Pairs B passed.
        only_a: Pairs A passed and B failed.
        only_b: Pairs B passed and A failed.
        difference: (b_passed - a_passed) / pairs; None with no pairs.
        interval: Its paired bootstrap interval; None below ``MIN_PAIRS``.
        p_value: The exact McNemar p-value; None below ``MIN_PAIRS``.
        needed: About how many pairs a difference of ``detectable`` would need to be seen.
        detectable: The difference ``needed`` is for.
        alpha: The level the difference is called significant at.
    """

    pairs: int
    a_passed: int
    b_passed: int
    only_a: int
    only_b: int
    difference: float | None
    interval: Interval | None
    p_value: float | None
    needed: int | None
    detectable: float
    alpha: float

    @property
    def changed(self) -> int:
        """Pairs whose outcome differs between the runs (the discordant pairs McNemar reads)."""
        return self.only_a + self.only_b

    @property
    def significant(self) -> bool:
        return self.p_value is not None and self.p_value < self.alpha

    @property
    def verdict(self) -> str:
        """``better``, ``worse``, ``no detectable difference`` or ``not enough cases``."""
        if self.p_value is None or self.difference is None:
            return "not enough cases"
        if not self.significant:
            return "no detectable difference"
        return "better" if self.difference > 0 else "worse"

    def describe(self, a: str = "A", b: str = "B") -> str:
        """The finding in plain words, with the number of pairs it rests on."""
        if self.difference is None or self.interval is None or self.p_value is None:
            return f"not enough cases to tell ({self.pairs} decided pairs; at least {MIN_PAIRS} are needed)"
        test = f"McNemar, {self.changed} of {self.pairs} cases changed"
        return finding(f"{b} passes {{}} than {a}", self, self.difference, self.interval, self.p_value, test)

    def to_dict(self) -> dict[str, Any]:
        return {
            "pairs": self.pairs,
            "a_passed": self.a_passed,
            "b_passed": self.b_passed,
            "only_a": self.only_a,
            "only_b": self.only_b,
            "changed": self.changed,
            "difference": self.difference,
            "interval": None if self.interval is None else self.interval.to_dict(),
            "p_value": self.p_value,
            "test": "mcnemar-exact",
            "significant": self.significant,
            "verdict": self.verdict,
            "needed": self.needed,
            "detectable": self.detectable,
            "alpha": self.alpha,
        }


@dataclass(frozen=True)
class MeanDifference:
    """B's mean minus A's over the pairs where both have the value (a score, a tier's, a judge's, a trial rate).

    Attributes:
        name: What is compared (``score``, ``tier:llm_judge``, ``judge:correctness``, ``trials``).
        pairs: Pairs with the value on both sides.
        a_mean: A's mean over those pairs.
        b_mean: B's mean over them.
        difference: b_mean - a_mean.
        interval: The paired interval of the difference; None below ``MIN_PAIRS``.
        p_value: Wilcoxon signed-rank p-value; None below ``MIN_PAIRS``.
        adjusted_p: The p-value after Holm's adjustment across a family of comparisons, when made.
    """

    name: str
    pairs: int
    a_mean: float
    b_mean: float
    difference: float
    interval: Interval | None
    p_value: float | None
    adjusted_p: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "pairs": self.pairs,
            "a_mean": self.a_mean,
            "b_mean": self.b_mean,
            "difference": self.difference,
            "interval": None if self.interval is None else self.interval.to_dict(),
            "p_value": self.p_value,
            "adjusted_p": self.adjusted_p,
            "test": "wilcoxon-signed-rank",
        }


@dataclass(frozen=True)
class PairedComparison:
    """Run B against run A, case by case.

    Attributes:
        a: A's name (a run id or a variant).
        b: B's name.
        pass_rate: The pass-rate difference over decided pairs.
        means: Mean differences: ``score``, then each tier's and each judge's (those with at least
            ``MIN_PAIRS`` pairs), then ``trials``.
        added: Cases only B has.
        removed: Cases only A has.
        undecided: Cases both have that either could not decide (left out of the pass-rate test).
    """

    a: str
    b: str
    pass_rate: PassRateDifference
    means: tuple[MeanDifference, ...]
    added: tuple[str, ...]
    removed: tuple[str, ...]
    undecided: tuple[str, ...]

    def mean(self, name: str) -> MeanDifference | None:
        return next((m for m in self.means if m.name == name), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "pass_rate": self.pass_rate.to_dict(),
            "summary": self.pass_rate.describe(self.a, self.b),
            "means": [m.to_dict() for m in self.means],
            "added": list(self.added),
            "removed": list(self.removed),
            "undecided": list(self.undecided),
        }


def compare_pass_rates(
    outcomes: Sequence[tuple[bool, bool]],
    *,
    confidence: float = 0.95,
    alpha: float = ALPHA,
    detectable: float = DETECTABLE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> PassRateDifference:
    """The paired pass-rate difference of decided (A passed, B passed) outcomes.

    Raises:
        ValueError: a level outside (0, 1) or a detectable difference outside (0, 1].
    """
    return pass_rate_of_counts(
        len(outcomes),
        sum(1 for a, _ in outcomes if a),
        sum(1 for _, b in outcomes if b),
        sum(1 for a, b in outcomes if a and not b),
        sum(1 for a, b in outcomes if b and not a),
        confidence=confidence,
        alpha=alpha,
        detectable=detectable,
        resamples=resamples,
        seed=seed,
    )


def pass_rate_of_counts(
    pairs: int,
    a_passed: int,
    b_passed: int,
    only_a: int,
    only_b: int,
    *,
    confidence: float = 0.95,
    alpha: float = ALPHA,
    detectable: float = DETECTABLE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> PassRateDifference:
    """``compare_pass_rates`` from the 2x2 table of decided pairs alone (what a store counts in SQL).

    Raises:
        ValueError: a level outside (0, 1) or a detectable difference outside (0, 1].
    """
    if pairs == 0:
        return PassRateDifference(0, 0, 0, 0, 0, None, None, None, None, detectable, alpha)
    difference = (b_passed - a_passed) / pairs
    needed = pairs_needed((only_a + only_b) / pairs, detectable, alpha=alpha)
    if pairs < MIN_PAIRS:
        return PassRateDifference(
            pairs, a_passed, b_passed, only_a, only_b, difference, None, None, needed, detectable, alpha
        )
    # Each pair's difference is -1 (A only passed), +1 (B only) or 0: its counts are the whole sample.
    deltas = {-1.0: only_a, 1.0: only_b, 0.0: pairs - only_a - only_b}
    interval = counts_interval(deltas, confidence=confidence, resamples=resamples, seed=seed)
    p_value = mcnemar_exact(only_a, only_b)
    return PassRateDifference(
        pairs, a_passed, b_passed, only_a, only_b, difference, interval, p_value, needed, detectable, alpha
    )


def compare_means(
    name: str,
    pairs: Sequence[tuple[float, float]],
    *,
    confidence: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> MeanDifference | None:
    """B's mean minus A's over paired (A value, B value); None with no pairs."""
    return mean_of_counts(
        name,
        len(pairs),
        math.fsum(a for a, _ in pairs),
        math.fsum(b for _, b in pairs),
        Counter(b - a for a, b in pairs),
        confidence=confidence,
        resamples=resamples,
        seed=seed,
    )


def mean_of_counts(
    name: str,
    pairs: int,
    sum_a: float,
    sum_b: float,
    deltas: Mapping[float, int],
    *,
    confidence: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> MeanDifference | None:
    """``compare_means`` from aggregates: the pairs, each side's sum, and ``{B - A: how many pairs}``.

    What a store computes in SQL (``SUM`` and ``GROUP BY`` the difference); the interval
    and the Wilcoxon test only need the differences' counts.
    """
    if not pairs:
        return None
    a_mean, b_mean = sum_a / pairs, sum_b / pairs
    if pairs < MIN_PAIRS:
        return MeanDifference(name, pairs, a_mean, b_mean, b_mean - a_mean, None, None)
    interval = counts_interval(deltas, confidence=confidence, resamples=resamples, seed=seed)
    _, p_value = wilcoxon_counts(deltas)
    return MeanDifference(name, pairs, a_mean, b_mean, b_mean - a_mean, interval, p_value)


def compare_runs(
    a: Mapping[str, CaseSide],
    b: Mapping[str, CaseSide],
    *,
    a_name: str = "A",
    b_name: str = "B",
    confidence: float = 0.95,
    alpha: float = ALPHA,
    detectable: float = DETECTABLE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> PairedComparison:
    """Compare two runs' cases, paired by name (see the module's docstring for what is counted how)."""
    shared = [name for name in a if name in b]
    added = tuple(name for name in b if name not in a)
    removed = tuple(name for name in a if name not in b)
    undecided = tuple(name for name in shared if a[name].passed is None or b[name].passed is None)
    left_out = set(undecided)
    decided = [(bool(a[name].passed), bool(b[name].passed)) for name in shared if name not in left_out]
    pass_rate = compare_pass_rates(
        decided, confidence=confidence, alpha=alpha, detectable=detectable, resamples=resamples, seed=seed
    )

    def paired(name: str, values: Sequence[tuple[float, float]]) -> None:
        found = compare_means(name, values, confidence=confidence, resamples=resamples, seed=seed)
        if found is not None:
            means.append(found)

    means: list[MeanDifference] = []
    scores = [(a[n].score, b[n].score) for n in shared]
    paired("score", [(x, y) for x, y in scores if x is not None and y is not None])
    for kind, read in (("tier", _tiers), ("judge", _judges)):
        names = sorted({key for n in shared for key in read(a[n])} & {key for n in shared for key in read(b[n])})
        for key in names:
            values = [(read(a[n])[key], read(b[n])[key]) for n in shared if key in read(a[n]) and key in read(b[n])]
            # A judge each case names differently (contains('42')) pairs with itself once: no row for it.
            if len(values) >= MIN_PAIRS:
                paired(f"{kind}:{key}", values)
    rates = [(a[n].trials, b[n].trials) for n in shared]
    trial_pairs = [(x[0] / x[1], y[0] / y[1]) for x, y in rates if x and y and x[1] and y[1]]
    paired("trials", trial_pairs)
    return PairedComparison(a_name, b_name, pass_rate, tuple(means), added, removed, undecided)


def adjust_for_many(comparisons: Sequence[PairedComparison]) -> list[float | None]:
    """Holm-adjusted pass-rate p-values of several comparisons made at once (more than two variants)."""
    present = [c.pass_rate.p_value for c in comparisons if c.pass_rate.p_value is not None]
    adjusted = iter(holm(present))
    return [next(adjusted) if c.pass_rate.p_value is not None else None for c in comparisons]


def _tiers(side: CaseSide) -> Mapping[str, float]:
    return side.tiers


def _judges(side: CaseSide) -> Mapping[str, float]:
    return side.judges
