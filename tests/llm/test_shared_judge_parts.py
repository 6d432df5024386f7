"""Judges built from equal options share their immutable parts (the verdict reader), never their state.

A suite of 10,000 ``correctness`` judges used to build and copy 10,000 readers: now one per
(on_conflict, threshold) is shared. Each judge still holds its own reference, name and threshold.
"""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from jurybox.core import Context, Status
from jurybox.llm import correctness, ranking
from jurybox.models import FakeModel

VERDICT = '{"score": 0.8, "reasoning": "close enough", "issues": [], "strengths": []}'


def test_equal_options_share_the_reader_and_other_thresholds_do_not() -> None:
    first, second = correctness("a"), correctness("b")
    assert first.classifier is second.classifier
    strict = correctness("a", threshold=0.9)
    assert strict.classifier is not first.classifier
    assert (first.threshold, strict.threshold) == (0.7, 0.9)
    assert correctness("a", on_conflict="last").classifier.on_conflict == "last"
    assert first.classifier.on_conflict == "abstain"
    assert ranking().classifier is first.classifier  # the same reader: 0..1 score, abstain, 0.7


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(
    references=st.lists(st.text(alphabet="abcxyz ", min_size=1, max_size=12).filter(str.strip), min_size=2, max_size=4),
    threshold=st.sampled_from([0.5, 0.7, 0.85, 0.9]),
)
def test_judges_sharing_a_reader_each_judge_against_their_own_reference(
    references: list[str], threshold: float
) -> None:
    models = [FakeModel(VERDICT) for _ in references]
    judges = [correctness(ref, threshold=threshold, model=model) for ref, model in zip(references, models, strict=True)]
    assert len({id(judge.classifier) for judge in judges}) == 1
    for reference, judge, model in zip(references, judges, models, strict=True):
        judgment = asyncio.run(judge(Context(input="q", output="answer")))
        assert judgment.status is (Status.PASS if threshold <= 0.8 else Status.FAIL)
        assert reference in model.requests[-1].prompt
        assert judge.threshold == threshold
