"""Paired statistics pair cases, not trials: a repeated case's trials are read back as one case by its rule."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from jurybox.stats import CaseSide
from jurybox.store._paired_trials import group_trials, rule_outcome


def _side(passed: bool | None, score: float | None = None) -> CaseSide:
    return CaseSide(passed, score, {"llm_judge": score or 0.0}, {}, None)


def test_trials_become_one_case_with_their_counts() -> None:
    sides = {
        "refund~1": _side(True, 1.0),
        "refund~2": _side(False, 0.0),
        "refund~3": _side(True, 1.0),
        "plain": _side(True, 1.0),
        "odd~name": _side(False, 0.0),  # not a trial: no rule for "odd"
    }
    grouped = group_trials(sides, {"refund": {"count": 3, "pass": "majority"}})
    assert set(grouped) == {"refund", "plain", "odd~name"}
    refund = grouped["refund"]
    assert refund.passed is True and refund.trials == (2, 3)
    assert refund.score is not None and abs(refund.score - 2 / 3) < 1e-12


def test_no_rules_leave_the_sides_as_they_are() -> None:
    sides = {"a~1": _side(True), "a~2": _side(False)}
    assert group_trials(sides, {}) == sides


def test_undecided_trials_that_could_tip_the_rule_leave_the_case_undecided() -> None:
    assert rule_outcome("all", 3, passes=2, fails=0) is None  # the third trial errored
    assert rule_outcome("all", 3, passes=2, fails=1) is False
    assert rule_outcome("majority", 5, passes=2, fails=1) is None
    assert rule_outcome("majority", 5, passes=3, fails=0) is True
    assert rule_outcome(2, 4, passes=1, fails=3) is False


@given(
    count=st.integers(1, 9),
    outcomes=st.lists(st.sampled_from([True, False, None]), min_size=1, max_size=9),
    rule=st.one_of(st.sampled_from(["all", "majority"]), st.integers(1, 9)),
)
def test_a_decided_outcome_never_changes_whatever_the_undecided_trials_become(
    count: int, outcomes: list[bool | None], rule: str | int
) -> None:
    outcomes = outcomes[:count]
    passes, fails = outcomes.count(True), outcomes.count(False)
    decided = rule_outcome(rule, count, passes, fails)
    undecided = count - passes - fails
    ends = {rule_outcome(rule, count, passes + k, fails + undecided - k) for k in range(undecided + 1)}
    if decided is not None:
        assert ends == {decided}
    else:
        assert ends == {True, False}
