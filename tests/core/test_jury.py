import asyncio

import pytest

from jurybox import AtLeast, Average, Consensus, Context, Judgment, Jury, Majority, Median, Status, Weighted, evaluate


def test_majority_pass_fail_and_tie_policies(counting, ctx: Context) -> None:  # type: ignore[no-untyped-def]
    assert evaluate(Jury(counting("a"), counting("b"), counting("c", "fail")), ctx).status is Status.PASS
    assert evaluate(Jury(counting("a", "fail"), counting("b", "fail"), counting("c")), ctx).status is Status.FAIL
    tie = [counting("a"), counting("b", "fail")]
    assert evaluate(Jury(*tie), ctx).status is Status.ABSTAIN  # default tie policy: no verdict
    assert evaluate(Jury(*tie, voting=Majority(tie="pass")), ctx).status is Status.PASS
    assert evaluate(Jury(*tie, voting=Majority(tie="fail")), ctx).status is Status.FAIL
    with pytest.raises(ValueError, match="tie"):
        Majority(tie="coin")  # type: ignore[arg-type]


def test_average_and_median(counting, ctx: Context) -> None:  # type: ignore[no-untyped-def]
    members = [counting("a", "pass", 0.9), counting("b", "pass", 0.8), counting("c", "fail", 0.1)]
    average = evaluate(Jury(*members, voting=Average(threshold=0.7)), ctx)
    assert average.status is Status.FAIL and average.value == pytest.approx(0.6)
    median = evaluate(Jury(*members, voting=Median(threshold=0.7)), ctx)
    assert median.status is Status.PASS and median.value == pytest.approx(0.8)
    with pytest.raises(ValueError, match="threshold"):
        Average(threshold=1.5)


def test_weighted_uses_names_and_rejects_unknown_names(counting, ctx: Context) -> None:  # type: ignore[no-untyped-def]
    strict, lenient = counting("strict", "fail", 0.0), counting("lenient", "pass", 1.0)
    heavy_strict = Jury(strict, lenient, voting=Weighted({"strict": 3, "lenient": 1}, threshold=0.5))
    result = evaluate(heavy_strict, ctx)
    assert result.status is Status.FAIL and result.value == pytest.approx(0.25)
    with pytest.raises(ValueError, match="not in the jury: typo; the jury's judges are: strict, lenient"):
        Jury(strict, lenient, voting=Weighted({"typo": 2}))
    with pytest.raises(ValueError, match="non-negative"):
        Weighted({"strict": -1})


def test_consensus(counting, ctx: Context) -> None:  # type: ignore[no-untyped-def]
    assert evaluate(Jury(counting("a"), counting("b"), voting=Consensus()), ctx).status is Status.PASS
    failing = evaluate(Jury(counting("a"), counting("b", "fail"), voting=Consensus()), ctx)
    assert failing.status is Status.FAIL and "b failed" in failing.reasoning
    # An abstention blocks a unanimous pass: never fail open.
    assert evaluate(Jury(counting("a"), counting("b", "abstain"), voting=Consensus()), ctx).status is Status.ABSTAIN


def test_at_least_k(counting, ctx: Context) -> None:  # type: ignore[no-untyped-def]
    members = [counting("a"), counting("b"), counting("c", "fail")]
    assert evaluate(Jury(*members, voting=AtLeast(2)), ctx).status is Status.PASS
    assert evaluate(Jury(*members, voting=AtLeast(3)), ctx).status is Status.FAIL
    undecided = [counting("a"), counting("b", "abstain"), counting("c", "fail")]
    assert evaluate(Jury(*undecided, voting=AtLeast(2)), ctx).status is Status.ABSTAIN
    with pytest.raises(ValueError, match="can never pass"):
        Jury(*members, voting=AtLeast(4))
    with pytest.raises(ValueError, match="k >= 1"):
        AtLeast(0)


STRATEGIES = [Majority(), Average(0.5), Median(0.5), Weighted({}, 0.5), Consensus(), AtLeast(1)]


@pytest.mark.parametrize("voting", STRATEGIES, ids=lambda v: type(v).__name__)
def test_error_policy_propagate_is_default_and_visible(counting, ctx: Context, voting) -> None:  # type: ignore[no-untyped-def]
    result = evaluate(Jury(counting("a"), counting("b"), counting("broken", "error"), voting=voting), ctx)
    assert result.status is Status.ERROR
    assert "broken" in result.reasoning
    assert result.children["broken"].status is Status.ERROR
    assert result.value is None  # never silently scored 0


@pytest.mark.parametrize(
    ("voting", "expected"),
    [
        (Majority(), Status.ABSTAIN),  # 1 pass vs the error's fail vote: a tie
        (Average(0.6), Status.FAIL),  # mean of 1.0 and 0.0
        (Median(0.6), Status.FAIL),
        (Weighted({}, 0.6), Status.FAIL),
        (Consensus(), Status.FAIL),
        (AtLeast(2), Status.FAIL),
    ],
    ids=lambda v: type(v).__name__,
)
def test_error_policy_fail_counts_error_as_failing_vote(counting, ctx: Context, voting, expected) -> None:  # type: ignore[no-untyped-def]
    result = evaluate(Jury(counting("a"), counting("broken", "error"), voting=voting, errors="fail"), ctx)
    assert result.status is expected
    assert "errored (fail): broken" in result.reasoning
    assert result.children["broken"].status is Status.ERROR


@pytest.mark.parametrize("voting", STRATEGIES, ids=lambda v: type(v).__name__)
def test_error_policy_ignore_leaves_error_out_but_visible(counting, ctx: Context, voting) -> None:  # type: ignore[no-untyped-def]
    result = evaluate(Jury(counting("a"), counting("broken", "error"), voting=voting, errors="ignore"), ctx)
    assert result.status is Status.PASS
    assert "errored (ignore): broken" in result.reasoning
    assert result.children["broken"].status is Status.ERROR


def test_every_member_errored_under_ignore_is_error(counting, ctx: Context) -> None:  # type: ignore[no-untyped-def]
    result = evaluate(Jury(counting("x", "error"), counting("y", "error"), errors="ignore"), ctx)
    assert result.status is Status.ERROR


def test_all_abstain_abstains(counting, ctx: Context) -> None:  # type: ignore[no-untyped-def]
    for voting in STRATEGIES:
        jury = Jury(counting("a", "abstain"), counting("b", "abstain"), voting=voting)
        assert evaluate(jury, ctx).status is Status.ABSTAIN, voting


def test_bad_error_policy_and_empty_jury() -> None:
    with pytest.raises(ValueError, match="errors= must be one of"):
        Jury(lambda c: Judgment.passed(), errors="skip")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at least one judge"):
        Jury()
    with pytest.raises(TypeError, match="callables"):
        Jury("contains")


def test_juries_nest_and_keep_every_judgment(counting, ctx: Context) -> None:  # type: ignore[no-untyped-def]
    inner = Jury(counting("x"), counting("y", "fail"), voting=AtLeast(1), name="inner")
    outer = Jury(inner, counting("z"), voting=Consensus(), name="outer")
    result = evaluate(outer, ctx)
    assert result.status is Status.PASS
    assert result.find("y") is not None and result.find("y").status is Status.FAIL  # type: ignore[union-attr]
    assert set(result.children) == {"inner", "z"}


def test_duplicate_names_get_distinct_keys(counting, ctx: Context) -> None:  # type: ignore[no-untyped-def]
    result = evaluate(Jury(counting("same"), counting("same", "fail"), voting=Majority(tie="fail")), ctx)
    assert set(result.children) == {"same", "same#2"}


def test_members_run_concurrently(ctx: Context) -> None:
    in_flight = 0
    peak = 0

    async def slow(c: Context) -> Judgment:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.01)
        in_flight -= 1
        return Judgment.passed()

    assert evaluate(Jury(*[slow] * 5, voting=Consensus()), ctx).status is Status.PASS
    assert peak == 5  # all five were waiting at once, not one after another
