import asyncio

import pytest

from jurybox import Context, Judgment, NumericScore, Status, aevaluate, evaluate, judge


def test_decorator_turns_bool_into_judgment(ctx: Context) -> None:
    @judge
    def mentions_beach(c: Context) -> bool:
        return "Beach" in c.output

    result = evaluate(mentions_beach, ctx)
    assert result.status is Status.PASS
    assert result.judge == "mentions_beach"


def test_float_uses_threshold(ctx: Context) -> None:
    @judge(name="quality", threshold=0.7)
    def quality(c: Context) -> float:
        return 0.6

    result = evaluate(quality, ctx)
    assert result.status is Status.FAIL
    assert result.value == 0.6
    assert "< threshold 0.7" in result.reasoning


def test_out_of_range_float_is_error_not_clipped(ctx: Context) -> None:
    @judge
    def too_big(c: Context) -> float:
        return 7.0

    result = evaluate(too_big, ctx)
    assert result.status is Status.ERROR
    assert "outside its bounds" in result.reasoning


def test_score_objects_are_accepted(ctx: Context) -> None:
    @judge(threshold=0.5)
    def rated(c: Context) -> NumericScore:
        return NumericScore(8, 1, 10)

    assert evaluate(rated, ctx).status is Status.PASS


def test_raising_judge_is_error_with_exception_kept(ctx: Context) -> None:
    @judge
    def broken(c: Context) -> bool:
        raise KeyError("missing field")

    result = evaluate(broken, ctx)
    assert result.status is Status.ERROR
    assert result.error is not None
    assert result.error.type == "KeyError"
    assert "missing field" in result.reasoning


@pytest.mark.parametrize("returned", [None, "yes", [True]])
def test_judge_returning_nonsense_is_error(ctx: Context, returned: object) -> None:
    @judge
    def sloppy(c: Context) -> object:
        return returned

    result = evaluate(sloppy, ctx)
    assert result.status is Status.ERROR
    assert "expected a Judgment, bool or score" in result.reasoning


def test_async_and_plain_callables_work(ctx: Context) -> None:
    async def async_judge(c: Context) -> Judgment:
        await asyncio.sleep(0)
        return Judgment.passed()

    def plain(c: Context) -> Judgment:
        return Judgment.failed()

    assert evaluate(async_judge, ctx).status is Status.PASS
    assert evaluate(async_judge, ctx).judge == "async_judge"
    assert evaluate(plain, ctx).status is Status.FAIL


def test_undecorated_callable_returning_bool_is_error(ctx: Context) -> None:
    def not_a_judge(c: Context) -> bool:
        return True

    result = evaluate(not_a_judge, ctx)
    assert result.status is Status.ERROR
    assert "@judge" in result.reasoning


def test_undecorated_callable_raising_is_error(ctx: Context) -> None:
    def explode(c: Context) -> Judgment:
        raise ValueError("nope")

    result = evaluate(explode, ctx)
    assert result.status is Status.ERROR and result.error is not None


async def test_aevaluate_and_evaluate_inside_running_loop(ctx: Context) -> None:
    @judge
    def ok(c: Context) -> bool:
        return True

    assert (await aevaluate(ok, ctx)).status is Status.PASS
    # evaluate() from inside a running loop (a notebook) must not deadlock or raise.
    assert evaluate(ok, ctx).status is Status.PASS


def test_decorator_validates_threshold() -> None:
    with pytest.raises(ValueError, match="threshold"):

        @judge(threshold=2)
        def bad(c: Context) -> bool:
            return True
