"""The Rogan-Gladen correction: a run's pass rate with the judge's known errors taken out.

A judge that passes bad answers (TNR < 1) and fails good ones (TPR < 1) reports
an observed pass rate p that is not the true one. With TPR and TNR measured
against people, the true rate is estimated as

    (p + TNR - 1) / (TPR + TNR - 1), clipped to [0, 1].

When TPR + TNR <= 1 the judge is no better than a coin and no correction exists.
The interval carries both uncertainties, the run's (p from n cases) and the
calibration's (TPR from its human-pass rows, TNR from its human-fail rows), by
the delta method (Reiczigel, Foldi and Ozsvari, 2010).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any


@dataclass(frozen=True)
class CorrectedRate:
    """A corrected pass rate.

    Attributes:
        observed: The run's observed pass rate.
        value: The corrected estimate; None when the judge is too weak.
        low: Lower end of its interval.
        high: Upper end of its interval.
        too_weak: True when TPR + TNR <= 1: the judge cannot be corrected for.
    """

    observed: float
    value: float | None
    low: float | None
    high: float | None
    too_weak: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "observed": self.observed,
            "value": self.value,
            "low": self.low,
            "high": self.high,
            "too_weak": self.too_weak,
        }


def corrected_pass_rate(
    passed: int, n: int, *, tpr: float, tnr: float, positives: int, negatives: int, confidence: float = 0.95
) -> CorrectedRate:
    """The Rogan-Gladen corrected pass rate of a run, with an interval.

    Args:
        passed: Cases the judge passed in the run.
        n: Cases the judge decided in the run.
        tpr: The judge's TPR from its calibration.
        tnr: The judge's TNR from its calibration.
        positives: Human-pass rows behind ``tpr``.
        negatives: Human-fail rows behind ``tnr``.
        confidence: The interval's level.

    Raises:
        ValueError: counts out of range, or rates outside 0..1.
    """
    if n <= 0 or not 0 <= passed <= n:
        raise ValueError(f"need 0 <= passed <= n and n > 0, got passed={passed}, n={n}")
    if positives <= 0 or negatives <= 0:
        raise ValueError("the calibration needs human-pass and human-fail rows (positives and negatives > 0)")
    for name, rate in (("tpr", tpr), ("tnr", tnr)):
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"{name} must be in 0..1, got {rate!r}")
    observed = passed / n
    youden = tpr + tnr - 1.0
    if youden <= 0:
        return CorrectedRate(observed, None, None, None, True)
    estimate = (observed + tnr - 1.0) / youden
    variance = (
        observed * (1 - observed) / n
        + estimate**2 * tpr * (1 - tpr) / positives
        + (1 - estimate) ** 2 * tnr * (1 - tnr) / negatives
    ) / youden**2
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    half = z * math.sqrt(max(variance, 0.0))
    return CorrectedRate(observed, _clip(estimate), _clip(estimate - half), _clip(estimate + half), False)


def _clip(value: float) -> float:
    return min(1.0, max(0.0, value))
