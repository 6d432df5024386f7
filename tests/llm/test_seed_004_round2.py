"""Seed 004, round 2: templates from files and package resources, a plain function as the judge model, metadata keys."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jurybox import Context, Status, evaluate
from jurybox.core import MetadataKey
from jurybox.llm import JsonVerdict, LLMJudge, Template, TemplateError, correctness
from jurybox.models import FunctionModel

PROMPT = 'Is {{output}} a polite answer to {{input}}? Reply with JSON: {"score": 0..1, "reasoning": "..."}'
GOOD = json.dumps({"score": 0.9, "reasoning": "says please"})


def ask(prompt: str) -> str:
    """A team's own LLM call, as a plain function."""
    return GOOD if "please" in prompt else json.dumps({"score": 0.1, "reasoning": "curt"})


def test_a_template_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "polite.txt"
    path.write_text(PROMPT, encoding="utf-8")
    template = Template.from_file(path, system="You grade customer support replies.")
    judge = LLMJudge(template, JsonVerdict(), model=ask, name="polite")
    judgment = evaluate(judge, Context(input="refund?", output="Yes, please send the receipt."))
    assert judgment.status is Status.PASS and template.variables == ("output", "input")
    assert template.system == "You grade customer support replies."


def test_a_template_from_a_package_resource(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "support_prompts"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "polite.txt").write_text(PROMPT, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    template = Template.from_resource("support_prompts", "polite.txt")
    assert template.user == PROMPT


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda tmp: Template.from_file(tmp / "missing.txt"), "cannot read template"),
        (lambda tmp: Template.from_resource("no_such_package_here", "x.txt"), "no_such_package_here/x.txt"),
        (lambda tmp: Template.from_file(_written(tmp / "empty.txt", b"  \n")), "is empty"),
        (lambda tmp: Template.from_file(_written(tmp / "bin.txt", b"\xff\xfe")), "not UTF-8"),
        (lambda tmp: Template.from_file(_written(tmp / "big.txt", b"a" * 1_000_001)), "the limit is 1,000,000"),
    ],
)
def test_a_template_file_that_cannot_be_used_is_named(tmp_path: Path, make: object, message: str) -> None:
    with pytest.raises(TemplateError, match=message):
        make(tmp_path)  # type: ignore[operator]


def _written(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_a_plain_function_is_a_judge_model_with_unknown_cost() -> None:
    judgment = evaluate(correctness("please", model=ask), Context(input="q", output="Yes, please."))
    assert judgment.status is Status.PASS
    assert judgment.metadata[MetadataKey.MODEL] == "function:ask"
    assert judgment.metadata[MetadataKey.COST] is None and judgment.metadata[MetadataKey.TOKENS] is None


async def test_an_async_function_and_a_broken_one() -> None:
    async def ask_async(prompt: str) -> str:
        return GOOD

    def broken(prompt: str) -> str:
        raise ConnectionError("the LLM is down")

    assert (await correctness("x", model=ask_async)(Context(input="q", output="x"))).status is Status.PASS
    failed = await correctness("x", model=broken, retries=0)(Context(input="q", output="x"))
    assert failed.status is Status.ERROR and "the LLM is down" in failed.reasoning
    with pytest.raises(TypeError, match="needs a callable"):
        FunctionModel("not a function")  # type: ignore[arg-type]


def test_metadata_keys_are_the_strings_judges_write() -> None:
    assert MetadataKey.MODEL == "model" and MetadataKey.ISSUES == "issues"
    reply = json.dumps({"score": 0.2, "reasoning": "wrong", "issues": ["says 60 days"], "strengths": []})
    judgment = evaluate(correctness("30 days", model=lambda prompt: reply), Context(input="q", output="60 days"))
    assert judgment.metadata[MetadataKey.ISSUES] == ["says 60 days"]
    assert judgment.metadata[MetadataKey.RAW] == reply
