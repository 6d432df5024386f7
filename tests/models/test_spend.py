"""One spend record: a call, an attempt, a cache hit, tokens and cost are counted the same way everywhere."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jurybox.models import (
    FakeModel,
    MeteredModel,
    ModelResponse,
    RetryPolicy,
    ServerError,
    Spend,
    Usage,
    UsageTracker,
    get_model,
    start_case_spend,
)
from jurybox.stubs import StubServer

counts = st.none() | st.integers(min_value=0, max_value=5000)
answered = st.builds(
    ModelResponse,
    text=st.just("ok"),
    model=st.sampled_from(["a:m", "b:m"]),
    usage=st.builds(Usage, counts, counts),
    cost=st.none() | st.floats(min_value=0, max_value=1),
    cached=st.booleans(),
    attempts=st.integers(min_value=1, max_value=5),
)
failed = st.builds(lambda n: ServerError("boom", provider="p", attempts=n), st.integers(min_value=0, max_value=5))
events = st.lists(answered | failed, max_size=30)


def spend_of(items: list[Any]) -> Spend:
    spend = Spend()
    for item in items:
        if isinstance(item, ModelResponse):
            spend.add(item)
        else:
            spend.fail(item)
    return spend


@settings(max_examples=150, deadline=None)
@given(events)
def test_the_counts_follow_their_definitions(items: list[Any]) -> None:
    spend = spend_of(items)
    replies = [item for item in items if isinstance(item, ModelResponse)]
    errors = [item for item in items if not isinstance(item, ModelResponse)]
    hits = [r for r in replies if r.cached]
    assert spend.calls == len(items) == len(replies) + len(errors)
    assert (spend.cache_hits, spend.failures) == (len(hits), len(errors))
    # A cache hit sends nothing; a failure sent at least one request.
    sent = sum(r.attempts for r in replies if not r.cached) + sum(max(1, e.attempts) for e in errors)
    assert spend.attempts == sent and spend.retries == sent - (len(replies) - len(hits)) - len(errors)
    metered = [r for r in replies if r.usage.total_tokens is not None]
    assert spend.unmetered_calls == len(replies) - len(metered)
    assert spend.tokens == spend.input_tokens + spend.output_tokens == sum(r.usage.total_tokens or 0 for r in metered)
    assert (spend.known_tokens is None) == bool(spend.unmetered_calls)
    assert spend.unpriced_calls == sum(r.cost is None for r in replies)
    assert spend.cost == pytest.approx(sum(r.cost or 0 for r in replies))
    assert (spend.known_cost is None) == (not spend.cost_known) == bool(spend.unpriced_calls)
    data = spend.to_dict()
    assert data["calls"] == spend.calls and data["unpriced_calls"] == spend.unpriced_calls
    assert data["cost_usd"] == round(spend.cost, 8) and "endpoints" not in data


@settings(max_examples=100, deadline=None)
@given(events, st.integers(min_value=0, max_value=30))
def test_parts_merged_are_the_whole(items: list[Any], cut: int) -> None:
    whole = spend_of(items)
    merged = spend_of(items[:cut])
    merged.merge(spend_of(items[cut:]))
    assert merged.cost == pytest.approx(whole.cost)
    assert dataclasses.replace(merged, cost=0.0) == dataclasses.replace(whole, cost=0.0)


async def test_the_meter_and_the_tracker_count_the_same_calls_the_same_way() -> None:
    replies: list[Any] = [
        ModelResponse("a", model="fake:m", usage=Usage(10, 2), cost=0.01, attempts=3),
        ModelResponse("b", model="fake:m", usage=Usage(10, 2), cost=0.0, cached=True),
        ModelResponse("c", model="fake:m", usage=Usage(), cost=None),
        ServerError("down", provider="fake", attempts=2),
    ]
    metered = MeteredModel(FakeModel(replies, name="fake:m"))
    tracker = UsageTracker()
    with tracker:
        case = start_case_spend()
        for _ in range(3):
            await metered.generate([{"role": "user", "content": "x"}])
        with pytest.raises(ServerError):
            await metered.generate([{"role": "user", "content": "x"}])
    assert tracker.total == metered.total == case
    assert tracker.by_model == {"fake:m": case}
    assert case.accounting() == {"calls": 4, "attempts": 6, "retries": 3, "failures": 1, "cache_hits": 1}
    assert (case.cache_hits, case.tokens, case.unmetered_calls, case.unpriced_calls) == (1, 24, 1, 1)


async def test_a_tracker_counts_failures_and_a_fleet_s_requests_by_endpoint() -> None:
    with StubServer("openai", reply="PASS") as one, StubServer("openai", reply="PASS") as two:
        urls = {one.base_url, two.base_url}
        policy = RetryPolicy(max_retries=1, sleep=_no_sleep)
        fleet = get_model(f"openai:m@{one.base_url},{two.base_url}", cache=False, retry=policy)
        tracker = UsageTracker()
        with tracker:
            await fleet.generate([{"role": "user", "content": "a"}])
            one.fail(503, times=5)
            two.fail(503, times=5)
            with pytest.raises(ServerError):
                await fleet.generate([{"role": "user", "content": "b"}])
        await fleet.aclose()
    total = tracker.total
    assert total.accounting() == {"calls": 2, "attempts": 3, "retries": 1, "failures": 1, "cache_hits": 0}
    assert tracker.by_model["openai:m"] == dataclasses.replace(total, endpoints={})
    answered = sum(counts.calls for counts in total.endpoints.values())
    errors = sum(counts.errors for counts in total.endpoints.values())
    assert (answered, errors) == (1, 2) and set(total.endpoints) <= urls
    assert total.to_dict()["endpoints"] == {url: counts.to_dict() for url, counts in total.endpoints.items()}


async def _no_sleep(_: float) -> None:
    return None
