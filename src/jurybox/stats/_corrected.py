"""A pass-rate difference with the judge's own error taken out, when the judge was calibrated.

A judge measured against people has a true-positive rate (TPR: good answers it
passes) and a true-negative rate (TNR: bad answers it fails). Each variant's
observed pass rate p is corrected with Rogan and Gladen's estimator,
(p + TNR - 1) / (TPR + TNR - 1), clipped to 0..1. The interval of the corrected
difference resamples both sources of error at once: the run's paired cases
(a multinomial over the four pass/fail combinations) and the calibration's
labelled rows (TPR and TNR as binomial proportions of their own counts).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from jurybox.stats._bootstrap import BOOTSTRAP, DEFAULT_RESAMPLES, Interval, percentile
from jurybox.stats._sampling import binomial, multinomial
from jurybox.stats._tests import z_value


@dataclass(frozen=True)
class JudgeCalibration:
    """What a calibration measured of a judge.

    Attributes:
        tpr: Share of human-pass rows the judge passed.
        tnr: Share of human-fail rows the judge failed.
        positives: Human-pass rows behind ``tpr``.
        negatives: Human-fail rows behind ``tnr``.
    """

    tpr: float
    tnr: float
    positives: int
    negatives: int

    def __post_init__(self) -> None:
        if not (0.0 <= self.tpr <= 1.0 and 0.0 <= self.tnr <= 1.0):
            raise ValueError(f"tpr and tnr must be in 0..1, got {self.tpr}, {self.tnr}")
        if self.positives <= 0 or self.negatives <= 0:
            raise ValueError("a calibration needs human-pass and human-fail rows (positives and negatives > 0)")

    @property
    def youden(self) -> float:
        """TPR + TNR - 1: 0 is a coin, 1 a perfect judge."""
        return self.tpr + self.tnr - 1.0

    def correct(self, observed: float) -> float | None:
        """The corrected pass rate of an observed one; None when the judge is no better than a coin."""
        return _corrected(observed, self.tpr, self.tnr)


@dataclass(frozen=True)
class CorrectedDifference:
    """Each side's corrected pass rate and B's minus A's.

    Attributes:
        a: A's corrected pass rate (None: the judge is too weak to correct for).
        b: B's corrected pass rate.
        difference: b - a.
        interval: Its interval, carrying the run's and the calibration's uncertainty; None when
            too many resamples leave the judge no better than a coin to say.
        pairs: Decided pairs behind it.
    """

    a: float | None
    b: float | None
    difference: float | None
    interval: Interval | None
    pairs: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "difference": self.difference,
            "interval": None if self.interval is None else self.interval.to_dict(),
            "pairs": self.pairs,
        }


def corrected_difference(
    outcomes: Sequence[tuple[bool, bool]],
    calibration: JudgeCalibration,
    *,
    confidence: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> CorrectedDifference:
    """The corrected pass rates of two runs judged by one calibrated judge, and their difference."""
    z_value(confidence)  # checks the level
    pairs = len(outcomes)
    if pairs == 0:
        return CorrectedDifference(None, None, None, None, 0)
    kinds = [(True, True), (True, False), (False, True), (False, False)]
    counts = [sum(1 for pair in outcomes if pair == kind) for kind in kinds]
    a_rate = (counts[0] + counts[1]) / pairs
    b_rate = (counts[0] + counts[2]) / pairs
    a = calibration.correct(a_rate)
    b = calibration.correct(b_rate)
    if a is None or b is None:
        return CorrectedDifference(None, None, None, None, pairs)
    rng = random.Random(seed)
    weights = [count / pairs for count in counts]
    differences: list[float] = []
    too_weak = 0
    for _ in range(resamples):
        drawn = multinomial(pairs, weights, rng)
        tpr = binomial(calibration.positives, calibration.tpr, rng) / calibration.positives
        tnr = binomial(calibration.negatives, calibration.tnr, rng) / calibration.negatives
        a_star = _corrected((drawn[0] + drawn[1]) / pairs, tpr, tnr)
        b_star = _corrected((drawn[0] + drawn[2]) / pairs, tpr, tnr)
        if a_star is None or b_star is None:
            too_weak += 1
            continue
        differences.append(b_star - a_star)
    tail = (1.0 - confidence) / 2
    if too_weak > tail * resamples:  # the interval's own ends would rest on resamples with no correction
        return CorrectedDifference(a, b, b - a, None, pairs)
    differences.sort()
    interval = Interval(percentile(differences, tail), percentile(differences, 1.0 - tail), confidence, BOOTSTRAP)
    return CorrectedDifference(a, b, b - a, interval, pairs)


def _corrected(observed: float, tpr: float, tnr: float) -> float | None:
    youden = tpr + tnr - 1.0
    if youden <= 0:
        return None
    return min(1.0, max(0.0, (observed + tnr - 1.0) / youden))
