"""Judge tokens: a provider that reports no usage makes them unknown, never a silent 0; no calls is a known 0."""

from __future__ import annotations

import io
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console
from suite_helpers import TOY_HEADER, grade

from jurybox._cli.run_messages import print_outro
from jurybox.engine import RunOptions, RunResult, SuiteRunner
from jurybox.models import FakeModel, GenerateRequest, ModelResponse, Spend, Usage
from jurybox.suites import load_suite

JUDGED = (
    TOY_HEADER
    + """\
cases:
  - name: lists
    prompt: "What are my listings?"
    judges:
      - correctness: {reference: "Beach House, Mountain Cabin, City Apartment"}
"""
)

CHECKED_ONLY = (
    TOY_HEADER
    + """\
cases:
  - name: lists
    prompt: "What are my listings?"
    judges: [{contains: "Beach House"}]
"""
)


def usage_model(usage: Usage) -> FakeModel:
    """A judge model that grades well and reports ``usage`` (``Usage()``: the provider said nothing)."""

    def reply(request: GenerateRequest) -> ModelResponse:
        return ModelResponse(text=grade(request.prompt), model="fake:usage", usage=usage)

    return FakeModel(reply, name="fake:usage")


def test_a_call_without_usage_makes_the_total_unknown_and_is_counted() -> None:
    spend = Spend()
    spend.add(ModelResponse(text="a", model="m", usage=Usage(10, 5)))
    spend.add(ModelResponse(text="b", model="m", usage=Usage()))

    assert (spend.calls, spend.tokens, spend.unmetered_calls) == (2, 15, 1)
    assert spend.known_tokens is None
    assert Spend().known_tokens == 0 and Spend().known_cost == 0.0

    total = Spend()
    total.merge(spend)
    total.merge(spend)
    assert (total.calls, total.tokens, total.unmetered_calls) == (4, 30, 2)


async def test_a_provider_without_usage_records_unknown_tokens(toy_suite: Callable[[str], Path]) -> None:
    suite = load_suite(toy_suite(JUDGED), judge_model=usage_model(Usage()))

    result = await SuiteRunner(suite, RunOptions()).run()

    (record,) = result.records
    assert record.judge_calls == 1
    assert record.tokens is None  # unknown, not 0
    assert result.spend.unmetered_calls == 1


async def test_reported_usage_is_recorded(toy_suite: Callable[[str], Path]) -> None:
    suite = load_suite(toy_suite(JUDGED), judge_model=usage_model(Usage(300, 20)))

    result = await SuiteRunner(suite, RunOptions()).run()

    (record,) = result.records
    assert (record.judge_calls, record.tokens) == (1, 320)


async def test_no_judge_calls_is_a_known_zero_like_the_cost(toy_suite: Callable[[str], Path]) -> None:
    result = await SuiteRunner(load_suite(toy_suite(CHECKED_ONLY)), RunOptions()).run()

    (record,) = result.records
    assert (record.judge_calls, record.tokens, record.cost) == (0, 0, 0.0)


def _outro(spend: Spend) -> str:
    now = datetime.now(UTC)
    result = RunResult(
        suite="toy",
        run_id="r1",
        records=[],
        status="completed",
        started_at=now,
        finished_at=now,
        judge_model="fake:usage",
        llm_skipped=False,
        spend=spend,
    )
    out = io.StringIO()
    print_outro(result, Console(file=out, width=200))
    return out.getvalue()


def test_the_run_summary_says_how_many_calls_had_no_usage() -> None:
    spend = Spend()
    spend.add(ModelResponse(text="a", model="m", usage=Usage(1000, 234)))
    spend.add(ModelResponse(text="b", model="m", usage=Usage()))

    assert "judge calls 2 (0 from cache), judge tokens 1,234 (+1 call(s) with unknown usage)" in _outro(spend)
    assert "judge calls 0, judge tokens 0," in _outro(Spend())
