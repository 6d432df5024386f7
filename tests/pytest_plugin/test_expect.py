"""``expect(...)`` chains: hard and soft steps, the confidence threshold, and steps that cannot decide."""

from __future__ import annotations

import json
import warnings
from typing import Any

import pytest

import jurybox.testing._scope as scope_module
from jurybox.core import Context, ToolCall, judge
from jurybox.models import FakeModel, ModelError
from jurybox.testing import (
    JudgeNotConfiguredError,
    JuryboxAssertionError,
    JuryboxWarning,
    TestScope,
    Verdict,
    expect,
)
from jurybox.testing._scope import VERDICT_PROPERTY, WARNING_PROPERTY


def relevance_reply(relevant: bool, confidence: float, reasoning: str) -> str:
    return json.dumps({"relevant": relevant, "confidence": confidence, "reasoning": reasoning})


def properties(request: pytest.FixtureRequest, name: str) -> list[dict[str, Any]]:
    return [json.loads(str(value)) for key, value in request.node.user_properties if key == name]


def test_relevant_output_passes_and_the_chain_continues(request: pytest.FixtureRequest) -> None:
    model = FakeModel(relevance_reply(True, 0.92, "It names the capital."))
    chain = expect("Paris is the capital of France.", judge_model=model).is_relevant_to("the capital of France")
    assert chain.is_similar_to("Paris is the capital of France!") is chain
    assert [v.outcome for v in chain.verdicts] == ["pass", "pass"]
    assert "the capital of France" in model.requests[0].prompt
    assert "Paris is the capital of France." in model.requests[0].prompt
    recorded = properties(request, VERDICT_PROPERTY)
    assert recorded[0]["judge"] == "relevance" and recorded[0]["confidence"] == 0.92


def test_irrelevant_output_fails_with_reasoning_and_confidence() -> None:
    model = FakeModel(relevance_reply(False, 0.9, "It talks about cats."))
    with pytest.raises(JuryboxAssertionError) as failure:
        expect("Cats sleep a lot.", judge_model=model).is_relevant_to("the capital of France")
    message = str(failure.value)
    # The first line is the point: what was asked, what the judge said; then the output.
    first, second = message.splitlines()[:2]
    assert first == (
        "is_relevant_to('the capital of France') failed: relevance said fail (confidence 0.90): It talks about cats."
    )
    assert second == "  output: 'Cats sleep a lot.'"


def test_low_confidence_pass_is_uncertain_not_a_pass() -> None:
    model = FakeModel(relevance_reply(True, 0.55, "Probably."))
    with pytest.raises(JuryboxAssertionError, match=r"uncertain .*under the confidence threshold 0.60, so not a pass"):
        expect("Paris.", judge_model=model).is_relevant_to("the capital of France")
    # A chain may lower its own threshold.
    chain = expect("Paris.", judge_model=model, confidence=0.5).is_relevant_to("the capital of France")
    assert chain.verdicts[0].ok


def test_soft_step_records_a_warning_and_the_test_goes_on(request: pytest.FixtureRequest) -> None:
    model = FakeModel(relevance_reply(False, 0.8, "Off topic."))
    chain = expect("Cats.", judge_model=model).warn_if_irrelevant("the capital of France")
    assert chain.verdicts[0].outcome == "fail" and chain.verdicts[0].soft
    warning = properties(request, WARNING_PROPERTY)
    assert warning == [
        {
            "step": "warn_if_irrelevant",
            "judge": "relevance",
            "outcome": "fail",
            "confidence": 0.8,
            "confidence_threshold": 0.6,
            "score": 0.2,
            "soft": True,
            "reasoning": "Off topic.",
            "model": "fake:model",  # the soft-check line names the judge model
        }
    ]


def test_strict_mode_turns_soft_steps_hard(jurybox_scope: TestScope) -> None:
    jurybox_scope.strict = True
    model = FakeModel(relevance_reply(False, 0.8, "Off topic."))
    with pytest.raises(
        JuryboxAssertionError, match=r"warn_if_irrelevant\('the capital of France'\) failed \(soft check, strict mode\)"
    ):
        expect("Cats.", judge_model=model).warn_if_irrelevant("the capital of France")


def test_soft_step_outside_pytest_is_a_python_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scope_module, "_active", [])
    monkeypatch.delenv("JURYBOX_FAIL_ON_REJECT", raising=False)
    model = FakeModel(relevance_reply(False, 0.8, "Off topic."))
    with pytest.warns(JuryboxWarning, match="warn_if_irrelevant"):
        expect("Cats.", judge_model=model).warn_if_irrelevant("the capital of France")
    monkeypatch.setenv("JURYBOX_FAIL_ON_REJECT", "1")
    with warnings.catch_warnings(), pytest.raises(JuryboxAssertionError):
        expect("Cats.", judge_model=model).warn_if_irrelevant("the capital of France")


def test_no_judge_model_fails_with_how_to_configure(jurybox_scope: TestScope, monkeypatch: pytest.MonkeyPatch) -> None:
    jurybox_scope.judge_model = None
    jurybox_scope.model_factory = None
    with pytest.raises(JudgeNotConfiguredError, match=r"--jurybox-model .*JURYBOX_JUDGE_MODEL"):
        expect("Paris.").is_relevant_to("the capital of France")
    # Soft steps cannot pass without a model either: the warning says why.
    chain = expect("Paris.").warn_if_irrelevant("the capital of France")
    assert chain.verdicts[0].outcome == "error"


def test_fake_model_fixture_becomes_the_judge_model(fake_model: Any) -> None:
    model = fake_model(relevance_reply(True, 0.95, "On topic."))
    expect("Paris.").is_relevant_to("the capital of France")
    assert model.calls == 1


def test_provider_failure_is_an_error_never_a_pass() -> None:
    model = FakeModel(ModelError("HTTP 503 from the provider"))
    with pytest.raises(JuryboxAssertionError, match=r"error .*could not decide.*HTTP 503"):
        expect("Paris.", judge_model=model).is_relevant_to("the capital of France")


def test_unreadable_verdict_abstains_and_fails() -> None:
    model = FakeModel("I think it is fine.")
    with pytest.raises(JuryboxAssertionError, match="abstain"):
        expect("Paris.", judge_model=model).is_correct("Paris", retries=0)


def test_results_chain_judges_ranking_and_relevance_of_the_results() -> None:
    model = FakeModel(
        [
            relevance_reply(True, 0.9, "Both results are about refunds."),
            json.dumps({"score": 0.85, "reasoning": "The policy page comes first."}),
        ]
    )
    results = ["Refund policy: 30 days.", "How to request a refund."]
    chain = expect.results("how do refunds work?", results, judge_model=model)
    chain.is_relevant_to("pages about refunds").has_good_ranking()
    assert [v.judge for v in chain.verdicts] == ["relevance", "ranking"]
    assert "how do refunds work?" in model.requests[0].prompt
    assert "How to request a refund." in model.requests[1].prompt


def test_covers_topics_fails_naming_the_missing_topic() -> None:
    reply = {
        "topics": [
            {"topic": "refund window", "covered": True, "evidence": "30 days"},
            {"topic": "shipping costs", "covered": False, "evidence": "not mentioned"},
        ],
        "reasoning": "Shipping is missing.",
    }
    model = FakeModel(json.dumps(reply))
    with pytest.raises(JuryboxAssertionError, match="Shipping is missing"):
        expect("Refunds within 30 days.", judge_model=model).covers_topics("refund window", "shipping costs")


def test_meets_accepts_a_single_criterion_and_faithfulness_uses_sources() -> None:
    model = FakeModel(
        [
            json.dumps({"scores": {"polite and concise": 90}, "reasoning": "Polite."}),
            json.dumps({"claims": [{"claim": "30 days", "supported": True, "source": 1}], "reasoning": "ok"}),
        ]
    )
    chain = expect("Refunds within 30 days, thank you!", judge_model=model, sources=["Refunds: 30 days."])
    chain.meets("polite and concise").is_faithful_to()
    assert [v.outcome for v in chain.verdicts] == ["pass", "pass"]
    assert "Refunds: 30 days." in model.requests[1].prompt


def test_called_tools_is_exact_by_default() -> None:
    calls = [ToolCall("search", {"q": "refunds"}), ToolCall("open", {"id": 3})]
    chain = expect("done", tool_calls=calls)
    chain.called_tools([{"name": "search", "arguments": {"q": "refunds"}}, {"name": "open", "arguments": {"id": 3}}])
    with pytest.raises(JuryboxAssertionError, match="called_tools"):
        chain.called_tools(["open", "search"])
    chain.called_tools(["search"], mode="subset", args="ignore")


def test_matches_schema_and_similarity() -> None:
    schema = {"type": "object", "required": ["answer"], "properties": {"answer": {"type": "string"}}}
    expect('{"answer": "Paris"}').matches_schema(schema)
    with pytest.raises(JuryboxAssertionError, match="matches_schema"):
        expect('{"answer": 3}').matches_schema(schema)
    with pytest.raises(JuryboxAssertionError, match="is_similar_to"):
        expect("The capital is Paris.").is_similar_to("Berlin is a city in Germany.")
    expect("The capital is Paris.").is_similar_to("The capital is Berlin.", threshold=0.7)


def test_satisfies_any_judge_and_takes_reply_objects() -> None:
    @judge
    def mentions_price(ctx: Context) -> bool:
        return "$" in ctx.output

    class Reply:
        text = "It costs $5."
        tool_calls = (ToolCall("price_lookup"),)

    expect(Reply()).satisfies(mentions_price).called_tools(["price_lookup"])
    with pytest.raises(JuryboxAssertionError, match=r"satisfies\(mentions_price\)"):
        expect("It is cheap.").satisfies(mentions_price)
    with pytest.raises(TypeError, match="expect\\(\\) takes the output"):
        expect(42)


def test_verdict_round_trips_through_json() -> None:
    verdict = Verdict("is_correct", "correctness", "uncertain", 0.4, 0.6, "unsure", soft=False, score=0.7)
    assert Verdict.from_json(verdict.to_json()) == verdict


def test_a_degraded_verdict_is_marked_degraded_wherever_it_is_shown(request: pytest.FixtureRequest) -> None:
    # A neutral fallback score is an explicit policy, but every report must show it as degraded:
    # the step's verdict, its line and the JUnit property must not read as an ordinary pass.
    from jurybox.core import Judgment, NumericScore, Status

    @judge
    def neutral(context: Context) -> Judgment:
        return Judgment(
            Status.PASS,
            score=NumericScore(0.5),
            reasoning="degraded: neutral score 0.5 used because the judge could not decide",
            degraded=True,
        )

    chain = expect("some answer").satisfies(neutral)
    (verdict,) = chain.verdicts
    assert verdict.degraded
    assert "degraded" in verdict.describe().split(":")[0]
    assert properties(request, VERDICT_PROPERTY)[-1]["degraded"] is True
    assert Verdict.from_json(verdict.to_json()) == verdict
