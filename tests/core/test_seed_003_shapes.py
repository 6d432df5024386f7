"""Seed 003's shapes: fixtures with structured input and expected, and scorers returning {score, message}."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jurybox import Context, Status, evaluate, judge
from jurybox.calibrate import load_labelled_set
from jurybox.core import contexts_from_jsonl

FIXTURES = [
    {"input": {"existing": "User likes tea", "incoming": "User likes tea"}, "expected": {"action": "NOOP"}},
    {"input": {"existing": "User likes tea", "incoming": "User now prefers coffee"}, "expected": {"action": "UPDATE"}},
    {"input": {"existing": "", "incoming": "User has a dog"}, "expected": {"action": "ADD"}},
]


def test_seed_003_fixtures_load_as_recorded_executions() -> None:
    contexts = contexts_from_jsonl(json.dumps(fixture) for fixture in FIXTURES)
    first = contexts[0]
    assert json.loads(first.input) == FIXTURES[0]["input"]
    assert json.loads(first.expected or "") == {"action": "NOOP"}
    assert first.metadata["structured"] == FIXTURES[0]

    @judge
    def same_action(ctx: Context) -> bool:
        return json.loads(ctx.output or "{}").get("action") == ctx.metadata["structured"]["expected"]["action"]

    assert evaluate(same_action, contexts[1].replace(output='{"action": "UPDATE"}')).status is Status.PASS
    assert evaluate(same_action, contexts[1].replace(output='{"action": "NOOP"}')).status is Status.FAIL


def test_seed_003_fixtures_load_as_a_labelled_set(tmp_path: Path) -> None:
    path = tmp_path / "consolidation.jsonl"
    path.write_text("\n".join(json.dumps(f) for f in FIXTURES) + "\n", encoding="utf-8")
    labelled = load_labelled_set(path)
    assert labelled.kind == "category"
    assert [row.label for row in labelled.rows] == ["NOOP", "UPDATE", "ADD"]
    assert json.loads(labelled.rows[1].context.input)["incoming"] == "User now prefers coffee"


def test_a_fixture_without_a_one_field_expected_still_needs_a_label(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"input": {"a": 1}, "expected": {"action": "ADD", "why": "new"}}) + "\n")
    with pytest.raises(Exception, match=r"bad\.jsonl:1:label: missing"):
        load_labelled_set(path)


@given(st.dictionaries(st.text(max_size=5), st.one_of(st.integers(), st.text(max_size=5)), max_size=4))
def test_any_structured_input_round_trips(value: dict[str, object]) -> None:
    (context,) = contexts_from_jsonl([json.dumps({"input": value, "expected": [value]})])
    assert json.loads(context.input) == value and json.loads(context.expected or "") == [value]


@judge
def scorer(ctx: Context) -> dict[str, object]:
    return {"score": 0.9, "message": "within one edit of the reference", "metadata": {"distance": 1}}


def test_a_scorer_returning_score_and_message_is_a_judgment() -> None:
    judgment = evaluate(scorer, Context(output="colour"))
    assert (judgment.status, judgment.value, judgment.reasoning) == (
        Status.PASS,
        0.9,
        "within one edit of the reference",
    )
    assert judgment.metadata["distance"] == 1


@pytest.mark.parametrize(
    ("returned", "reason"),
    [
        ({"message": "forgot the score"}, "no 'score'"),
        ({"score": None, "message": "?"}, "score None"),
        ({"score": 1.5}, "outside its bounds"),
        ({"score": 0.9, "passed": True}, "unknown key(s) 'passed'"),
    ],
)
def test_a_scorer_mapping_that_cannot_be_read_is_an_error(returned: dict[str, object], reason: str) -> None:
    @judge
    def broken(ctx: Context) -> dict[str, object]:
        return returned

    judgment = evaluate(broken, Context(output="x"))
    assert judgment.status is Status.ERROR and reason in judgment.reasoning


def test_a_low_scorer_score_fails_at_the_threshold() -> None:
    @judge(threshold=0.7)
    def low(ctx: Context) -> dict[str, object]:
        return {"score": 0.4, "message": "too far"}

    judgment = evaluate(low, Context(output="x"))
    assert (judgment.status, judgment.reasoning) == (Status.FAIL, "too far")
