"""Relevance judging shows what it says by default: at most 10 results of 200 characters each (seed 000)."""

from __future__ import annotations

import re

from jurybox.core import Context, Status
from jurybox.llm import relevance
from jurybox.models import FakeModel

RELEVANT = '{"relevant": true, "confidence": 0.9, "reasoning": "the pooling results match"}'


def _prompt(fake: FakeModel) -> str:
    return "\n".join(str(message.content) for message in fake.requests[0].messages)


async def test_defaults_show_ten_results_cut_to_200_characters() -> None:
    fake = FakeModel(RELEVANT)
    results = tuple(f"result {index:02d} " + "x" * 400 + f" END{index:02d}" for index in range(12))
    judgment = await relevance(model=fake)(Context(input="connection pooling", sources=results))
    assert judgment.status is Status.PASS
    prompt = _prompt(fake)
    assert "(10 of 12)" in prompt
    assert "result 09" in prompt and "result 10" not in prompt
    # Each shown result: its first 200 characters, then a visible note of what was cut.
    assert not re.search(r"END\d\d", prompt)
    notes = re.findall(r"\[\.\.\. truncated, (\d+) more characters\]", prompt)
    assert notes == [str(len(results[0]) - 200)] * 10


async def test_the_limits_are_configurable() -> None:
    fake = FakeModel(RELEVANT)
    results = tuple(f"result {index} " + "y" * 300 for index in range(12))
    await relevance(model=fake, max_results=12, max_chars=1000)(Context(input="q", sources=results))
    prompt = _prompt(fake)
    assert "(12)" in prompt and "truncated" not in prompt and "result 11" in prompt
