"""A repeated case's status by its rule: decided only when no outcome of its open trials could change it."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from jurybox.core import Status
from jurybox.experiments import rule_status
from jurybox.experiments._outcomes import needed


def brute_force(passed: int, failed: int, errored: int, abstained: int, count: int, rule: str | int) -> Status:
    """Try every way the open trials (undecided or not run) could have gone: all pass, all fail, or neither."""
    still_open = count - passed - failed
    results = {passed + extra >= needed(rule, count) for extra in range(still_open + 1)}
    if results == {True}:
        return Status.PASS
    if results == {False}:
        return Status.FAIL
    return Status.ERROR if errored or not abstained else Status.ABSTAIN


@st.composite
def trials(draw: st.DrawFn) -> tuple[int, int, int, int, int, str | int]:
    count = draw(st.integers(1, 12))
    parts = draw(st.lists(st.sampled_from("PFEAM"), min_size=count, max_size=count))
    rule = draw(st.one_of(st.sampled_from(["all", "majority"]), st.integers(1, count)))
    return (parts.count("P"), parts.count("F"), parts.count("E"), parts.count("A"), count, rule)


@given(trials())
def test_the_rule_matches_every_way_the_open_trials_could_go(case: tuple[int, int, int, int, int, str | int]) -> None:
    assert rule_status(*case) is brute_force(*case)


def test_listed_examples() -> None:
    assert rule_status(5, 0, 0, 0, 5, "all") is Status.PASS
    assert rule_status(4, 1, 0, 0, 5, "all") is Status.FAIL
    assert rule_status(4, 0, 1, 0, 5, "all") is Status.ERROR  # the errored trial could have passed or failed
    assert rule_status(3, 0, 0, 2, 5, "majority") is Status.PASS  # 3 of 5 is a majority whatever the rest did
    assert rule_status(2, 2, 0, 1, 5, "majority") is Status.ABSTAIN
    assert rule_status(2, 3, 0, 0, 5, 3) is Status.FAIL
    assert rule_status(1, 0, 0, 0, 4, 1) is Status.PASS
    for count, rule in itertools.product(range(1, 4), ["all", "majority"]):
        assert rule_status(0, 0, 0, 0, count, rule) is Status.ERROR  # nothing decided: never a pass or a fail
