"""The daemon thread pool that runs sync agents and blocking judges: results, errors, limits, no wait at exit."""

from __future__ import annotations

import asyncio
import contextvars
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable

import pytest

from jurybox.core._threads import DaemonThreadPool, to_daemon_thread


def test_calls_return_their_result_or_raise_their_error() -> None:
    pool = DaemonThreadPool(2)
    try:
        assert pool.submit(lambda a, b: a + b, 2, b=3).result(timeout=5) == 5
        with pytest.raises(ZeroDivisionError):
            pool.submit(lambda: 1 / 0).result(timeout=5)
    finally:
        pool.shutdown()


def test_at_most_max_workers_calls_run_at_once_and_the_rest_wait_their_turn() -> None:
    pool = DaemonThreadPool(2)
    release = threading.Event()
    running: list[int] = []
    lock = threading.Lock()

    def call(number: int) -> int:
        with lock:
            running.append(number)
        release.wait(5)
        return number

    futures = [pool.submit(call, number) for number in range(3)]
    _wait_for(lambda: len(running) == 2)
    time.sleep(0.1)  # room for a third thread, were the limit not kept
    assert len(running) == 2 and not futures[2].running()
    release.set()
    assert [f.result(timeout=5) for f in futures] == [0, 1, 2]
    assert len(pool._threads) == 2  # the third call reused a thread once one was free
    pool.shutdown()


def test_threads_are_reused_and_are_daemons() -> None:
    pool = DaemonThreadPool(4)
    for _ in range(10):
        pool.submit(time.sleep, 0).result(timeout=5)
        _wait_for(lambda: pool._idle._value > 0)  # the thread is back waiting for work
    assert len(pool._threads) == 1
    assert all(thread.daemon for thread in pool._threads)
    pool.shutdown()
    assert not pool._threads[0].is_alive()
    with pytest.raises(RuntimeError, match="after shutdown"):
        pool.submit(time.sleep, 0)


def test_shutdown_can_cancel_queued_calls_without_waiting_for_a_running_one() -> None:
    pool = DaemonThreadPool(1)
    release = threading.Event()
    running = pool.submit(release.wait, 5)
    queued = pool.submit(time.sleep, 0)
    _wait_for(running.running)
    pool.shutdown(wait=False, cancel_futures=True)
    assert queued.cancelled() and not running.done()
    release.set()
    assert running.result(timeout=5) is True


def test_to_daemon_thread_carries_the_context_variables() -> None:
    request = contextvars.ContextVar("request", default="none")

    async def main() -> str:
        request.set("case-7")
        return await to_daemon_thread(request.get)

    assert asyncio.run(main()) == "case-7"


def test_a_process_exits_while_a_call_still_hangs() -> None:
    # What ThreadPoolExecutor cannot do: it joins its threads at exit, so a hung agent kept
    # `jurybox run` alive after its report until CI killed it.
    script = textwrap.dedent(
        """
        import time
        from jurybox.core._threads import DaemonThreadPool
        pool = DaemonThreadPool(1)
        pool.submit(time.sleep, 600)
        pool.shutdown(wait=False)
        print("done")
        """
    )
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", script], check=False, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "done", done.stderr
    assert time.monotonic() - started < 30


def _wait_for(condition: Callable[[], bool], seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.01)
