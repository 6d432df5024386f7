"""Rate signals: a 429 on one model pauses and shrinks every limiter of the same endpoint, once per burst."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest

from jurybox.models import (
    AdaptiveLimiter,
    MemoryRateSignal,
    RateLedger,
    RetryPolicy,
    get_model,
    rate_key,
    use_rate_signal,
)
from jurybox.models._rate_signal import rate_board
from jurybox.stubs import StubServer

PROMPT = [{"role": "user", "content": "Grade this."}]


@pytest.fixture
def signal() -> Iterator[MemoryRateSignal]:
    shared = MemoryRateSignal()
    use_rate_signal(shared)
    yield shared
    use_rate_signal(None)


def timed(stub: StubServer) -> list[float]:
    """When each request reached ``stub`` (monotonic), in the order of ``stub.requests``."""
    arrivals: list[float] = []
    log = stub.state.log

    def log_with_time(request: Any) -> None:
        arrivals.append(time.monotonic())
        log(request)

    stub.state.log = log_with_time  # type: ignore[method-assign]
    return arrivals


def model_for(stub: StubServer, **options: Any) -> Any:
    return get_model("openai:m", base_url=stub.base_url, cache=False, concurrency=8, **options)


def limiter_of(model: Any) -> AdaptiveLimiter:
    limiter: AdaptiveLimiter = next(iter(model._states.values())).limiter
    return limiter


async def until(condition: Any, within: float = 2.0) -> None:
    deadline = time.monotonic() + within
    while not condition():
        assert time.monotonic() < deadline, "the condition did not hold in time"
        await asyncio.sleep(0.005)


def test_the_ledger_counts_one_generation_per_burst_and_keeps_the_longest_pause() -> None:
    ledger = RateLedger()
    assert ledger.report("k", 0, 1.0, now=100.0)
    # Three more 429s from calls started under generation 0: the same burst, nothing new to tell...
    assert not any(ledger.report("k", 0, 0.5, now=100.1) for _ in range(3))
    # ...unless one asks for a longer pause.
    assert ledger.report("k", 0, 2.0, now=100.2)
    ((key, (generation, pause)),) = ledger.since(0, now=101.2).items()
    assert (key, generation) == ("k", 1) and pause == pytest.approx(1.0)
    assert ledger.report("k", 1, 0.0, now=103.0)  # a call started after the shrink: a new burst
    assert ledger.since(0, now=103.0)["k"].generation == 2
    assert ledger.since(ledger.version, now=103.0) == {}
    assert ledger.report("other", 0, 1.0, now=103.0) and set(ledger.since(3, now=103.0)) == {"other"}


async def test_a_429_on_one_model_pauses_the_other_for_the_retry_after_and_halves_it_once(
    signal: MemoryRateSignal,
) -> None:
    with StubServer("openai", reply="fine") as stub:
        arrivals = timed(stub)
        a, b = model_for(stub), model_for(stub)  # two models of one endpoint: two processes' limiters
        await b.generate(PROMPT)  # b's limiter exists before the 429
        stub.fail(429, retry_after=0.6)
        first = asyncio.create_task(a.generate(PROMPT))
        await until(lambda: limiter_of(b).paused_until > 0)  # b heard of a's 429
        await b.generate(PROMPT)
        response = await first
    assert response.text == "fine" and response.attempts == 2
    limited_at = arrivals[1]
    assert len(arrivals) == 4
    # After the 429 neither model sent anything before its Retry-After ended.
    assert min(arrivals[2:]) - limited_at >= 0.55
    assert (limiter_of(b).limit, limiter_of(b).shrinks) == (4, 1)
    assert (limiter_of(a).limit, limiter_of(a).shrinks) == (4, 1)
    assert limiter_of(a).generation == limiter_of(b).generation == 1


async def test_a_burst_of_429s_on_two_models_shrinks_every_limiter_once(signal: MemoryRateSignal) -> None:
    with StubServer("openai", reply="fine", latency=0.05) as stub:
        first, second, bystander = model_for(stub), model_for(stub), model_for(stub)
        await asyncio.gather(*(model.generate(PROMPT) for model in (first, second, bystander)))
        stub.fail(429, retry_after=0.2, times=6)
        # Six calls started together under one limit, split over two "processes": one burst.
        await asyncio.gather(*(model.generate(PROMPT) for model in (first, second) for _ in range(3)))
        await until(lambda: limiter_of(bystander).shrinks > 0)
        await asyncio.sleep(0.05)  # any further (wrong) shrink would have arrived by now
    for model in (first, second, bystander):
        assert (limiter_of(model).limit, limiter_of(model).shrinks) == (4, 1)
    assert len(stub.requests) == 3 + 6 + 6


async def test_another_endpoint_is_not_paused(signal: MemoryRateSignal) -> None:
    with StubServer("openai", reply="fine") as limited, StubServer("openai", reply="fine") as other:
        hit, elsewhere = model_for(limited, retry=RetryPolicy(max_retries=0)), model_for(other)
        await elsewhere.generate(PROMPT)
        limited.fail(429, retry_after=30)
        with pytest.raises(Exception, match="rate limited"):
            await hit.generate(PROMPT)
        started = time.monotonic()
        await elsewhere.generate(PROMPT)
    assert time.monotonic() - started < 0.5
    assert limiter_of(elsewhere).shrinks == 0 and limiter_of(elsewhere).paused_until == 0


async def test_without_a_signal_a_429_touches_only_its_own_limiter() -> None:
    assert rate_board() is None
    with StubServer("openai", reply="fine") as stub:
        arrivals = timed(stub)
        a, b = model_for(stub), model_for(stub)
        await b.generate(PROMPT)
        stub.fail(429, retry_after=0.5)
        first = asyncio.create_task(a.generate(PROMPT))
        await until(lambda: len(arrivals) == 2)
        await b.generate(PROMPT)  # not held: b never hears of a's 429
        await first
    assert arrivals[2] - arrivals[1] < 0.4 and arrivals[3] - arrivals[1] >= 0.45
    assert (limiter_of(a).shrinks, limiter_of(b).shrinks) == (1, 0)
    assert limiter_of(a).paused_until == limiter_of(b).paused_until == 0


async def test_a_limiter_without_a_key_or_signal_ignores_rate_limited() -> None:
    limiter = AdaptiveLimiter(4, key=rate_key("openai", "http://x/v1", "m"))
    generation = await limiter.acquire()
    limiter.release(generation, rate_limited=True)
    limiter.rate_limited(generation, 5.0)
    assert limiter.paused_until == 0 and limiter.limit == 2
    started = time.monotonic()
    limiter.release(await limiter.acquire(), succeeded=True)
    assert time.monotonic() - started < 0.1


async def test_learned_news_pauses_even_a_fixed_limit_and_a_cancelled_wait_frees_its_slot() -> None:
    limiter = AdaptiveLimiter(2, adaptive=False)
    limiter.learn(3, time.monotonic() + 0.3)
    assert limiter.limit == 2 and limiter.generation == 3  # a fixed limit does not shrink; it still pauses
    waiting = asyncio.create_task(limiter.acquire())
    await asyncio.sleep(0.05)
    assert not waiting.done() and limiter.in_flight == 1
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert limiter.in_flight == 0
    started = time.monotonic()
    assert await limiter.acquire() == 3
    assert 0.15 <= time.monotonic() - started <= 0.4
    adaptive = AdaptiveLimiter(16)
    adaptive.learn(2, 0.0)
    adaptive.learn(1, 0.0)  # older news changes nothing
    assert (adaptive.limit, adaptive.shrinks) == (4, 2)


async def test_a_limiter_made_after_the_news_starts_from_it_without_shrinking(signal: MemoryRateSignal) -> None:
    key = rate_key("openai", "http://x/v1", "m")
    signal.publish(key, 0, 0.3)
    await until(lambda: AdaptiveLimiter(4, key=key).generation == 1)
    late = AdaptiveLimiter(4, key=key)
    assert late.limit == 4 and late.paused_until > time.monotonic()


async def test_a_fleet_sends_calls_past_an_endpoint_another_process_was_told_to_rest(
    signal: MemoryRateSignal,
) -> None:
    with StubServer("openai", reply="PASS") as limited, StubServer("openai", reply="PASS") as other:
        fleet: Any = get_model(f"openai:m@{limited.base_url},{other.base_url}", cache=False, concurrency=8)
        await asyncio.gather(*(fleet.generate([{"role": "user", "content": f"warm {i}"}]) for i in range(4)))
        before = len(limited.requests)
        assert before and len(other.requests)  # both endpoints have their limiters on this loop
        # Another process got a 429 from the first endpoint (its key: one endpoint, one model).
        signal.publish(rate_key("openai", limited.base_url, "m"), 0, 0.5)
        resting = limiter_of(fleet.members[0])
        await until(lambda: resting.paused_until > 0)
        started = time.monotonic()
        for index in range(4):
            await fleet.generate([{"role": "user", "content": f"q {index}"}])
        assert time.monotonic() - started < 0.4  # nothing waited out the pause: the calls went elsewhere
        assert len(limited.requests) == before
        assert (resting.limit, resting.shrinks) == (4, 1)
        assert limiter_of(fleet.members[1]).shrinks == 0
