"""Every figure against scipy / sklearn on the same numbers, and the bootstrap's seeding."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score, f1_score, precision_score, recall_score

from jurybox.calibrate import Bootstrap, corrected_pass_rate, kappa_of
from jurybox.calibrate._metrics import (
    binary_rates,
    cohen_kappa,
    kendall_tau_b,
    krippendorff_interval,
    krippendorff_nominal,
    pearson,
    spearman,
)

RNG = np.random.default_rng(7)


def _table(human: list[str], judge: list[str], rows: list[str], columns: list[str]) -> np.ndarray:
    table = np.zeros((1, len(rows), len(columns)))
    for h, j in zip(human, judge, strict=True):
        table[0, rows.index(h), columns.index(j)] += 1
    return table


@pytest.mark.parametrize("seed", range(5))
def test_binary_figures_match_sklearn(seed: int) -> None:
    rng = np.random.default_rng(seed)
    human = list(rng.choice(["pass", "fail"], size=200))
    judge = list(rng.choice(["pass", "fail", "abstain", "error"], size=200, p=[0.45, 0.4, 0.1, 0.05]))
    table = _table(human, judge, ["pass", "fail"], ["pass", "fail", "abstain", "error"])
    rates = binary_rates(table)
    positive = [h == "pass" for h in human]
    said_pass = [j == "pass" for j in judge]
    assert rates["tpr"][0] == pytest.approx(recall_score(positive, said_pass))
    assert rates["precision"][0] == pytest.approx(precision_score(positive, said_pass))
    assert rates["f1"][0] == pytest.approx(f1_score(positive, said_pass))
    said_fail = [j == "fail" for j in judge]
    assert rates["tnr"][0] == pytest.approx(recall_score([not p for p in positive], said_fail))
    assert cohen_kappa(table, 2)[0] == pytest.approx(cohen_kappa_score(human, judge))


def test_categorical_kappa_matches_sklearn() -> None:
    human = list(RNG.choice(list("ABCD"), size=300))
    judge = [h if RNG.random() < 0.6 else str(RNG.choice(list("ABCDX"))) for h in human]
    assert kappa_of(human, judge) == pytest.approx(cohen_kappa_score(human, judge))


@pytest.mark.parametrize("ties", [False, True])
def test_correlations_match_scipy(ties: bool) -> None:
    x = RNG.integers(1, 6, size=400).astype(float) if ties else RNG.normal(size=400)
    y = x + RNG.normal(scale=2.0, size=400)
    if ties:
        y = np.round(y)
    ones = np.ones((1, x.size))
    assert pearson(x, y, ones)[0] == pytest.approx(stats.pearsonr(x, y).statistic)
    assert spearman(x, y, ones)[0] == pytest.approx(stats.spearmanr(x, y).statistic)
    assert kendall_tau_b(x, y, ones)[0] == pytest.approx(stats.kendalltau(x, y).statistic)


def test_weighted_correlations_equal_the_expanded_resample() -> None:
    x = RNG.integers(0, 10, size=60).astype(float)
    y = np.round(x / 2 + RNG.normal(size=60))
    weights = RNG.multinomial(60, np.full(60, 1 / 60), size=3).astype(float)
    for row, w in enumerate(weights):
        ex = np.repeat(x, w.astype(int))
        ey = np.repeat(y, w.astype(int))
        assert spearman(x, y, weights)[row] == pytest.approx(stats.spearmanr(ex, ey).statistic)
        assert kendall_tau_b(x, y, weights)[row] == pytest.approx(stats.kendalltau(ex, ey).statistic)
        assert pearson(x, y, weights)[row] == pytest.approx(stats.pearsonr(ex, ey).statistic)


def _alpha_reference(units: list[list[float]], interval: bool) -> float:
    """Krippendorff's alpha by its definition: pairable values, coincidences, observed / expected disagreement."""
    kept = [u for u in units if len(u) >= 2]
    values = [v for u in kept for v in u]
    n = len(values)

    def delta(a: float, b: float) -> float:
        return (a - b) ** 2 if interval else float(a != b)

    observed = sum(
        sum(delta(a, b) for i, a in enumerate(u) for j, b in enumerate(u) if i != j) / (len(u) - 1) for u in kept
    )
    expected = sum(delta(a, b) for i, a in enumerate(values) for j, b in enumerate(values) if i != j)
    return 1 - (n - 1) * observed / expected


def test_krippendorff_alpha_matches_its_definition() -> None:
    units = [list(RNG.integers(0, 3, size=RNG.integers(1, 5)).astype(float)) for _ in range(80)]
    kept = [u for u in units if len(u) >= 2]
    categories = sorted({v for u in kept for v in u})
    counts = np.array([[u.count(c) for c in categories] for u in kept], dtype=float)
    sums = np.array([[len(u), sum(u), sum(v * v for v in u)] for u in kept])
    ones = np.ones((1, len(kept)))
    assert krippendorff_nominal(counts, ones)[0] == pytest.approx(_alpha_reference(units, interval=False))
    assert krippendorff_interval(sums, ones)[0] == pytest.approx(_alpha_reference(units, interval=True))


def test_krippendorff_alpha_known_value() -> None:
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability", the nominal example: alpha = 0.743.
    data = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
        [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
    ]
    units = [[float(r[u]) for r in data if r[u] is not None] for u in range(12)]
    kept = [u for u in units if len(u) >= 2]
    categories = sorted({v for u in kept for v in u})
    counts = np.array([[u.count(c) for c in categories] for u in kept], dtype=float)
    assert krippendorff_nominal(counts, np.ones((1, len(kept))))[0] == pytest.approx(0.743, abs=5e-4)


def test_bootstrap_is_seeded_and_keyed() -> None:
    table = np.array([[40.0, 10.0, 2.0, 0.0], [8.0, 35.0, 5.0, 1.0]])
    first = Bootstrap(200, seed=3).tables(table, "judge-a")
    assert np.array_equal(first, Bootstrap(200, seed=3).tables(table, "judge-a"))
    assert not np.array_equal(first, Bootstrap(200, seed=3).tables(table, "judge-b"))
    assert not np.array_equal(first, Bootstrap(200, seed=4).tables(table, "judge-a"))
    assert (first.sum(axis=(1, 2)) == table.sum()).all()


def test_bootstrap_interval_covers_the_estimate() -> None:
    table = np.array([[80.0, 20.0, 0.0, 0.0], [30.0, 70.0, 0.0, 0.0]])
    drawn = binary_rates(Bootstrap(2000, seed=1).tables(table, "k"))["tpr"]
    low, high = Bootstrap().interval(drawn)
    assert low is not None and high is not None
    assert low < 0.8 < high
    assert high - low == pytest.approx(2 * 1.96 * (0.8 * 0.2 / 100) ** 0.5, rel=0.15)  # the normal approximation


def test_rogan_gladen() -> None:
    rate = corrected_pass_rate(70, 100, tpr=0.9, tnr=0.8, positives=200, negatives=150)
    assert rate.value == pytest.approx((0.7 + 0.8 - 1) / (0.9 + 0.8 - 1))
    assert rate.low is not None and rate.high is not None and rate.low < rate.value < rate.high
    assert not rate.too_weak
    assert corrected_pass_rate(95, 100, tpr=0.9, tnr=0.7, positives=50, negatives=50).value == 1.0  # clipped
    weak = corrected_pass_rate(50, 100, tpr=0.5, tnr=0.5, positives=10, negatives=10)
    assert weak.too_weak and weak.value is None
    # More calibration rows, narrower interval: both uncertainties are carried.
    small = corrected_pass_rate(70, 1000, tpr=0.9, tnr=0.8, positives=20, negatives=20)
    large = corrected_pass_rate(70, 1000, tpr=0.9, tnr=0.8, positives=2000, negatives=2000)
    assert (small.high - small.low) > (large.high - large.low)  # type: ignore[operator]
    with pytest.raises(ValueError):
        corrected_pass_rate(5, 0, tpr=0.9, tnr=0.9, positives=1, negatives=1)
