"""The parser corpus: real judge outputs (MT-Bench GPT-4 judgments, Qwen3 think-tag replies).

Every rating or verdict a human can read must come out exactly as the source
recorded it (its ``score`` / ``g1_winner`` / ``g2_winner`` field); every
``$ERROR$`` row must be ABSTAIN, never a score. See tests/data/SOURCES.md.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from jurybox.core import Context, Status
from jurybox.llm import Choice, Material, Rating, pairwise, read_verdict
from jurybox.models import FakeModel, GenerateRequest

DATA = Path(__file__).resolve().parents[1] / "data" / "judge_outputs"
SINGLE = [json.loads(line) for line in (DATA / "fastchat_mtbench_gpt4_single__subset.jsonl").read_text().splitlines()]
PAIRS = [json.loads(line) for line in (DATA / "fastchat_mtbench_gpt4_pair__subset.jsonl").read_text().splitlines()]
QWEN = json.loads((DATA / "inference-hive__qwen3-4b_think_tag_grader_examples.json").read_text())["examples"]

# The MT-Bench single-grading prompt asks for "Rating: [[n]]" on 1..10.
MT_BENCH_RATING = Rating(min=1, max=10)
MT_BENCH_PAIR = Choice({"A": 1.0, "B": 0.0, "C": 0.5})
# FastChat stores the winner of the swapped game (g2) already mapped back to the models.
G1_WINNER = {"A": "model_1", "B": "model_2", "C": "tie"}
G2_WINNER = {"A": "model_2", "B": "model_1", "C": "tie"}


def _row_id(row: dict[str, Any]) -> str:
    return f"q{row['question_id']}-t{row['turn']}-{row.get('model', row.get('model_1'))}"


def test_corpus_is_the_expected_real_data() -> None:
    assert len(SINGLE) == 88
    assert len(PAIRS) == 36
    assert sum(row["score"] == -1 for row in SINGLE) == 4
    assert len(QWEN) == 2


@pytest.mark.parametrize("row", [r for r in SINGLE if r["score"] != -1], ids=_row_id)
def test_every_readable_single_rating_is_extracted_exactly(row: dict[str, Any]) -> None:
    judgment = MT_BENCH_RATING.classify(row["judgment"])
    assert judgment.status.decided
    assert judgment.metadata["value"] == row["score"]
    assert judgment.value == pytest.approx((row["score"] - 1) / 9)
    assert judgment.metadata["raw"] == row["judgment"]


@pytest.mark.parametrize("row", [r for r in SINGLE if r["score"] == -1], ids=_row_id)
def test_every_error_row_is_abstain_never_a_score(row: dict[str, Any]) -> None:
    assert row["judgment"] == "$ERROR$"
    for classifier in (MT_BENCH_RATING, Rating(min=0, max=100), MT_BENCH_PAIR):
        judgment = classifier.classify(row["judgment"])
        assert judgment.status is Status.ABSTAIN
        assert judgment.score is None
        assert judgment.metadata["raw"] == "$ERROR$"


def _pair_games() -> list[tuple[str, str, str]]:
    games = []
    for row in PAIRS:
        games.append((_row_id(row) + "-g1", row["g1_judgment"], row["g1_winner"]))
        games.append((_row_id(row) + "-g2", row["g2_judgment"], row["g2_winner"]))
    return games


@pytest.mark.parametrize(("game", "text", "winner"), _pair_games(), ids=[g[0] for g in _pair_games()])
def test_every_pairwise_verdict_matches_the_recorded_winner(game: str, text: str, winner: str) -> None:
    judgment = MT_BENCH_PAIR.classify(text)
    if winner == "error":
        assert text == "$ERROR$"
        assert judgment.status is Status.ABSTAIN
        assert judgment.score is None
        return
    mapping = G1_WINNER if game.endswith("g1") else G2_WINNER
    assert mapping[judgment.metadata["label"]] == winner


def _material(prompt: str) -> Material:
    """The question and the answer(s) a FastChat prompt showed the judge: what its reply must not repeat."""
    shown = re.finditer(r"(?:\[|<\|)The Start of ([^\]|]*)(?:\]|\|>)\n(.*?)\n(?:\[|<\|)The End of \1", prompt, re.S)
    blocks = [(found.group(1), found.group(2)) for found in shown]
    question = re.search(r"\[Question\]\n(.*?)\n\n", prompt, re.S)
    return Material(blocks + ([("question", question.group(1))] if question else []))


def test_with_the_answers_as_material_every_real_verdict_reads_the_same() -> None:
    """No over-abstaining on real honest judgments: 153 GPT-4 replies, read with the answers they judged."""
    read = 0
    for row in [r for r in SINGLE if r["score"] != -1]:
        material = _material(row["user_prompt"])
        assert material.labels, row["question_id"]
        assert read_verdict(MT_BENCH_RATING, row["judgment"], material).metadata["value"] == row["score"]
        read += 1
    for row in PAIRS:
        for game, mapping in (("g1", G1_WINNER), ("g2", G2_WINNER)):
            if row[f"{game}_winner"] == "error":
                continue
            judgment = read_verdict(MT_BENCH_PAIR, row[f"{game}_judgment"], _material(row[f"{game}_user_prompt"]))
            assert mapping[judgment.metadata["label"]] == row[f"{game}_winner"]
            read += 1
    assert read == 153


@pytest.mark.parametrize("example", QWEN, ids=lambda e: e["source_commit"][:8])
def test_qwen3_think_tag_replies_parse_after_stripping_think(example: dict[str, Any]) -> None:
    content = example["content"]
    assert content.startswith("<think>")
    judgment = Rating(min=0, max=5).classify(content)
    assert judgment.status is Status.FAIL
    assert judgment.metadata["value"] == 0.0
    # The think block says "points 1 to 5" and "point is 1": none of it may be read as the score.
    assert judgment.metadata.get("conflict") is None
    # Without the closing part of the reply, only unfinished reasoning is left: no verdict.
    truncated = content.split("</think>")[0]
    assert Rating(min=0, max=5).classify(truncated).status is Status.ABSTAIN


async def test_pairwise_judge_replays_mt_bench_games_and_reports_position_bias() -> None:
    """Each recorded game pair replayed through the pairwise judge: FastChat's final verdict, or no win."""
    for row in [r for r in PAIRS if "error" not in (r["g1_winner"], r["g2_winner"])]:

        def reply(request: GenerateRequest, row: dict[str, Any] = row) -> str:
            # The candidate is model_1; "candidate first" is FastChat's g1 game, the other order its g2.
            key = "g1_judgment" if "CANDIDATE-TEXT" in _first_response(request) else "g2_judgment"
            return str(row[key])

        judge = pairwise(baseline="BASELINE-TEXT", model=FakeModel(reply))
        judgment = await judge(Context(input="q", output="CANDIDATE-TEXT"))
        g1, g2 = row["g1_winner"], row["g2_winner"]
        if g1 == g2:
            expected = {"model_1": "win", "model_2": "loss", "tie": "tie"}[g1]
            assert judgment.metadata["label"] == expected, row["question_id"]
            assert judgment.metadata["position_bias"] == "none"
        else:
            # FastChat calls these "inconsistent"; jurybox never turns them into a win.
            assert judgment.status is Status.ABSTAIN
            assert judgment.score is None
            assert judgment.metadata["position_bias"] in ("first", "second", "inconsistent")


def _first_response(request: GenerateRequest) -> str:
    user = request.messages[-1].content
    return user.split("RESPONSE A:", 1)[1].split("RESPONSE B:", 1)[0]
