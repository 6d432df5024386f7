"""Rate limits shared through Redis (``JURYBOX_RATE_URL``): a 429 in one process pauses another."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from jurybox.models import _rate_signal as rate_signal_module
from jurybox.models import get_model, use_rate_signal
from jurybox.models._rate_signal import rate_board
from jurybox.models._rate_signal_redis import RedisRateSignal
from jurybox.stubs import StubServer

REDIS_URL = os.environ.get("JURYBOX_TEST_REDIS", "redis://127.0.0.1:6379/0")
PROMPT = [{"role": "user", "content": "Grade this."}]

pytestmark = pytest.mark.redis


@pytest.fixture
def url() -> Iterator[str]:
    """The test Redis with a prefix of this test's own; its keys are deleted afterwards."""
    redis = pytest.importorskip("redis", reason='shared rate limits need pip install "jurybox[distributed]"')
    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2)
    try:
        client.ping()
    except redis.RedisError as error:
        pytest.skip(f"Redis at {REDIS_URL} is unreachable: {error}")
    prefix = f"jurybox-test-{uuid.uuid4().hex[:8]}:"
    yield f"{REDIS_URL}?prefix={prefix}"
    use_rate_signal(None)
    for key in client.scan_iter(match=f"{prefix}*"):
        client.delete(key)
    client.close()


def test_two_processes_signals_see_one_generation_per_burst_and_the_longest_pause(url: str) -> None:
    reporter, listener = RedisRateSignal(url), RedisRateSignal(url)
    try:
        assert listener.wait(0, 0.05) == (0, {})
        for pause in (1.0, 0.5, 2.0):  # three 429s of one burst; the last asks for the longest pause
            reporter.publish("k", 0, pause)
        version, changes = 0, {}  # type: ignore[var-annotated]
        deadline = time.monotonic() + 5
        while (not changes or changes["k"].pause < 1.5) and time.monotonic() < deadline:
            version, news = listener.wait(version, 1.0)
            changes.update(news)
        assert changes["k"].generation == 1 and 1.5 < changes["k"].pause <= 2.0
        reporter.publish("k", 1, 0.0)  # a call started after the shrink: a new burst
        _, news = listener.wait(version, 2.0)
        assert news["k"].generation == 2
    finally:
        reporter.close()
        listener.close()


async def test_a_429_in_another_process_pauses_this_one_and_halves_its_limit_once(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JURYBOX_RATE_URL", url)
    monkeypatch.setattr(rate_signal_module, "_settled_in", None)  # read the environment again, as a new process
    with StubServer("openai", reply="fine") as stub:
        here: Any = get_model("openai:m", base_url=stub.base_url, cache=False, concurrency=8)
        await here.generate(PROMPT)  # this process's limiter exists, listening
        assert rate_board() is not None
        limiter = next(iter(here._states.values())).limiter
        stub.fail(429, retry_after=3)
        script = (
            "import asyncio\n"
            "from jurybox.models import RateLimitError, get_model\n"
            f"model = get_model('openai:m', base_url={stub.base_url!r}, cache=False, max_retries=0)\n"
            "try:\n"
            "    asyncio.run(model.generate([{'role': 'user', 'content': 'q'}]))\n"
            "except RateLimitError:\n"
            "    print('429')\n"
        )
        other = await asyncio.create_subprocess_exec(
            sys.executable, "-c", script, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        try:
            async with asyncio.timeout(60):
                while not limiter.paused_until:  # heard of the other process's 429 (while it may still run)
                    await asyncio.sleep(0.01)
            held_until = limiter.paused_until
            assert held_until > time.monotonic()  # heard while its Retry-After (3 s) still ran
        finally:
            out, err = await other.communicate()
        assert out.decode().strip() == "429", err.decode()
        await here.generate(PROMPT)
        assert time.monotonic() >= held_until  # this process's call waited it out too
        requests = len(stub.requests)
    assert requests == 3
    assert (limiter.limit, limiter.shrinks) == (4, 1)
