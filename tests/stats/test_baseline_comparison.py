"""A run against its baseline runs' per-case outcomes, checked against scipy and statsmodels.

References (versions asserted in test_against_references.py): scipy 1.17
(``stats.poisson_binom``: the exact distribution of the run's passes under "no
change"), statsmodels 0.15 (``mcnemar(exact=True)`` for a one-run baseline;
``StratifiedTable.test_null_odds(correction=False)``, the Cochran-Mantel-Haenszel
test the normal form is).
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from statsmodels.stats.contingency_tables import StratifiedTable, mcnemar

from jurybox.stats import _baseline as baseline_module
from jurybox.stats import compare_to_baseline, matched_sets_p


def _reference_p(sets: list[tuple[int, int, bool]]) -> float:
    observed = sum(1 for *_, passed in sets if passed)
    distribution = sps.poisson_binom([t / size for t, size, _ in sets])
    return float(min(1.0, 2 * min(distribution.cdf(observed), distribution.sf(observed - 1))))


informative_sets = st.lists(
    st.integers(2, 7).flatmap(lambda size: st.tuples(st.integers(1, size - 1), st.just(size), st.booleans())),
    min_size=1,
    max_size=120,
)


@settings(max_examples=200, deadline=None)
@given(informative_sets)
def test_the_exact_p_value_is_scipys_poisson_binomial_tail(sets: list[tuple[int, int, bool]]) -> None:
    # A set of t passes among `size` outcomes can hold the run's pass only when t >= 1, its fail only when t < size.
    sets = [(t, size, passed) for t, size, passed in sets if (t >= 1 if passed else t <= size - 1)]
    if not sets:
        return
    p_value, method = matched_sets_p(sets)
    assert method == "exact"
    assert p_value == pytest.approx(_reference_p(sets), abs=1e-9)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 300), st.integers(0, 300), st.integers(0, 100))
def test_with_one_baseline_run_it_is_statsmodels_exact_mcnemar(only_baseline: int, only_run: int, same: int) -> None:
    cases = [(1, 1, False)] * only_baseline + [(0, 1, True)] * only_run + [(1, 1, True)] * same
    if len(cases) < 5:
        return
    finding = compare_to_baseline(cases)
    expected = mcnemar([[same, only_baseline], [only_run, 0]], exact=True).pvalue
    assert finding.p_value == pytest.approx(expected, abs=1e-9)
    assert finding.informative == only_baseline + only_run


def test_past_the_exact_limit_it_is_the_cochran_mantel_haenszel_test(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(11)
    sets = []
    for _ in range(400):
        size = rng.randint(3, 6)
        t = rng.randint(1, size - 1)
        sets.append((t, size, rng.random() < t / size - 0.05))
    monkeypatch.setattr(baseline_module, "EXACT_SETS", 100)
    p_value, method = matched_sets_p(sets)
    assert method == "normal"
    # Each case is a stratum: rows (this run, the baseline runs) by columns (pass, fail).
    tables = [np.array([[int(c), 1 - int(c)], [t - int(c), size - 1 - (t - int(c))]]) for t, size, c in sets]
    expected = StratifiedTable(tables).test_null_odds(correction=False).pvalue
    assert p_value == pytest.approx(expected, abs=1e-9)
    # And the normal form is close to the exact tail at this size.
    assert p_value == pytest.approx(_reference_p(sets), abs=0.02)


def test_a_clear_drop_is_worse_with_its_interval_and_the_cases_it_rests_on() -> None:
    # 200 cases, 5 baseline runs: 150 always passed, 30 never; 20 flaky ones. This run fails 40 of the steady passers.
    cases = (
        [(5, 5, True)] * 110 + [(5, 5, False)] * 40 + [(0, 5, False)] * 30 + [(3, 5, True)] * 10 + [(3, 5, False)] * 10
    )
    finding = compare_to_baseline(cases)
    assert finding.verdict == "worse"
    assert finding.difference == pytest.approx((120 / 200) - (150 + 20 * 0.6) / 200)
    assert finding.interval is not None and finding.interval.high < 0
    assert finding.baseline_runs == 5 and finding.pairs == 200
    text = finding.describe("this run")
    assert text.startswith("this run passes 21.0 points fewer than its baseline [")
    assert "(60 of 200 cases varied, 5 baseline runs)" in text


def test_noise_is_no_detectable_difference_and_says_how_many_cases_it_would_take() -> None:
    rng = random.Random(4)
    flaky = [rng.random() for _ in range(80)]
    cases = []
    for p in flaky:
        baseline = sum(rng.random() < p for _ in range(5))
        cases.append((baseline, 5, rng.random() < p))
    finding = compare_to_baseline(cases)
    assert finding.verdict == "no detectable difference"
    assert finding.needed is not None and finding.needed > 80
    assert f"about {finding.needed} cases would be needed to see 5 points" in finding.describe()


def test_false_alarms_stay_near_alpha_on_flaky_cases() -> None:
    """Under "no change" (every case one more draw of its own pass probability) drops are called at most ~alpha."""
    rng = random.Random(9)
    alarms = 0
    trials = 300
    for _ in range(trials):
        cases = []
        for _ in range(60):
            p = rng.choice([0.0, 1.0, 0.5, 0.8, 0.95])
            cases.append((sum(rng.random() < p for _ in range(4)), 4, rng.random() < p))
        alarms += compare_to_baseline(cases, resamples=200).verdict == "worse"
    assert alarms / trials <= 0.05


def test_too_few_cases_is_not_enough_cases_never_a_verdict() -> None:
    finding = compare_to_baseline([(1, 1, False)] * 3)
    assert finding.verdict == "not enough cases" and finding.p_value is None
    assert "not enough cases to tell (3 decided cases" in finding.describe()
    assert compare_to_baseline([]).difference is None


def test_a_case_without_a_baseline_outcome_is_refused() -> None:
    with pytest.raises(ValueError, match="baseline"):
        compare_to_baseline([(0, 0, True)])
    with pytest.raises(ValueError, match="baseline"):
        compare_to_baseline([(3, 2, True)])
