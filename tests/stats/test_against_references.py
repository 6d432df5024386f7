"""jurybox.stats against well-kept implementations, on generated data.

References (versions asserted below, so a change of reference is seen):
statsmodels 0.15 (``mcnemar(exact=True)``, ``proportion_confint(method="wilson")``,
``multipletests(method="holm")``) and scipy 1.17 (``stats.wilcoxon``,
``stats.bootstrap``, ``stats.binom``).
"""

from __future__ import annotations

import random
from unittest import mock

import numpy as np
import pytest
import scipy
import statsmodels
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from jurybox.stats import (
    binomial,
    compare_pass_rates,
    holm,
    mcnemar_exact,
    mean_interval,
    wilcoxon_signed_rank,
    wilson_interval,
)


def test_the_references_are_the_versions_these_tests_were_written_against() -> None:
    assert statsmodels.__version__.startswith("0.15"), statsmodels.__version__
    assert scipy.__version__.startswith("1.17"), scipy.__version__


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 400), st.integers(0, 400), st.integers(0, 50))
def test_mcnemar_matches_statsmodels_exact_test_to_1e_9(only_a: int, only_b: int, agree: int) -> None:
    table = [[agree, only_a], [only_b, agree]]
    expected = mcnemar(table, exact=True).pvalue
    assert abs(mcnemar_exact(only_a, only_b) - expected) <= 1e-9


def test_mcnemar_on_large_counts_matches_statsmodels() -> None:
    for only_a, only_b in [(4000, 4100), (0, 9000), (5000, 5000), (123, 4567), (15_000, 15_700), (30_000, 29_000)]:
        expected = mcnemar([[0, only_a], [only_b, 0]], exact=True).pvalue
        assert abs(mcnemar_exact(only_a, only_b) - expected) <= 1e-9


@settings(max_examples=300, deadline=None)
@given(
    st.integers(0, 2000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
    st.sampled_from([0.8, 0.9, 0.95, 0.99]),
)
def test_wilson_matches_statsmodels(counts: tuple[int, int], confidence: float) -> None:
    passes, trials = counts
    if trials == 0:
        assert wilson_interval(0, 0, confidence) == (0.0, 1.0)
        return
    low, high = proportion_confint(passes, trials, alpha=1 - confidence, method="wilson")
    ours = wilson_interval(passes, trials, confidence)
    assert ours[0] == pytest.approx(low, abs=1e-12)
    assert ours[1] == pytest.approx(high, abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([-1.0, -0.5, -0.2, 0.0, 0.1, 0.2, 0.5, 1.0, 0.3, -0.3]), min_size=1, max_size=300))
def test_wilcoxon_matches_scipy_normal_approximation(differences: list[float]) -> None:
    statistic, p_value = wilcoxon_signed_rank(differences)
    if not any(differences):
        assert p_value == 1.0
        return
    expected = sps.wilcoxon(differences, zero_method="wilcox", correction=False, method="approx")
    assert statistic == pytest.approx(expected.statistic)
    assert p_value == pytest.approx(expected.pvalue, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.0, 1.0, allow_nan=False), min_size=1, max_size=30))
def test_holm_matches_statsmodels(p_values: list[float]) -> None:
    # statsmodels' Holm ends with gc.collect(), a full collection of the test session's heap (about 0.6 s
    # a call there, 25 s for the examples); collecting changes no figure, so the reference runs without it.
    with mock.patch("gc.collect", return_value=0):
        expected = multipletests(p_values, method="holm")[1]
    assert holm(p_values) == pytest.approx(list(expected), abs=1e-12)


@pytest.mark.parametrize(("pairs", "seed"), [(40, 1), (200, 2), (1000, 3)])
def test_the_pass_rate_interval_matches_scipy_bootstrap_within_its_own_tolerance(pairs: int, seed: int) -> None:
    """Our multinomial resampling and scipy's index resampling draw from the same distribution."""
    rng = random.Random(seed)
    outcomes = [(rng.random() < 0.7, rng.random() < 0.78) for _ in range(pairs)]
    ours = compare_pass_rates(outcomes, resamples=20_000, seed=seed).interval
    assert ours is not None
    a = np.array([float(x) for x, _ in outcomes])
    b = np.array([float(y) for _, y in outcomes])
    reference = sps.bootstrap(
        (a, b),
        lambda x, y, axis: np.mean(y - x, axis=axis),
        paired=True,
        vectorized=True,
        n_resamples=20_000,
        method="percentile",
        random_state=np.random.default_rng(seed),
    ).confidence_interval
    # The ends of a 20,000-resample percentile interval wander by about one standard error of the
    # quantile; allow three of them (and at least one case's worth of difference, 1/pairs).
    tolerance = max(3 * reference_quantile_error(a, b), 1.0 / pairs)
    assert ours.low == pytest.approx(reference.low, abs=tolerance)
    assert ours.high == pytest.approx(reference.high, abs=tolerance)


def reference_quantile_error(a: np.ndarray, b: np.ndarray) -> float:
    standard_error = float(np.std(b - a) / np.sqrt(len(a)))
    density = 0.058  # standard normal density at the 2.5% quantile
    return float(np.sqrt(0.025 * 0.975 / 20_000) / density * standard_error)


def test_continuous_means_use_the_same_bootstrap_as_scipy() -> None:
    rng = random.Random(7)
    deltas = [rng.gauss(0.05, 0.2) for _ in range(40)]
    ours = mean_interval(deltas, resamples=10_000, seed=7)
    reference = sps.bootstrap(
        (np.array(deltas),), np.mean, n_resamples=10_000, method="percentile", random_state=np.random.default_rng(7)
    ).confidence_interval
    assert ours.method == "bootstrap"
    assert ours.low == pytest.approx(reference.low, abs=0.01)
    assert ours.high == pytest.approx(reference.high, abs=0.01)


def test_past_the_budget_the_normal_interval_matches_the_bootstrap() -> None:
    rng = random.Random(8)
    deltas = [rng.choice([-0.3, -0.1, 0.0, 0.1, 0.2, 0.4, 0.7]) for _ in range(3000)]
    ours = mean_interval(deltas, resamples=2000, seed=8)
    reference = sps.bootstrap(
        (np.array(deltas),), np.mean, n_resamples=10_000, method="percentile", random_state=np.random.default_rng(8)
    ).confidence_interval
    assert ours.method == "normal"
    assert ours.low == pytest.approx(reference.low, abs=0.003)
    assert ours.high == pytest.approx(reference.high, abs=0.003)


@pytest.mark.parametrize(("n", "p"), [(5, 0.3), (30, 0.2), (200, 0.5), (1000, 0.03), (10_000, 0.37), (50, 0.97)])
def test_binomial_draws_follow_the_binomial_distribution(n: int, p: float) -> None:
    rng = random.Random(n)
    draws = [binomial(n, p, rng) for _ in range(20_000)]
    mean = n * p
    variance = n * p * (1 - p)
    assert np.mean(draws) == pytest.approx(mean, abs=4 * np.sqrt(variance / len(draws)) + 1e-9)
    # Chi-square goodness of fit over bins with an expected count of at least 20.
    low, high = int(sps.binom.ppf(0.001, n, p)), int(sps.binom.ppf(0.999, n, p))
    edges = list(range(low, high + 1))
    observed = np.array(
        [sum(1 for d in draws if d <= low)]
        + [draws.count(k) for k in edges[1:-1]]
        + [sum(1 for d in draws if d >= high)]
    )
    probability = np.array(
        [sps.binom.cdf(low, n, p)] + [sps.binom.pmf(k, n, p) for k in edges[1:-1]] + [sps.binom.sf(high - 1, n, p)]
    )
    expected = probability / probability.sum() * len(draws)
    keep = expected >= 20
    merged_observed = np.append(observed[keep], observed[~keep].sum())
    merged_expected = np.append(expected[keep], expected[~keep].sum())
    if merged_expected[-1] == 0:
        merged_observed, merged_expected = merged_observed[:-1], merged_expected[:-1]
    merged_expected *= merged_observed.sum() / merged_expected.sum()
    assert sps.chisquare(merged_observed, merged_expected).pvalue > 1e-4
