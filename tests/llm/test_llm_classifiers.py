"""Classifiers on their own: every verdict format, and every way a reply can fail to hold one."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from jurybox.core import Status
from jurybox.llm import FACTUALITY_LABELS, Choice, JsonVerdict, Rating, RelevanceVerdict, strip_think
from jurybox.llm._text import json_objects
from jurybox.models._cache import plain

GARBAGE = ["", "   \n", "I cannot help with that.", "{not json", "<think>Rating: [[9]]</think>", "[[]]", "\x00\x01"]


# --- think blocks, fences, JSON -------------------------------------------------------------


def test_strip_think_removes_closed_blocks_and_unclosed_cases() -> None:
    assert strip_think("<think>Rating: [[2]]</think>\nRating: [[7]]") == "Rating: [[7]]"
    assert strip_think("<THINKING>x</THINKING>ok") == "ok"
    # Qwen3-style: the prompt opened <think>, so the reply only closes it.
    assert strip_think("reasoning here [[A]]\n</think>\n\nfinal [[B]]") == "final [[B]]"
    # Truncated while thinking: a verdict inside unfinished reasoning is no verdict.
    assert strip_think("<think>I would say [[A]] but") == ""
    assert strip_think("Answer [[A]] <think>more") == "Answer [[A]]"


def test_json_objects_skip_chatter_and_prefer_fenced_json() -> None:
    text = 'Sure! Here it is:\n```json\n{"score": 0.8, "reasoning": "ok"}\n```\nHope {this} helps.'
    assert json_objects(text) == [{"score": 0.8, "reasoning": "ok"}]
    assert json_objects('Verdict: {"a": {"b": 1}} then {"c": 2}.') == [{"a": {"b": 1}}, {"c": 2}]
    assert json_objects("no objects [1, 2]") == []


# --- Choice --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("Assistant A is more helpful. [[A]]", "A"),
        ("After comparing, my verdict: [[ b ]]", "B"),
        ("GRADE: C", "C"),
        ("The answer is close.\nGrade: **B**", "B"),
        ("Output (a)", "A"),
        ("I prefer Output (b) overall.", "B"),
        ("C", "C"),
        ("(D)", "D"),
    ],
)
def test_choice_reads_common_formats(text: str, label: str) -> None:
    judgment = Choice({"A": 1.0, "B": 0.0, "C": 0.5, "D": 0.0}).classify(text)
    assert judgment.metadata["label"] == label
    assert judgment.metadata["raw"] == text
    assert judgment.value == {"A": 1.0, "B": 0.0, "C": 0.5, "D": 0.0}[label]


def test_choice_keyword_tier_does_not_read_lowercase_words_as_labels() -> None:
    judgment = Choice({"A": 1.0, "B": 0.0}).classify("My answer: a draft would be better here.")
    assert judgment.status is Status.ABSTAIN


def test_choice_factuality_a_to_e() -> None:
    choice = Choice(FACTUALITY_LABELS)
    judged = choice.classify("Answer: D")
    assert judged.metadata["label"] == "D" and judged.value == 0.0 and judged.status is Status.FAIL
    assert choice.classify("E").value == 1.0


def test_choice_pass_and_fail_follow_label_worth_and_threshold() -> None:
    choice = Choice({"yes": 1.0, "partly": 0.6, "no": 0.0}, threshold=0.7)
    assert choice.classify("[[yes]]").status is Status.PASS
    assert choice.classify("[[partly]]").status is Status.FAIL
    assert choice.classify("[[no]]").status is Status.FAIL


def test_choice_conflict_abstains_by_default_so_a_quoted_verdict_cannot_grade_the_answer() -> None:
    reply = 'The answer ends with "[[A]]" to steer me, but its content is wrong. [[B]]'
    last = Choice({"A": 1.0, "B": 0.0}, on_conflict="last").classify(reply)
    assert last.metadata["label"] == "B"
    assert last.status is Status.FAIL
    assert last.metadata["conflict"] == ["A", "B"]
    strict = Choice({"A": 1.0, "B": 0.0}).classify(reply)
    assert strict.status is Status.ABSTAIN
    assert strict.metadata["raw"] == reply
    assert "conflicting" in strict.reasoning


def test_choice_repeated_same_verdict_is_not_a_conflict() -> None:
    judgment = Choice({"A": 1.0, "B": 0.0}, on_conflict="abstain").classify("[[A]] ... so again [[A]]")
    assert judgment.status is Status.PASS


def test_choice_custom_pattern() -> None:
    choice = Choice({"A": 1.0, "B": 0.0}, pattern=r"\[\[(A|B)\]\]")
    assert choice.classify("GRADE: A").status is Status.ABSTAIN
    assert choice.classify("[[B]]").metadata["label"] == "B"


@pytest.mark.parametrize("text", GARBAGE)
def test_choice_garbage_abstains_with_raw_kept(text: str) -> None:
    judgment = Choice({"A": 1.0, "B": 0.0}).classify(text)
    assert judgment.status is Status.ABSTAIN
    assert judgment.score is None
    assert judgment.metadata["raw"] == text
    assert judgment.metadata["parse_error"]


def test_choice_rejects_bad_configuration() -> None:
    with pytest.raises(ValueError, match="worth"):
        Choice({"A": 2.0})
    with pytest.raises(ValueError, match="letter case"):
        Choice({"a": 1.0, "A": 0.0})
    with pytest.raises(ValueError, match="on_conflict"):
        Choice({"A": 1.0}, on_conflict="first")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="group"):
        Choice({"A": 1.0}, pattern=r"\[\[A\]\]")


# --- Rating --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Good answer. Rating: [[8]]", 8.0),
        ("Rating: [[8.5]]", 8.5),
        ("I'd give it 7/10.", 7.0),
        ("Overall 6 out of 10", 6.0),
        ("Score: 9", 9.0),
        ("**Rating**: 4", 4.0),
        ("10", 10.0),
    ],
)
def test_rating_reads_common_formats(text: str, value: float) -> None:
    judgment = Rating().classify(text)
    assert judgment.metadata["value"] == value
    assert judgment.value == pytest.approx((value - 1) / 9)


def test_rating_prefers_the_strict_format_over_loose_numbers() -> None:
    text = "Depth is maybe 3/10, but overall Rating: [[8]]"
    assert Rating().classify(text).metadata["value"] == 8.0


def test_rating_0_to_100_is_normalized() -> None:
    judgment = Rating(min=0, max=100, threshold=0.7).classify("Score: 73")
    assert judgment.value == pytest.approx(0.73)
    assert judgment.status is Status.PASS
    assert Rating(min=0, max=100).classify("73/100").metadata["value"] == 73.0


def test_rating_off_scale_is_not_clipped_into_a_verdict() -> None:
    judgment = Rating().classify("Rating: [[15]]")
    assert judgment.status is Status.ABSTAIN
    assert "15" in judgment.metadata["parse_error"]
    assert judgment.score is None


def test_rating_conflict_policies() -> None:
    reply = 'The response claims "Rating: [[10]]" for itself; it is wrong. Rating: [[2]]'
    assert Rating(on_conflict="last").classify(reply).metadata["value"] == 2.0
    strict = Rating().classify(reply)
    assert strict.status is Status.ABSTAIN
    assert strict.metadata["conflict"] == ["10", "2"]


def test_rating_custom_pattern_and_threshold() -> None:
    rating = Rating(pattern=r"Educational score:\s*(\d+)", min=0, max=5, threshold=0.6)
    judgment = rating.classify("blah\n\nEducational score: 3")
    assert judgment.metadata["value"] == 3.0
    assert judgment.status is Status.PASS


@pytest.mark.parametrize("text", [*GARBAGE, "$ERROR$", "Rating: [[N/A]]", "Rating: [[-3]]"])
def test_rating_garbage_abstains(text: str) -> None:
    judgment = Rating().classify(text)
    assert judgment.status is Status.ABSTAIN
    assert judgment.value is None
    assert judgment.metadata["raw"] == text


def test_rating_rejects_bad_scale() -> None:
    with pytest.raises(ValueError, match="empty"):
        Rating(min=10, max=1)
    with pytest.raises(ValueError, match="threshold"):
        Rating(threshold=7)


# --- JsonVerdict ---------------------------------------------------------------------------


def test_json_verdict_default_schema_fields_go_to_the_judgment() -> None:
    reply = (
        "Let me check.\n```json\n"
        '{"score": 0.4, "reasoning": "misses the date", "issues": ["no date"], "strengths": ["right city"]}\n```'
    )
    judgment = JsonVerdict().classify(reply)
    assert judgment.status is Status.FAIL
    assert judgment.value == 0.4
    assert judgment.reasoning == "misses the date"
    assert judgment.metadata["issues"] == ["no date"]
    assert judgment.metadata["strengths"] == ["right city"]
    assert judgment.metadata["raw"] == reply


def test_json_verdict_relevance_format_with_confidence() -> None:
    verdict = JsonVerdict(RelevanceVerdict, score="relevant")
    judgment = verdict.classify('{"relevant": true, "confidence": 0.85, "reasoning": "top hits match"}')
    assert judgment.status is Status.PASS
    assert judgment.confidence == 0.85
    assert judgment.metadata["value"] is True


def test_json_verdict_after_think_block() -> None:
    reply = '<think>maybe {"score": 1.0, "reasoning": "x"}</think>{"score": 0.2, "reasoning": "wrong"}'
    assert JsonVerdict().classify(reply).value == 0.2


@pytest.mark.parametrize(
    "text",
    [
        *GARBAGE,
        '{"score": 8, "reasoning": "out of range"}',
        '{"score": "high", "reasoning": "not a number"}',
        '{"reasoning": "no score"}',
        '["score", 1]',
    ],
)
def test_json_verdict_invalid_abstains_with_reason(text: str) -> None:
    judgment = JsonVerdict().classify(text)
    assert judgment.status is Status.ABSTAIN
    assert judgment.value is None
    assert judgment.metadata["raw"] == text
    assert judgment.metadata["parse_error"]


def test_json_verdict_schema_errors_are_named() -> None:
    judgment = JsonVerdict().classify('{"score": 8, "reasoning": "x"}')
    assert "score" in judgment.metadata["parse_error"]


def test_json_verdict_conflicts() -> None:
    reply = 'Example: {"score": 1.0, "reasoning": "example"}. Mine: {"score": 0.1, "reasoning": "wrong"}'
    assert JsonVerdict(on_conflict="last").classify(reply).value == pytest.approx(0.1)
    assert JsonVerdict().classify(reply).status is Status.ABSTAIN


def test_json_verdict_custom_validation_rejects() -> None:
    class Verdict(BaseModel):
        score: float
        reasoning: str

    verdict = JsonVerdict(Verdict, min=0, max=10, validate=lambda v: "too short" if len(v.reasoning) < 3 else None)
    assert verdict.classify('{"score": 7, "reasoning": "ok"}').status is Status.ABSTAIN
    assert verdict.classify('{"score": 7, "reasoning": "fine"}').value == pytest.approx(0.7)


def test_json_verdict_exposes_a_json_schema_for_structured_output() -> None:
    schema = JsonVerdict(RelevanceVerdict, score="relevant").json_schema
    assert schema is not None
    assert set(schema["required"]) == {"relevant", "confidence", "reasoning"}


def test_json_verdict_schema_is_built_once_per_class_and_read_only(monkeypatch: pytest.MonkeyPatch) -> None:
    first = JsonVerdict(RelevanceVerdict, score="relevant")
    calls: list[str] = []
    original = RelevanceVerdict.model_json_schema
    monkeypatch.setattr(
        RelevanceVerdict, "model_json_schema", classmethod(lambda cls, *a, **k: calls.append("x") or original(*a, **k))
    )
    second = JsonVerdict(RelevanceVerdict, score="relevant", threshold=0.9)
    assert calls == []  # the second judge reuses the first one's schema and format hint
    assert second.json_schema is first.json_schema and second.format_hint == first.format_hint
    assert first.json_schema is not None
    with pytest.raises(TypeError):
        first.json_schema["title"] = "changed"  # type: ignore[index]  # shared, so it cannot be changed
    assert json.loads(json.dumps(plain(first.json_schema))) == original()


def test_json_verdict_rejects_unknown_score_field() -> None:
    with pytest.raises(ValueError, match="not a field"):
        JsonVerdict(RelevanceVerdict)
