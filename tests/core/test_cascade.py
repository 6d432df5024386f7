import pytest

from jurybox import Average, Cascade, Context, Status, Tier, evaluate


def test_cheap_failure_means_expensive_judges_are_never_called(counting, ctx: Context) -> None:  # type: ignore[no-untyped-def]
    cheap_ok, cheap_bad = counting("tools"), counting("schema", "fail")
    middle, expensive = counting("similar"), counting("llm")
    cascade = Cascade(
        Tier.reject_on_any_fail(cheap_ok, cheap_bad, name="deterministic"),
        Tier.accept_on_all_pass(middle, name="similarity"),
        Tier.final(expensive, name="llm_judge"),
    )
    result = evaluate(cascade, ctx)
    assert result.status is Status.FAIL
    assert result.decided_by == "deterministic"
    assert "schema failed" in result.reasoning
    assert (cheap_ok.calls, cheap_bad.calls, middle.calls, expensive.calls) == (1, 1, 0, 0)
    assert result.metadata["skipped"] == ["similarity", "llm_judge"]
    assert list(result.children) == ["deterministic"]


def test_accept_tier_stops_escalation(counting, ctx: Context) -> None:  # type: ignore[no-untyped-def]
    first, second, last = counting("a"), counting("b"), counting("c")
    result = evaluate(Cascade(Tier.reject_on_any_fail(first), Tier.accept_on_all_pass(second), Tier.final(last)), ctx)
    assert result.status is Status.PASS
    assert result.decided_by == "tier2:accept_on_all_pass"
    assert (first.calls, second.calls, last.calls) == (1, 1, 0)


def test_accept_tier_escalates_on_fail_and_final_decides(counting, ctx: Context) -> None:  # type: ignore[no-untyped-def]
    unsure, final = counting("similar", "fail"), counting("llm")
    result = evaluate(Cascade(Tier.accept_on_all_pass(unsure), Tier.final(final)), ctx)
    assert result.status is Status.PASS
    assert result.decided_by == "tier2:final"
    assert (unsure.calls, final.calls) == (1, 1)
    assert result.children["tier1:accept_on_all_pass"].status is Status.ABSTAIN


def test_final_tier_votes(counting, ctx: Context) -> None:  # type: ignore[no-untyped-def]
    members = [counting("a", "pass", 0.9), counting("b", "fail", 0.3)]
    assert evaluate(Cascade(Tier.final(*members)), ctx).status is Status.FAIL  # Consensus by default
    averaged = evaluate(Cascade(Tier.final(*members, voting=Average(0.5))), ctx)
    assert averaged.status is Status.PASS and averaged.value == pytest.approx(0.6)


def test_error_in_a_tier_propagates_and_stops(counting, ctx: Context) -> None:  # type: ignore[no-untyped-def]
    broken, expensive = counting("cmd", "error"), counting("llm")
    result = evaluate(Cascade(Tier.reject_on_any_fail(broken), Tier.final(expensive)), ctx)
    assert result.status is Status.ERROR
    assert expensive.calls == 0


def test_error_policy_ignore_in_tier_escalates(counting, ctx: Context) -> None:  # type: ignore[no-untyped-def]
    broken, ok, expensive = counting("cmd", "error"), counting("ok"), counting("llm")
    result = evaluate(Cascade(Tier.reject_on_any_fail(broken, ok, errors="ignore"), Tier.final(expensive)), ctx)
    assert result.status is Status.PASS and expensive.calls == 1
    assert result.find("cmd").status is Status.ERROR  # type: ignore[union-attr]


def test_error_policy_fail_in_tier_rejects(counting, ctx: Context) -> None:  # type: ignore[no-untyped-def]
    broken, expensive = counting("cmd", "error"), counting("llm")
    result = evaluate(Cascade(Tier.reject_on_any_fail(broken, errors="fail"), Tier.final(expensive)), ctx)
    assert result.status is Status.FAIL and expensive.calls == 0


def test_abstaining_reject_tier_escalates_but_cannot_pass_alone(counting, ctx: Context) -> None:  # type: ignore[no-untyped-def]
    unsure, final = counting("budget", "abstain"), counting("llm", "fail")
    result = evaluate(Cascade(Tier.reject_on_any_fail(unsure), Tier.final(final)), ctx)
    assert result.status is Status.FAIL and final.calls == 1


def test_earlier_abstentions_are_named_in_the_verdict(counting, ctx: Context) -> None:  # type: ignore[no-untyped-def]
    unsure, final = counting("max_cost", "abstain"), counting("llm")
    result = evaluate(Cascade(Tier.reject_on_any_fail(unsure, name="deterministic"), Tier.final(final)), ctx)
    assert result.status is Status.PASS
    assert result.metadata["abstained"] == ["deterministic/max_cost"]
    assert "undecided in earlier tiers: deterministic/max_cost" in result.reasoning


def test_a_degraded_member_marks_the_cascade_degraded(ctx: Context) -> None:
    from jurybox import Judgment

    def fallback(c: Context) -> Judgment:
        return Judgment.passed(0.5, "neutral score after a parse failure", degraded=True)

    result = evaluate(Cascade(Tier.reject_on_any_fail(fallback), Tier.final(fallback)), ctx)
    assert result.degraded


def test_invalid_cascades_raise(counting) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="last tier of a cascade must be final"):
        Cascade(Tier.reject_on_any_fail(counting("a")))
    with pytest.raises(ValueError, match="only the last tier may be final"):
        Cascade(Tier.final(counting("a")), Tier.final(counting("b")))
    with pytest.raises(ValueError, match="needs at least one tier"):
        Cascade()
    with pytest.raises(ValueError, match="has no judges"):
        Tier.final()
    with pytest.raises(TypeError, match="Tier objects"):
        Cascade(counting("a"))


def test_cascade_nests_inside_a_jury(counting, ctx: Context) -> None:  # type: ignore[no-untyped-def]
    from jurybox import Jury

    cascade = Cascade(Tier.reject_on_any_fail(counting("a")), Tier.final(counting("b")), name="inner")
    result = evaluate(Jury(cascade, counting("c"), name="outer"), ctx)
    assert result.status is Status.PASS
    assert result.children["inner"].decided_by == "tier2:final"
