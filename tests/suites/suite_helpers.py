"""Shared pieces of the suite tests: a scripted judge model and the toy agent's suite header."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from jurybox.agents import looks_like_clarification
from jurybox.models import FakeModel, GenerateRequest

HERE = Path(__file__).parent
REPO = HERE.parent.parent
_CRITERION = re.compile(r"^- (.+) \(weight [\d.]+\): ", re.MULTILINE)
_OUTPUT = re.compile(r'label="output">\n(.*?)\n</data-', re.DOTALL)


def grade(prompt: str) -> str:
    """What a well-behaved judge model answers to each built-in judge prompt (always a good grade)."""
    if "Rubric criteria" in prompt:
        return json.dumps({"scores": {name: 95 for name in _CRITERION.findall(prompt)}, "reasoning": "meets it"})
    if "asks_question" in prompt:
        found = _OUTPUT.search(prompt)
        asks = looks_like_clarification(found.group(1)) if found else False
        return json.dumps({"asks_question": asks, "confidence": 0.9, "reasoning": "read the reply"})
    if "You play the user" in prompt:
        return "June 2026, all properties"
    if "faithful to the SOURCES" in prompt:
        return json.dumps({"claims": [{"claim": "the reply", "supported": True, "source": 1}], "reasoning": "quoted"})
    return json.dumps({"score": 0.95, "reasoning": "matches the reference", "issues": [], "strengths": ["right"]})


def grading_model() -> FakeModel:
    """A FakeModel answering every judge prompt with a passing verdict."""

    def reply(request: GenerateRequest) -> str:
        return grade(request.prompt)

    return FakeModel(reply, name="fake:grader")


def stub_reply(body: dict[str, Any]) -> str:
    """The same grader for the OpenAI stub server (it passes the parsed request body)."""
    return grade("\n\n".join(str(m.get("content", "")) for m in body.get("messages", [])))


TOY_HEADER = """\
name: toy
agent: {python: "toy_agent:make_agent", options: {db: "{db}"}}
database: "sqlite:///{db}"
defaults: {timeout: 5, retries: 0}
"""
