"""Paired statistics for comparing runs: is B better than A, and by how much, with what certainty?

Standard library only, like ``jurybox.core``, so every layer may use it (the
store's gate, reports, the dashboard, the CLI). Two runs are compared pair by
pair (``compare_runs``); one run against several baseline runs case by case
(``compare_to_baseline``, what ``jurybox gate --method significance`` asks).
Figures are checked in the tests against statsmodels and scipy.

Example:
    >>> from jurybox.stats import compare_pass_rates
    >>> finding = compare_pass_rates([(False, True)] * 9 + [(True, True)] * 30 + [(True, False)] * 1)
    >>> finding.verdict, round(finding.p_value, 4)
    ('better', 0.0215)
"""

from jurybox.stats._baseline import BaselineDifference, compare_to_baseline, matched_sets_p
from jurybox.stats._bootstrap import DEFAULT_RESAMPLES, Interval, mean_interval, percentile
from jurybox.stats._compare import (
    ALPHA,
    DETECTABLE,
    MIN_PAIRS,
    CaseSide,
    MeanDifference,
    PairedComparison,
    PassRateDifference,
    adjust_for_many,
    compare_means,
    compare_pass_rates,
    compare_runs,
    mean_of_counts,
    pass_rate_of_counts,
)
from jurybox.stats._corrected import CorrectedDifference, JudgeCalibration, corrected_difference
from jurybox.stats._sampling import binomial, multinomial
from jurybox.stats._tests import holm, mcnemar_exact, pairs_needed, wilcoxon_signed_rank, wilson_interval, z_value
from jurybox.stats._words import p_text

__all__ = [
    "ALPHA",
    "DEFAULT_RESAMPLES",
    "DETECTABLE",
    "MIN_PAIRS",
    "BaselineDifference",
    "CaseSide",
    "CorrectedDifference",
    "Interval",
    "JudgeCalibration",
    "MeanDifference",
    "PairedComparison",
    "PassRateDifference",
    "adjust_for_many",
    "binomial",
    "compare_means",
    "compare_pass_rates",
    "compare_runs",
    "compare_to_baseline",
    "corrected_difference",
    "holm",
    "matched_sets_p",
    "mcnemar_exact",
    "mean_interval",
    "mean_of_counts",
    "multinomial",
    "p_text",
    "pairs_needed",
    "pass_rate_of_counts",
    "percentile",
    "wilcoxon_signed_rank",
    "wilson_interval",
    "z_value",
]
