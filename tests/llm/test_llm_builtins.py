"""The built-in judges with a FakeModel: prompts, scoring, options and their validation."""

from __future__ import annotations

import json
from typing import Any

import pytest

from jurybox.core import Context, Status, ToolCall
from jurybox.llm import (
    clarification,
    correctness,
    coverage,
    faithfulness,
    pairwise,
    ranking,
    relevance,
    rubric,
)
from jurybox.models import FakeModel, GenerateRequest


def _user(fake: FakeModel, index: int = 0) -> str:
    return fake.requests[index].messages[-1].content


# --- correctness -----------------------------------------------------------------------------


async def test_correctness_uses_reference_option_or_expected() -> None:
    fake = FakeModel('{"score": 0.6, "reasoning": "half right", "issues": ["no year"]}')
    judgment = await correctness("Paris, since 1190", model=fake)(Context(input="Capital?", output="Paris"))
    assert judgment.status is Status.FAIL  # 0.6 < default threshold 0.7
    assert judgment.metadata["issues"] == ["no year"]
    assert "Paris, since 1190" in _user(fake)
    passing = await correctness(model=fake, threshold=0.5)(Context(input="Capital?", output="Paris", expected="Paris"))
    assert passing.status is Status.PASS


async def test_correctness_without_any_reference_is_an_error_naming_it() -> None:
    fake = FakeModel("{}")
    judgment = await correctness(model=fake)(Context(input="q", output="a"))
    assert judgment.status is Status.ERROR
    assert "reference" in judgment.reasoning
    assert fake.calls == 0


# --- relevance / ranking ---------------------------------------------------------------------


RELEVANT = '{"relevant": true, "confidence": 0.9, "reasoning": "2 of 3 results match"}'


async def test_relevance_reads_sources_with_leniency_limit_and_truncation() -> None:
    fake = FakeModel(RELEVANT)
    judge = relevance("must be about cats", model=fake, min_relevant=0.5, max_results=2, max_chars=10)
    context = Context(input="cat food", sources=("Cats love fish " * 5, "Dog toys", "Third result"))
    judgment = await judge(context)
    assert judgment.status is Status.PASS
    assert judgment.value == pytest.approx(0.9) and judgment.confidence == 0.9
    prompt = _user(fake)
    assert "at least 50% of them" in prompt
    assert "must be about cats" in prompt
    assert "(2 of 3)" in prompt
    assert "Third result" not in prompt
    assert "Cats love " in prompt and "truncated" in prompt
    assert fake.requests[0].json_schema is not None


@pytest.mark.parametrize(
    ("reply", "status", "value"),
    [
        ('{"relevant": true, "confidence": 0.3, "reasoning": "unsure"}', Status.FAIL, 0.3),
        ('{"relevant": false, "confidence": 0.9, "reasoning": "off topic"}', Status.FAIL, 0.1),
        ('{"relevant": false, "confidence": 0.2, "reasoning": "probably fine"}', Status.PASS, 0.8),
    ],
)
async def test_relevance_score_is_the_probability_of_relevance(reply: str, status: Status, value: float) -> None:
    judgment = await relevance(model=FakeModel(reply))(Context(input="q", output="a"))
    assert judgment.status is status
    assert judgment.metadata["value"] == pytest.approx(value)


async def test_relevance_results_from_tool_results_and_output() -> None:
    fake = FakeModel(RELEVANT)
    context = Context(input="q", output="final", tool_calls=(ToolCall("search", result=["hit one", "hit two"]),))
    await relevance(model=fake, results="tool_results")(context)
    assert "hit one" in _user(fake) and "final" not in _user(fake).split("RESULTS")[1]
    await relevance(model=fake)(Context(input="q", output="the output"))
    assert 'label="results 1">\nthe output' in _user(fake, 1)


async def test_relevance_with_no_results_is_an_error() -> None:
    judgment = await relevance(model=FakeModel(RELEVANT), results="sources")(Context(input="q", output="x"))
    assert judgment.status is Status.ERROR
    assert "no results" in judgment.reasoning


async def test_ranking_scores_order() -> None:
    fake = FakeModel('{"score": 0.5, "reasoning": "best result is third", "issues": ["result 3 should be first"]}')
    judgment = await ranking(model=fake)(Context(input="q", sources=("a", "b", "c")))
    assert judgment.status is Status.FAIL
    assert judgment.metadata["issues"] == ["result 3 should be first"]
    assert "first = top" in _user(fake)


# --- coverage --------------------------------------------------------------------------------


def _coverage_reply(found: dict[str, bool]) -> str:
    return json.dumps({"topics": [{"topic": t, "covered": c, "evidence": "..."} for t, c in found.items()]})


async def test_coverage_score_is_the_covered_fraction_with_one_check_per_topic() -> None:
    fake = FakeModel(_coverage_reply({"pricing": True, "Refunds": False, "shipping": True}))
    judgment = await coverage(["pricing", "refunds", "shipping"], model=fake, threshold=0.6)(Context(output="..."))
    assert judgment.value == pytest.approx(2 / 3)
    assert judgment.status is Status.PASS
    assert [(c.name, c.passed) for c in judgment.checks] == [("pricing", True), ("refunds", False), ("shipping", True)]
    assert "- refunds" in _user(fake)


async def test_coverage_missing_topic_in_verdict_is_retried_then_abstains() -> None:
    fake = FakeModel(_coverage_reply({"pricing": True}))
    judgment = await coverage(["pricing", "refunds"], model=fake)(Context(output="..."))
    assert judgment.status is Status.ABSTAIN
    assert "refunds" in judgment.reasoning
    assert fake.calls == 3


# --- rubric ----------------------------------------------------------------------------------


RUBRIC_REPLY = json.dumps(
    {
        "scores": {"completeness": 80, "coherence": 60, "conciseness": 40},
        "reasoning": "solid but long",
        "issues": ["too long"],
        "strengths": ["complete"],
    }
)


async def test_rubric_weighted_score_issues_strengths_and_checks() -> None:
    fake = FakeModel(RUBRIC_REPLY)
    judge = rubric({"completeness": 50, "coherence": 30, "conciseness": 20}, model=fake, be_harsh=True)
    judgment = await judge(Context(input="Summarise", output="..."))
    assert judgment.score is not None
    assert judgment.metadata["value"] == pytest.approx(66.0)  # 0.5*80 + 0.3*60 + 0.2*40
    assert judgment.value == pytest.approx(0.66)
    assert judgment.status is Status.FAIL
    assert judgment.metadata["issues"] == ["too long"] and judgment.metadata["strengths"] == ["complete"]
    assert [c.passed for c in judgment.checks] == [True, False, False]
    assert "Be harsh" in _user(fake) and "completeness (weight 50)" in _user(fake)


async def test_rubric_equal_weights_and_missing_criterion_is_not_a_verdict() -> None:
    judgment = await rubric(["completeness", "coherence"], model=FakeModel(RUBRIC_REPLY), threshold=0.6)(
        Context(output="x")
    )
    assert judgment.value == pytest.approx(0.7)
    missing = await rubric(["accuracy"], model=FakeModel(RUBRIC_REPLY), retries=0)(Context(output="x"))
    assert missing.status is Status.ABSTAIN and "accuracy" in missing.reasoning


# --- faithfulness ----------------------------------------------------------------------------


async def test_faithfulness_supported_fraction_and_hallucinations_as_failed_checks() -> None:
    reply = json.dumps(
        {
            "claims": [
                {"claim": "The Eiffel Tower is in Paris", "supported": True, "source": 1},
                {"claim": "It was built in 1999", "supported": False, "source": None},
            ]
        }
    )
    fake = FakeModel(reply)
    context = Context(input="Tell me", output="...", sources=("The Eiffel Tower is in Paris.", "Built 1887-1889."))
    judgment = await faithfulness(model=fake)(context)
    assert judgment.value == 0.5
    assert judgment.status is Status.FAIL
    assert [c.passed for c in judgment.checks] == [True, False]
    assert 'label="sources 2"' in _user(fake)


async def test_faithfulness_without_sources_is_error_and_empty_claims_is_not_a_pass() -> None:
    no_sources = await faithfulness(model=FakeModel("{}"))(Context(output="x"))
    assert no_sources.status is Status.ERROR and "sources" in no_sources.reasoning
    empty = await faithfulness(["doc"], model=FakeModel('{"claims": []}'), retries=0)(Context(output="x"))
    assert empty.status is Status.ABSTAIN


# --- clarification ---------------------------------------------------------------------------


async def test_clarification_detects_a_question_instead_of_an_answer() -> None:
    asks = FakeModel('{"asks_question": true, "confidence": 0.95, "reasoning": "asks which city"}')
    judgment = await clarification(model=asks)(Context(input="Book a flight", output="Which city do you fly from?"))
    assert judgment.status is Status.PASS
    answers = FakeModel('{"asks_question": false, "confidence": 0.9, "reasoning": "answers"}')
    assert (await clarification(model=answers)(Context(input="2+2?", output="4"))).status is Status.FAIL


# --- pairwise --------------------------------------------------------------------------------


def _pairwise_model(candidate_first: str, baseline_first: str) -> FakeModel:
    def reply(request: GenerateRequest) -> str:
        a_part = request.messages[-1].content.split("RESPONSE A:", 1)[1].split("RESPONSE B:", 1)[0]
        return candidate_first if "CANDIDATE" in a_part else baseline_first

    return FakeModel(reply)


@pytest.mark.parametrize(
    ("first", "second", "status", "label", "bias"),
    [
        ("[[A]]", "[[B]]", Status.PASS, "win", "none"),
        ("[[B]]", "[[A]]", Status.FAIL, "loss", "none"),
        ("[[C]]", "[[C]]", Status.PASS, "tie", "none"),
        ("[[A]]", "[[A]]", Status.ABSTAIN, None, "first"),
        ("[[B]]", "[[B]]", Status.ABSTAIN, None, "second"),
        ("[[A]]", "[[C]]", Status.ABSTAIN, None, "inconsistent"),
    ],
)
async def test_pairwise_runs_both_orders_and_never_lets_position_bias_win(
    first: str, second: str, status: Status, label: str | None, bias: str
) -> None:
    fake = _pairwise_model(first, second)
    judgment = await pairwise("BASELINE", model=fake)(Context(input="q", output="CANDIDATE"))
    assert fake.calls == 2
    assert judgment.metadata["attempts"] == 2 and judgment.metadata["tokens"] is not None
    assert judgment.status is status
    assert judgment.metadata.get("label") == label
    assert judgment.metadata["position_bias"] == bias
    assert set(judgment.children) == {"candidate_first", "baseline_first"}
    if status is Status.ABSTAIN:
        assert judgment.score is None


async def test_pairwise_inconsistent_can_be_a_tie_but_not_a_win() -> None:
    fake = _pairwise_model("[[A]]", "[[A]]")
    judgment = await pairwise("BASELINE", model=fake, on_inconsistent="tie", threshold=0.6)(
        Context(input="q", output="CANDIDATE")
    )
    assert judgment.metadata["label"] == "tie" and judgment.value == 0.5
    assert judgment.status is Status.FAIL


async def test_pairwise_one_order_unreadable_is_not_a_verdict() -> None:
    fake = _pairwise_model("[[A]]", "I cannot decide")
    judgment = await pairwise("BASELINE", model=fake, retries=0)(Context(input="q", output="CANDIDATE"))
    assert judgment.status is Status.ABSTAIN
    assert "baseline-first" in judgment.reasoning


async def test_pairwise_uses_expected_as_baseline_and_errors_without_one() -> None:
    fake = _pairwise_model("[[A]]", "[[B]]")
    judgment = await pairwise(model=fake)(Context(input="q", output="CANDIDATE", expected="old answer"))
    assert judgment.status is Status.PASS
    assert "old answer" in _user(fake)
    missing = await pairwise(model=fake)(Context(input="q", output="CANDIDATE"))
    assert missing.status is Status.ERROR and "baseline" in missing.reasoning


# --- factories: names, kinds, option validation ----------------------------------------------


FACTORIES: list[tuple[Any, dict[str, Any]]] = [
    (correctness, {}),
    (relevance, {}),
    (ranking, {}),
    (coverage, {"topics": ["a"]}),
    (rubric, {"criteria": {"a": 1}}),
    (faithfulness, {}),
    (pairwise, {}),
    (clarification, {}),
]


@pytest.mark.parametrize(("factory", "options"), FACTORIES, ids=lambda f: getattr(f, "__name__", ""))
def test_every_factory_builds_without_a_model_and_has_name_and_kind(factory: Any, options: dict[str, Any]) -> None:
    judge = factory(**options)
    assert judge.name == factory.__name__
    assert judge.kind == "llm"
    assert factory(**options, name="custom").name == "custom"


@pytest.mark.parametrize(
    ("factory", "options", "message"),
    [
        (correctness, {"threshold": 70}, "correctness: threshold"),
        (correctness, {"reference": ""}, "reference"),
        (relevance, {"min_relevant": 30}, "min_relevant"),
        (relevance, {"max_results": 0}, "max_results"),
        (relevance, {"results": "everything"}, "results must be one of"),
        (coverage, {"topics": "pricing"}, "list of strings"),
        (coverage, {"topics": ["a", "A"]}, "distinct"),
        (rubric, {"criteria": {"a": -1}}, "weight of 'a'"),
        (rubric, {"criteria": {"a": 1}, "descriptions": {"b": "x"}}, "unknown criteria"),
        (rubric, {"criteria": {"a": 1}, "be_harsh": "yes"}, "be_harsh"),
        (faithfulness, {"sources": "one doc"}, "sources"),
        (pairwise, {"on_inconsistent": "win"}, "on_inconsistent"),
        (clarification, {"on_conflict": "first"}, "on_conflict"),
    ],
)
def test_bad_options_raise_clear_errors(factory: Any, options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        factory(**options)


def test_unknown_option_is_rejected() -> None:
    with pytest.raises(TypeError, match="refrence"):
        correctness(refrence="x")  # type: ignore[call-arg]
