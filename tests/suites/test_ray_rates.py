"""``--executor ray``: a 429 seen by one actor pauses the endpoint on every actor for its Retry-After."""

from __future__ import annotations

import asyncio
import functools
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from suite_helpers import stub_reply
from test_ray_executor import Recorder, ray_cluster, suite_text

from jurybox.core import Status
from jurybox.engine import RunOptions, SuiteRunner
from jurybox.executors import RaySettings
from jurybox.executors._ray_rates import RateSignalActor
from jurybox.models import RateState
from jurybox.store import open_store
from jurybox.stubs import StubServer
from jurybox.suites import load_suite

__all__ = ["ray_cluster"]  # the module fixture of test_ray_executor: one local Ray for this module too

CASES = 96
"""Half of them (the listings prompts) reach the LLM judge."""
CONCURRENCY = 4
"""Calls in flight in the whole run (2 per actor)."""
BURST_AFTER = 8
"""Replies the stub gives before its 429, so both actors are busy when it comes."""


async def test_the_signal_actor_answers_a_long_poll_as_soon_as_a_429_is_reported() -> None:
    actor = RateSignalActor()
    assert await actor.wait(0, 0.01) == (0, {})  # nothing yet: answered at the timeout
    waiting = asyncio.create_task(actor.wait(0, 5.0))
    await asyncio.sleep(0.01)
    started = time.monotonic()
    await actor.publish("k", 0, 1.0)
    await actor.publish("k", 0, 0.5)  # the same burst, a shorter pause: no news
    version, changes = await waiting
    assert time.monotonic() - started < 0.5
    assert version == 1 and changes["k"].generation == 1 and 0.9 < changes["k"].pause <= 1.0
    assert await actor.wait(1, 0.01) == (1, {})
    assert isinstance(changes["k"], RateState)


@pytest.mark.ray
@pytest.mark.slow
async def test_a_429_on_one_actor_pauses_that_endpoint_on_both_for_its_retry_after(
    ray_cluster: Any, toy_suite: Callable[[str], Path], tmp_path: Path
) -> None:
    arrivals: list[tuple[float, bool]] = []  # (when a request reached the stub, whether it got the 429)
    replies = 0
    lock = threading.Lock()

    with StubServer("openai", stub_reply, latency=0.05) as stub:

        def reply(body: dict[str, Any]) -> str:
            nonlocal replies
            with lock:
                replies += 1
                if replies == BURST_AFTER:
                    stub.fail(429, retry_after=1)  # one actor gets it; the other must hear
            return stub_reply(body)

        take_fault = stub.state.take_fault

        def take_fault_timed() -> Any:
            fault = take_fault()
            arrivals.append((time.monotonic(), fault is not None))
            return fault

        stub.state.reply = reply
        stub.state.take_fault = take_fault_timed  # type: ignore[method-assign]
        model = f"openai:gpt-4o-mini@{stub.base_url}"
        path = toy_suite(suite_text(CASES, model=model))
        suite = load_suite(path, judge_model=model, concurrency=CONCURRENCY)
        load = functools.partial(load_suite, path, judge_model=model, concurrency=CONCURRENCY)
        with open_store(f"sqlite:///{tmp_path / 'ray.db'}") as store:
            progress = Recorder()
            options = RunOptions(
                concurrency=CONCURRENCY, executor="ray", executor_settings=RaySettings(actors=2, load_suite=load)
            )
            result = await SuiteRunner(suite, options, store=store, progress=progress).run()
            assert store.runs.get(result.run_id).recorded == CASES

    assert result.status == "completed" and not result.worker_errors
    # Every case judged once (the recorder fails on a case heard of twice), the 429s retried away.
    assert sorted(progress.statuses) == [f"case-{i:02d}" for i in range(CASES)]
    assert result.count(Status.PASS) == CASES // 2 and result.count(Status.ERROR) == CASES // 4
    limited = [when for when, got_429 in arrivals if got_429]
    assert len(limited) == 1
    first = limited[0]
    # Then neither actor sends anything to the endpoint until the Retry-After (1 s) is over. The
    # stub notes a request when it starts on it, so the calls already on the wire at the 429 (at
    # most 3: the run keeps 4 in flight) may be noted late on a loaded machine; more cannot be.
    in_window = [round(when - first, 3) for when, _ in arrivals if first + 0.2 <= when < first + 0.95]
    assert len(in_window) <= CONCURRENCY - 1, f"requests during the pause, seconds after the first 429: {in_window}"
    # There was work left to hold back: both actors' calls resumed after the pause.
    assert sum(when >= first + 0.95 for when, _ in arrivals) >= 4
    assert len(arrivals) == CASES // 2 + 1
