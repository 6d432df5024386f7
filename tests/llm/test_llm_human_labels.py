"""The pairwise judge on real human-labelled pairs (LLMBar Natural), with scripted judge models.

A FakeModel cannot judge, so these tests check the plumbing on real texts: an
oracle that prefers the human-preferred response must agree with the humans on
every pair in both orders, and a judge that always picks the first slot must
never produce a verdict.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jurybox.core import Context, Status
from jurybox.llm import pairwise
from jurybox.models import FakeModel, GenerateRequest

ROWS: list[dict[str, Any]] = json.loads(
    (Path(__file__).parent / "data" / "llmbar__Natural__dataset.json").read_text(encoding="utf-8")
)[:20]


def _slot_a(request: GenerateRequest) -> str:
    user = request.messages[-1].content
    return user.split("RESPONSE A:", 1)[1].split("RESPONSE B:", 1)[0]


async def test_an_oracle_judge_agrees_with_the_humans_on_every_pair() -> None:
    agree = 0
    for row in ROWS:
        preferred = row["output_1"] if row["label"] == 1 else row["output_2"]

        def oracle(request: GenerateRequest, preferred: str = preferred) -> str:
            return "[[A]]" if preferred.strip()[:200] in _slot_a(request) else "[[B]]"

        judgment = await pairwise(row["output_2"], model=FakeModel(oracle))(
            Context(input=row["input"], output=row["output_1"])
        )
        assert judgment.metadata["position_bias"] == "none"
        human_says_candidate_wins = row["label"] == 1
        agree += (judgment.status is Status.PASS) == human_says_candidate_wins
    assert agree == len(ROWS)


async def test_a_first_slot_biased_judge_never_decides_a_pair() -> None:
    for row in ROWS:
        judgment = await pairwise(row["output_2"], model=FakeModel("After careful thought: [[A]]"))(
            Context(input=row["input"], output=row["output_1"])
        )
        assert judgment.status is Status.ABSTAIN
        assert judgment.metadata["position_bias"] == "first"
