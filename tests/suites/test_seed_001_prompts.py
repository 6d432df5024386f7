"""Seed 001's judging in YAML: a multi-line judge_prompt, its own judge prompt and scoring guide, a follow-up model."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from suite_helpers import TOY_HEADER, grade, grading_model, stub_reply

from jurybox import Context, Status, evaluate
from jurybox.engine import SuiteRunner
from jurybox.models import FakeModel, GenerateRequest
from jurybox.stubs import StubServer
from jurybox.suites import SuiteError, load_suite

SEED_PROMPT = """Evaluate whether the assistant:
1. Asks which listing the user means
2. Does not guess a listing
"""
GUIDE = "0.8+ = good, 0.5-0.8 = partial, < 0.5 = poor"
INSTRUCTIONS = "You are an expert evaluator of a property-management assistant."


def _seen(prompts: list[str]) -> Callable[[GenerateRequest], str]:
    def reply(request: GenerateRequest) -> str:
        prompts.append("\n".join(m.content for m in request.messages))
        return json.dumps({"score": 85, "issues": [], "strengths": ["asks which listing"]})

    return reply


def test_a_multi_line_judge_prompt_with_the_seeds_prompt_and_guide(toy_suite: Callable[[str], Path]) -> None:
    text = (
        TOY_HEADER
        + (
            "defaults:\n  judge_instructions: " + json.dumps(INSTRUCTIONS) + "\n"
            "  scoring_guide: " + json.dumps(GUIDE) + "\n"
            'cases:\n  - name: occupancy\n    prompt: "What\'s the occupancy?"\n    expected_tools: []\n'
            "    judge_prompt: |\n" + "".join(f"      {line}\n" for line in SEED_PROMPT.splitlines())
        )
    ).replace("defaults: {timeout: 5, retries: 0}\n", "")
    prompts: list[str] = []
    suite = load_suite(toy_suite(text), judge_model=FakeModel(_seen(prompts)), check_agent=False)
    criteria = next(j for j in suite.cases[0].judges if j.label == "criteria")
    judgment = evaluate(criteria.judge, Context(input="What's the occupancy?", output="Which listing do you mean?"))
    # The seed's own reply shape, no criterion name repeated: read, and passing at 85/100.
    assert judgment.status is Status.PASS and judgment.value == 0.85
    (prompt,) = prompts
    assert prompt.startswith(INSTRUCTIONS) and "Scoring guide: " + GUIDE in prompt and "0.8 means 80" in prompt
    assert "Asks which listing the user means" in prompt


def test_a_round_overrides_the_case_and_the_case_the_suite(toy_suite: Callable[[str], Path]) -> None:
    text = TOY_HEADER + (
        "cases:\n  - name: c\n    scoring_guide: case guide\n    rounds:\n"
        "      - {prompt: a, criteria: polite, scoring_guide: round guide}\n"
        "      - {prompt: b, criteria: polite}\n"
    )
    suite = load_suite(toy_suite(text), judge_model=grading_model(), check_agent=False)
    first, second = (j for j in suite.cases[0].judges if j.label == "criteria")
    assert "round guide" in first.judge.options["harshness"] and "case guide" in second.judge.options["harshness"]


def test_an_empty_scoring_guide_is_refused_with_its_line(toy_suite: Callable[[str], Path]) -> None:
    text = TOY_HEADER + "cases:\n  - name: c\n    prompt: a\n    criteria: polite\n    scoring_guide: ''\n"
    try:
        load_suite(toy_suite(text), check_agent=False)
    except SuiteError as exc:
        assert "cases[0].scoring_guide" in str(exc)
    else:
        raise AssertionError("an empty scoring guide loaded")


async def test_follow_ups_use_their_own_model(toy_suite: Callable[[str], Path]) -> None:
    asked: list[dict[str, Any]] = []

    def cheap(body: dict[str, Any]) -> str:
        asked.append(body)
        if "You play the user" in json.dumps(body):
            return "last month"
        return stub_reply(body)

    judge_prompts: list[str] = []

    def judge(request: GenerateRequest) -> str:
        judge_prompts.append(request.prompt)
        return grade(request.prompt)

    with StubServer("openai", cheap) as stub:
        text = TOY_HEADER + (
            f"follow_up_model: openai:cheap@{stub.base_url}\n"
            "cases:\n  - name: revenue\n    prompt: 'What was my revenue?'\n    max_follow_ups: 1\n"
            "    judges: [{contains: '$4,200'}]\n"
        )
        suite = load_suite(toy_suite(text), judge_model=FakeModel(judge))
        result = await SuiteRunner(suite).run()
    assert result.records[0].status is Status.PASS  # the cheap model said it was a question and answered it
    assert asked and all(body["model"] == "cheap" for body in asked)
    assert not any("asks_question" in prompt or "You play the user" in prompt for prompt in judge_prompts)


def test_the_dashboard_form_takes_the_judge_prompt_and_guide(toy_suite: Callable[[str], Path]) -> None:
    from jurybox.web._case_form import definition_of, form_of

    form = {**form_of(None, None).values, "name": "occupancy", "prompt": "What's the occupancy?"}
    form["criteria"] = "Asks which listing the user means"
    form["other"] = f"judge_instructions: {json.dumps(INSTRUCTIONS)}\nscoring_guide: {json.dumps(GUIDE)}\n"
    definition, _ = definition_of(form, None)
    assert (definition["judge_instructions"], definition["scoring_guide"]) == (INSTRUCTIONS, GUIDE)
    text = TOY_HEADER + "cases:\n  - " + json.dumps(definition) + "\n"
    suite = load_suite(toy_suite(text), judge_model=grading_model(), check_agent=False)
    criteria = next(j for j in suite.cases[0].judges if j.label == "criteria")
    assert criteria.judge.template.system == INSTRUCTIONS and GUIDE in criteria.judge.options["harshness"]


def test_a_bad_follow_up_model_is_named_with_its_line(toy_suite: Callable[[str], Path]) -> None:
    text = TOY_HEADER + "follow_up_model: nosuchprovider:x\ncases:\n  - name: c\n    prompt: a\n    criteria: polite\n"
    try:
        load_suite(toy_suite(text), check_agent=False)
    except SuiteError as exc:
        assert "suite.yaml:5: follow_up_model: cannot use judge model 'nosuchprovider:x'" in str(exc)
    else:
        raise AssertionError("a bad follow_up_model loaded")
