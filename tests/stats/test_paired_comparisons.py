"""What a comparison of two runs says, and that it never counts the unknown as a result."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jurybox.stats import (
    CaseSide,
    JudgeCalibration,
    adjust_for_many,
    compare_pass_rates,
    compare_runs,
    corrected_difference,
    mcnemar_exact,
    pairs_needed,
)


def test_a_clear_improvement_is_called_with_its_size_interval_and_test() -> None:
    outcomes = [(False, True)] * 30 + [(True, False)] * 4 + [(True, True)] * 100 + [(False, False)] * 66
    finding = compare_pass_rates(outcomes)
    assert finding.verdict == "better"
    assert finding.difference == pytest.approx(26 / 200)
    assert finding.interval is not None and finding.interval.low > 0 < finding.interval.high
    text = finding.describe("old prompt", "new prompt")
    assert text.startswith("new prompt passes 13.0 points more than old prompt [")
    assert "(McNemar, 34 of 200 cases changed)" in text


def test_no_detectable_difference_says_how_many_cases_would_be_needed() -> None:
    outcomes = [(False, True)] * 3 + [(True, False)] * 2 + [(True, True)] * 40 + [(False, False)] * 5
    finding = compare_pass_rates(outcomes)
    assert finding.verdict == "no detectable difference"
    assert finding.needed is not None and finding.needed > 50
    assert f"about {finding.needed} cases would be needed to see 5 points" in finding.describe()


def test_too_few_pairs_is_not_enough_to_tell() -> None:
    finding = compare_pass_rates([(False, True)] * 3)
    assert finding.verdict == "not enough cases"
    assert finding.p_value is None and finding.interval is None
    assert "not enough cases to tell (3 decided pairs" in finding.describe()


def test_added_removed_and_undecided_cases_are_never_results() -> None:
    a = {"kept": CaseSide(True), "gone": CaseSide(False), "broken": CaseSide(None), "fine": CaseSide(True)}
    b = {"kept": CaseSide(False), "new": CaseSide(True), "broken": CaseSide(True), "fine": CaseSide(None)}
    found = compare_runs(a, b)
    assert found.added == ("new",)
    assert found.removed == ("gone",)
    assert set(found.undecided) == {"broken", "fine"}
    assert found.pass_rate.pairs == 1  # only "kept": an ERROR on either side is left out, not failed
    assert found.pass_rate.only_a == 1 and found.pass_rate.only_b == 0


def test_scores_tiers_judges_and_trials_are_compared_pair_by_pair() -> None:
    rng = random.Random(3)
    a: dict[str, CaseSide] = {}
    b: dict[str, CaseSide] = {}
    for i in range(60):
        base = rng.random()
        a[f"c{i}"] = CaseSide(
            base > 0.4, base, {"deterministic": 1.0, "llm_judge": base}, {"correctness": base}, (2, 5)
        )
        lifted = min(1.0, base + 0.2)
        b[f"c{i}"] = CaseSide(
            lifted > 0.4, lifted, {"deterministic": 1.0, "llm_judge": lifted}, {"correctness": lifted}, (4, 5)
        )
    found = compare_runs(a, b, a_name="v1", b_name="v2")
    names = [m.name for m in found.means]
    assert names == ["score", "tier:deterministic", "tier:llm_judge", "judge:correctness", "trials"]
    judge = found.mean("judge:correctness")
    assert judge is not None and judge.difference > 0.1 and judge.interval is not None and judge.interval.low > 0
    assert judge.p_value is not None and judge.p_value < 0.001
    flat = found.mean("tier:deterministic")
    assert flat is not None and flat.difference == 0 and flat.p_value == 1.0
    trials = found.mean("trials")
    assert trials is not None and trials.difference == pytest.approx(0.4)
    assert found.to_dict()["summary"].startswith("v2 passes")


def test_the_same_data_give_the_same_figures() -> None:
    outcomes = [(random.Random(i).random() < 0.5, random.Random(i + 99).random() < 0.6) for i in range(300)]
    assert compare_pass_rates(outcomes, seed=5) == compare_pass_rates(outcomes, seed=5)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=5, max_size=400))
def test_the_interval_holds_the_observed_difference_and_the_test_reads_only_changed_cases(
    outcomes: list[tuple[bool, bool]],
) -> None:
    finding = compare_pass_rates(outcomes, resamples=500)
    assert finding.interval is not None and finding.difference is not None and finding.p_value is not None
    assert finding.interval.low - 1e-12 <= finding.difference <= finding.interval.high + 1e-12
    assert finding.p_value == mcnemar_exact(finding.only_a, finding.only_b)
    assert -1.0 <= finding.interval.low <= finding.interval.high <= 1.0


def test_pairs_needed_gives_about_the_promised_power() -> None:
    """Simulate McNemar at Connor's n: about 80% of runs should see the difference."""
    discordance, effect = 0.2, 0.08
    n = pairs_needed(discordance, effect)
    rng = random.Random(11)
    p_only_b = (discordance + effect) / 2
    p_only_a = (discordance - effect) / 2
    seen = 0
    runs = 400
    for _ in range(runs):
        only_a = only_b = 0
        for _ in range(n):
            u = rng.random()
            if u < p_only_a:
                only_a += 1
            elif u < p_only_a + p_only_b:
                only_b += 1
        seen += mcnemar_exact(only_a, only_b) < 0.05
    assert 0.7 <= seen / runs <= 0.9, (n, seen / runs)


def test_more_than_two_variants_get_holm_adjusted_p_values() -> None:
    base = {f"c{i}": CaseSide(i % 2 == 0) for i in range(40)}
    better = {f"c{i}": CaseSide(i % 2 == 0 or i % 3 == 0) for i in range(40)}
    same = dict(base)
    comparisons = [compare_runs(base, better), compare_runs(base, same)]
    adjusted = adjust_for_many(comparisons)
    raw = [c.pass_rate.p_value for c in comparisons]
    assert adjusted[0] is not None and raw[0] is not None and adjusted[0] >= raw[0]
    assert adjusted[1] == 1.0


def test_a_perfect_judge_changes_nothing_and_a_coin_cannot_be_corrected_for() -> None:
    outcomes = [(False, True)] * 20 + [(True, True)] * 50 + [(False, False)] * 30
    perfect = corrected_difference(outcomes, JudgeCalibration(1.0, 1.0, 100, 100))
    assert perfect.difference == pytest.approx(0.2)
    assert perfect.interval is not None and perfect.interval.contains(0.2)
    coin = corrected_difference(outcomes, JudgeCalibration(0.5, 0.5, 100, 100))
    assert coin.difference is None and coin.interval is None


def test_the_corrected_interval_is_wider_than_the_raw_one_with_a_noisy_judge() -> None:
    rng = random.Random(5)
    outcomes = [(rng.random() < 0.6, rng.random() < 0.7) for _ in range(400)]
    raw = compare_pass_rates(outcomes).interval
    corrected = corrected_difference(outcomes, JudgeCalibration(0.85, 0.8, 60, 40))
    assert raw is not None and corrected.interval is not None
    assert corrected.interval.high - corrected.interval.low > raw.high - raw.low
    assert corrected.difference is not None and abs(corrected.difference) > 0
