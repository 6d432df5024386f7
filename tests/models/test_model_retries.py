"""Bounded retries with backoff: what is retried, what is not, Retry-After, and the errors raised."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Literal

import pytest
from models_helpers import RecordedSleep

from jurybox.models import (
    AdaptiveLimiter,
    ModelConnectionError,
    ModelTimeoutError,
    QuotaExceededError,
    RateLimitError,
    RequestRejectedError,
    RetryPolicy,
    ServerError,
    get_model,
    parse_retry_after,
)
from jurybox.stubs import StubServer

PROMPT = [{"role": "user", "content": "Grade this."}]
PROVIDERS = ["openai", "anthropic", "ollama"]


def model_for(stub: StubServer, retry: RetryPolicy, **options: object):  # type: ignore[no-untyped-def]
    return get_model(f"{stub.provider}:m", base_url=stub.base_url, retry=retry, cache=False, **options)


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_429_with_retry_after_is_honoured_then_succeeds(
    provider: str, retry: RetryPolicy, sleep: RecordedSleep
) -> None:
    with StubServer(provider, reply="fine") as stub:  # type: ignore[arg-type]
        stub.fail(429, retry_after=7)
        response = await model_for(stub, retry).generate(PROMPT)
    assert response.text == "fine"
    assert len(stub.requests) == 2
    assert sleep.waits == [7.0]  # the provider asked for 7 s; our own backoff (<= 0.5 s) is shorter


async def test_retry_after_http_date_and_ms_forms() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    later = format_datetime(now + timedelta(seconds=30), usegmt=True)
    assert parse_retry_after({"Retry-After": later}, now=now) == 30.0
    assert parse_retry_after({"Retry-After": format_datetime(now - timedelta(seconds=5), usegmt=True)}, now=now) == 0
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({}) is None


async def test_http_date_retry_after_through_the_stub(retry: RetryPolicy, sleep: RecordedSleep) -> None:
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=20), usegmt=True)
    with StubServer("openai", reply="ok") as stub:
        stub.fail(429, retry_after=when)
        await model_for(stub, retry).generate(PROMPT)
    assert 10 <= sleep.waits[0] <= 21  # 20 s from when the date was made, minus the time since


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_500_then_success_with_backoff(provider: str, retry: RetryPolicy, sleep: RecordedSleep) -> None:
    with StubServer(provider, reply="recovered") as stub:  # type: ignore[arg-type]
        stub.fail(500, times=2)
        response = await model_for(stub, retry).generate(PROMPT)
    assert response.text == "recovered"
    assert len(stub.requests) == 3
    assert len(sleep.waits) == 2
    assert 0.25 <= sleep.waits[0] <= 0.5 and 0.5 <= sleep.waits[1] <= 1.0  # exponential, jittered


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_slow_reply_times_out_and_is_retried(provider: str, retry: RetryPolicy) -> None:
    with StubServer(provider, reply="in time") as stub:  # type: ignore[arg-type]
        stub.slow(2.0)
        response = await model_for(stub, retry, timeout=0.3).generate(PROMPT)
    assert response.text == "in time"
    assert len(stub.requests) == 2


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("mid_body", [False, True])
async def test_dropped_connection_is_retried(provider: str, mid_body: bool, retry: RetryPolicy) -> None:
    with StubServer(provider, reply="after the drop") as stub:  # type: ignore[arg-type]
        stub.drop(mid_body=mid_body)
        response = await model_for(stub, retry).generate(PROMPT)
    assert response.text == "after the drop"
    assert len(stub.requests) == 2


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_400_is_not_retried_and_carries_the_provider_message(provider: str, retry: RetryPolicy) -> None:
    with StubServer(provider) as stub:  # type: ignore[arg-type]
        stub.fail(400, times=5)
        with pytest.raises(RequestRejectedError) as caught:
            await model_for(stub, retry).generate(PROMPT)
    assert len(stub.requests) == 1
    error = caught.value
    assert (error.status, error.attempts, error.provider) == (400, 1, provider)
    assert error.provider_message == "stub injected HTTP 400"
    assert "status 400" in str(error) and "stub injected HTTP 400" in str(error)


async def test_insufficient_quota_is_not_retried(retry: RetryPolicy) -> None:
    quota = {
        "error": {
            "message": "You exceeded your current quota, please check your plan and billing details.",
            "type": "insufficient_quota",
            "param": None,
            "code": "insufficient_quota",
        }
    }
    with StubServer("openai") as stub:
        stub.fail(429, body=quota, times=3)
        with pytest.raises(QuotaExceededError) as caught:
            await model_for(stub, retry).generate(PROMPT)
    assert len(stub.requests) == 1
    assert caught.value.code == "insufficient_quota" and caught.value.status == 429
    assert "exceeded your current quota" in str(caught.value)


async def test_attempts_are_bounded(sleep: RecordedSleep) -> None:
    policy = RetryPolicy(max_retries=2, sleep=sleep)
    with StubServer("anthropic") as stub:
        stub.fail(529, times=10)
        with pytest.raises(ServerError) as caught:
            await model_for(stub, policy).generate(PROMPT)
    assert len(stub.requests) == 3
    assert caught.value.attempts == 3 and caught.value.code == "overloaded_error"
    assert len(sleep.waits) == 2


async def test_persistent_rate_limit_raises_rate_limit_error(sleep: RecordedSleep) -> None:
    with StubServer("openai") as stub:
        stub.fail(429, retry_after=1, times=10)
        with pytest.raises(RateLimitError) as caught:
            await model_for(stub, RetryPolicy(max_retries=3, sleep=sleep)).generate(PROMPT)
    assert caught.value.attempts == 4 and caught.value.retry_after == 1.0
    assert all(wait >= 1.0 for wait in sleep.waits)


async def test_retry_after_longer_than_the_cap_gives_up_at_once(sleep: RecordedSleep) -> None:
    with StubServer("openai") as stub:
        stub.fail(429, retry_after=3600)
        with pytest.raises(RateLimitError):
            await model_for(stub, RetryPolicy(max_retry_after=60, sleep=sleep)).generate(PROMPT)
    assert len(stub.requests) == 1 and sleep.waits == []


async def test_timeouts_and_connection_errors_raise_after_the_last_retry(sleep: RecordedSleep) -> None:
    with StubServer("ollama") as stub:
        stub.slow(2.0, times=5)
        with pytest.raises(ModelTimeoutError) as timed_out:
            await model_for(stub, RetryPolicy(max_retries=1, sleep=sleep), timeout=0.2).generate(PROMPT)
    assert timed_out.value.attempts == 2 and timed_out.value.status is None
    with StubServer("openai") as stub:
        stub.drop(times=5)
        with pytest.raises(ModelConnectionError) as dropped:
            await model_for(stub, RetryPolicy(max_retries=1, sleep=sleep)).generate(PROMPT)
    assert dropped.value.attempts == 2


async def test_nothing_listening_is_a_connection_error(sleep: RecordedSleep) -> None:
    with StubServer("ollama") as stub:
        url = stub.base_url
    model = get_model("ollama:m", host=url, retry=RetryPolicy(max_retries=1, sleep=sleep), cache=False)
    with pytest.raises(ModelConnectionError):
        await model.generate(PROMPT)


async def test_sdk_retries_are_off(retry: RetryPolicy) -> None:
    # With a 500 and max_retries=0 there must be exactly one request: no hidden SDK retry.
    providers: tuple[Literal["openai"], Literal["anthropic"]] = ("openai", "anthropic")
    for provider in providers:
        with StubServer(provider) as stub:
            stub.fail(500, times=5)
            with pytest.raises(ServerError):
                await model_for(stub, RetryPolicy(max_retries=0)).generate(PROMPT)
            assert len(stub.requests) == 1


async def test_limiter_halves_once_per_burst_and_grows_back() -> None:
    limiter = AdaptiveLimiter(8)
    generations = [await limiter.acquire() for _ in range(8)]
    for generation in generations[:4]:
        limiter.release(generation, rate_limited=True)  # four 429s from the same wave
    assert limiter.limit == 4 and limiter.shrinks == 1
    for generation in generations[4:]:
        limiter.release(generation, succeeded=True)
    for _ in range(4):
        limiter.release(await limiter.acquire(), succeeded=True)
    assert limiter.limit == 5


async def test_rate_limits_shrink_the_models_concurrency(retry: RetryPolicy) -> None:
    with StubServer("openai", reply="ok") as stub:
        stub.fail(429, times=1)
        model = model_for(stub, retry, concurrency=8)
        await model.generate(PROMPT)
    limiter = next(iter(model._states.values())).limiter
    assert limiter.shrinks == 1 and limiter.limit < 8
