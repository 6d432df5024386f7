"""LLMJudge: retries with the reason, failure paths that never fail open, metadata, self-consistency."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from jurybox.core import Context, Judgment, Jury, Majority, Status, evaluate
from jurybox.llm import Choice, JsonVerdict, LLMJudge, Rating, correctness
from jurybox.models import FakeModel, GenerateRequest, ModelError, ModelResponse, Usage

CTX = Context(input="What is 2+2?", output="4", expected="4")
GOOD = '{"score": 0.9, "reasoning": "matches the reference"}'


def _judge(replies: object, **options: object) -> tuple[LLMJudge, FakeModel]:
    fake = FakeModel(replies)  # type: ignore[arg-type]
    return correctness(model=fake, **options), fake  # type: ignore[arg-type]


async def test_a_readable_verdict_passes_with_tokens_cost_latency_model_and_attempts() -> None:
    response = ModelResponse(
        text=GOOD, model="openai:gpt-4o-mini", usage=Usage(120, 30), latency=0.25, cost=0.0001, cached=True
    )
    judge, fake = _judge(response)
    judgment = await judge(CTX)
    assert judgment.status is Status.PASS
    assert judgment.judge == "correctness"
    assert judgment.value == pytest.approx(0.9)
    meta = judgment.metadata
    assert meta["model"] == "openai:gpt-4o-mini"
    assert meta["tokens"] == {"input": 120, "output": 30, "total": 150}
    assert meta["cost"] == pytest.approx(0.0001)
    assert meta["latency"] == pytest.approx(0.25)
    assert meta["cached"] is True
    assert meta["attempts"] == 1
    assert meta["raw"] == GOOD
    assert fake.requests[0].json_schema is not None  # structured output requested for JSON classifiers
    assert fake.requests[0].temperature == 0.0


async def test_free_text_classifiers_do_not_request_a_json_schema() -> None:
    fake = FakeModel("Rating: [[7]]")
    judgment = await LLMJudge("Rate {{output}}", Rating(), model=fake)(CTX)
    assert judgment.status is Status.PASS
    assert fake.requests[0].json_schema is None


async def test_parse_failure_is_retried_telling_the_model_what_was_wrong() -> None:
    judge, fake = _judge(["I think it is fine.", '{"score": 7, "reasoning": "x"}', GOOD])
    judgment = await judge(CTX)
    assert judgment.status is Status.PASS
    assert judgment.metadata["attempts"] == 3
    assert fake.calls == 3
    retry = fake.requests[1].messages
    assert retry[-2].role == "assistant" and retry[-2].content == "I think it is fine."
    assert "no JSON object" in retry[-1].content
    assert "score" in fake.requests[2].messages[-1].content  # the schema error names the field


async def test_retries_exhausted_is_abstain_with_every_raw_reply_kept() -> None:
    judge, fake = _judge(["garbage", "", "still garbage"])
    judgment = await judge(CTX)
    assert judgment.status is Status.ABSTAIN
    assert judgment.score is None and judgment.value is None
    assert "after 3 attempt(s)" in judgment.reasoning
    assert judgment.metadata["raw_replies"] == ["garbage", "", "still garbage"]
    assert judgment.metadata["raw"] == "still garbage"
    assert judgment.degraded is False
    assert fake.calls == 3


async def test_retries_exhausted_can_be_an_error_instead() -> None:
    judge, _ = _judge("no verdict here", retries=0, on_parse_failure="error")
    judgment = await judge(CTX)
    assert judgment.status is Status.ERROR
    assert judgment.metadata["raw"] == "no verdict here"


@pytest.mark.parametrize("reply", ["", "   ", "<think>still thinking"])
async def test_empty_replies_abstain(reply: str) -> None:
    judge, _ = _judge(reply, retries=1)
    judgment = await judge(CTX)
    assert judgment.status is Status.ABSTAIN
    assert judgment.metadata["attempts"] == 2


@pytest.mark.parametrize(
    "exception", [ModelError("HTTP 500 from provider"), TimeoutError("read timed out"), RuntimeError("boom")]
)
async def test_provider_failure_is_error_never_a_pass(exception: Exception) -> None:
    judge, _ = _judge(exception)
    judgment = await judge(CTX)
    assert judgment.status is Status.ERROR
    assert judgment.score is None
    assert judgment.error is not None and judgment.error.type == type(exception).__name__
    assert str(exception) in judgment.reasoning


async def test_provider_failure_after_a_bad_reply_keeps_the_reply() -> None:
    judge, _ = _judge(["not json", ModelError("connection reset")])
    judgment = await judge(CTX)
    assert judgment.status is Status.ERROR
    assert judgment.metadata["raw_replies"] == ["not json"]


async def test_conflicting_verdicts_with_abstain_policy_are_retried_then_abstain() -> None:
    conflicted = 'Example {"score": 1.0, "reasoning": "e"} vs mine {"score": 0.2, "reasoning": "m"}'
    judge, fake = _judge(conflicted, on_conflict="abstain")
    judgment = await judge(CTX)
    assert judgment.status is Status.ABSTAIN
    assert "conflicting" in judgment.reasoning
    assert fake.calls == 3


async def test_neutral_fallback_only_when_asked_and_marked_degraded() -> None:
    judge, _ = _judge("garbage", fallback_score=0.5, threshold=0.5, retries=0)
    judgment = await judge(CTX)
    assert judgment.degraded is True
    assert judgment.status is Status.PASS
    assert judgment.value == 0.5
    assert judgment.metadata["undecided_status"] == "abstain"
    assert "degraded" in judgment.reasoning
    failing, _ = _judge(ModelError("down"), fallback_score=0.5)  # threshold 0.7 > 0.5
    degraded = await failing(CTX)
    assert degraded.status is Status.FAIL and degraded.degraded is True
    assert degraded.error is not None  # the provider failure is still visible


async def test_no_model_configured_is_an_error_saying_how_to_configure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JURYBOX_JUDGE_MODEL", raising=False)
    judge = correctness()  # building needs no model
    judgment = await judge(CTX)
    assert judgment.status is Status.ERROR
    assert "JURYBOX_JUDGE_MODEL" in judgment.reasoning
    assert "model=" in judgment.reasoning


def test_a_bad_spec_is_an_error_at_call_time_not_build_time() -> None:
    judge = correctness(model="nosuchprovider:x")
    judgment = evaluate(judge, CTX)
    assert judgment.status is Status.ERROR
    assert "nosuchprovider" in judgment.reasoning


async def test_confidence_comes_from_the_model_when_it_gives_one() -> None:
    from jurybox.llm import RelevanceVerdict

    fake = FakeModel('{"relevant": true, "confidence": 0.8, "reasoning": "ok"}')
    judge = LLMJudge("{{output}}", JsonVerdict(RelevanceVerdict, score="relevant"), model=fake)
    assert (await judge(CTX)).confidence == 0.8


async def test_self_consistency_votes_and_reports_agreement() -> None:
    replies = iter(["[[A]]", "[[B]]", "[[A]]", "[[A]]", "no verdict at all"])

    def reply(request: GenerateRequest) -> str:
        return next(replies)

    fake = FakeModel(reply)
    judge = LLMJudge("{{output}}", Choice({"A": 1.0, "B": 0.0}), model=fake, samples=5, retries=0, seed=10)
    judgment = await judge(CTX)
    assert judgment.status is Status.PASS
    assert judgment.metadata["label"] == "A"
    assert judgment.metadata["agreement"] == pytest.approx(3 / 5)
    assert judgment.metadata["decided"] == 4
    assert len(judgment.children) == 5
    assert {r.temperature for r in fake.requests} == {0.7}
    assert judgment.metadata["attempts"] == 5  # usage is summed over the samples
    assert judgment.metadata["tokens"]["total"] > 0
    assert sorted(r.seed for r in fake.requests if r.seed is not None) == [10, 11, 12, 13, 14]
    # The sample without a verdict stays visible instead of vanishing into the agreement figure.
    assert judgment.metadata["undecided_samples"] == {"sample_5": "abstain"}
    assert "1 gave no verdict (sample_5: abstain)" in judgment.reasoning


async def test_self_consistency_split_vote_abstains() -> None:
    replies = iter(["[[A]]", "[[B]]"])
    judge = LLMJudge(
        "{{output}}", Choice({"A": 1.0, "B": 0.0}), model=FakeModel(lambda r: next(replies)), samples=2, retries=0
    )
    judgment = await judge(CTX)
    assert judgment.status is Status.ABSTAIN
    assert "split" in judgment.reasoning


async def test_self_consistency_numeric_uses_the_median() -> None:
    replies = iter(["Rating: [[9]]", "Rating: [[2]]", "Rating: [[8]]"])
    judge = LLMJudge("{{output}}", Rating(), model=FakeModel(lambda r: next(replies)), samples=3)
    judgment = await judge(CTX)
    assert judgment.value == pytest.approx(7 / 9)
    assert judgment.status is Status.PASS
    assert judgment.metadata["agreement"] == pytest.approx(2 / 3)


async def test_self_consistency_mostly_undecided_abstains() -> None:
    replies = iter(["[[A]]", "nothing", "nothing"])
    judge = LLMJudge(
        "{{output}}", Choice({"A": 1.0, "B": 0.0}), model=FakeModel(lambda r: next(replies)), samples=3, retries=0
    )
    assert (await judge(CTX)).status is Status.ABSTAIN


async def test_self_consistency_all_errors_is_error() -> None:
    judge = LLMJudge("{{output}}", Rating(), model=FakeModel(ModelError("down")), samples=3)
    assert (await judge(CTX)).status is Status.ERROR


def test_bad_options_fail_at_build_with_clear_errors() -> None:
    with pytest.raises(ValueError, match="samples"):
        LLMJudge("{{output}}", Rating(), samples=0)
    with pytest.raises(ValueError, match="temperature > 0"):
        LLMJudge("{{output}}", Rating(), samples=3, temperature=0)
    with pytest.raises(ValueError, match="retries"):
        LLMJudge("{{output}}", Rating(), retries=-1)
    with pytest.raises(ValueError, match="fallback_score"):
        LLMJudge("{{output}}", Rating(), fallback_score=5)
    with pytest.raises(ValueError, match="threshold"):
        LLMJudge("{{output}}", Rating(), threshold=70)
    with pytest.raises(TypeError, match="classify"):
        LLMJudge("{{output}}", object())  # type: ignore[arg-type]

    class NoHint:
        threshold = 0.5

        def classify(self, text: str) -> Judgment:
            return Judgment.abstained("never")

    with pytest.raises(TypeError, match="format_hint"):
        LLMJudge("{{output}}", NoHint())  # type: ignore[arg-type]


async def test_llm_judges_work_inside_a_jury_and_an_undecided_member_never_counts_as_pass() -> None:
    jury = Jury(
        correctness(model=FakeModel(GOOD), name="ok"),
        correctness(model=FakeModel("garbage"), name="broken", retries=0),
        correctness(model=FakeModel(ModelError("down")), name="down"),
        voting=Majority(),
    )
    verdict = await jury(CTX)
    assert verdict.status is Status.ERROR  # the provider outage propagates; it is not outvoted into a pass
    assert verdict.children["ok"].status is Status.PASS
    assert verdict.children["broken"].status is Status.ABSTAIN
    assert verdict.children["down"].status is Status.ERROR


def test_judge_objects_have_name_kind_and_threshold() -> None:
    judge = correctness(model=FakeModel(GOOD))
    assert judge.name == "correctness" and judge.kind == "llm" and judge.threshold == 0.7
    assert "correctness" in repr(judge)


async def test_a_crashing_custom_classifier_is_an_error_with_the_reply_kept() -> None:
    class Broken:
        threshold = 0.5
        format_hint = "anything"
        json_schema: Mapping[str, Any] | None = None

        def classify(self, text: str) -> Judgment:
            raise KeyError("oops")

    judgment = await LLMJudge("{{output}}", Broken(), model=FakeModel("reply"))(CTX)
    assert judgment.status is Status.ERROR
    assert "KeyError" in judgment.reasoning
    assert judgment.metadata["raw"] == "reply"
