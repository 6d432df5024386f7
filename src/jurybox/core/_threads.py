"""Threads for user code that may never return: a sync agent or a blocking judge that hangs.

``concurrent.futures.ThreadPoolExecutor`` (and ``asyncio.to_thread``, which uses the
loop's default one) joins every worker thread when the interpreter exits, even after
``shutdown(wait=False)``, and ``asyncio.run`` waits for the default executor's threads
before it returns. A case that timed out on a call that never returns would keep
``jurybox run`` alive after its report, and a CI job with it. These pools use daemon
threads and nobody waits for them: the call is abandoned with the process.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import os
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any, TypeVar

T = TypeVar("T")

_WorkItem = tuple["Future[Any]", Callable[..., Any], tuple[Any, ...], dict[str, Any]]


class DaemonThreadPool(Executor):
    """Up to ``max_workers`` daemon threads that run submitted calls, started as calls need them.

    An ``Executor`` like ``ThreadPoolExecutor`` (``loop.run_in_executor`` and
    ``asyncio.wrap_future`` take its futures), except that the process may exit
    while a call is still running: ``shutdown`` never waits for a running call
    unless asked to, and the interpreter never does.
    """

    def __init__(self, max_workers: int, *, thread_name_prefix: str = "jurybox-thread") -> None:
        if max_workers < 1:
            raise ValueError(f"max_workers must be at least 1, got {max_workers}")
        self._max_workers = max_workers
        self._prefix = thread_name_prefix
        self._work: queue.SimpleQueue[_WorkItem | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._idle = threading.Semaphore(0)  # released by a thread each time it waits for work
        self._lock = threading.Lock()
        self._shut = False

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        future: Future[T] = Future()
        with self._lock:
            if self._shut:
                raise RuntimeError("cannot schedule new calls after shutdown")
            self._work.put((future, fn, args, kwargs))
            # A thread waiting for work takes it; else start one, up to the limit (then it queues).
            if not self._idle.acquire(blocking=False) and len(self._threads) < self._max_workers:
                thread = threading.Thread(target=self._serve, name=f"{self._prefix}-{len(self._threads)}", daemon=True)
                thread.start()
                self._threads.append(thread)
        return future

    def _serve(self) -> None:
        while True:
            item = self._work.get()
            if item is None:  # shutdown: pass the stop on to the next thread
                self._work.put(None)
                return
            self._run(*item)
            del item  # drop the call's references (and its result) before waiting again
            self._idle.release()

    @staticmethod
    def _run(future: Future[Any], fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            result = fn(*args, **kwargs)
        except BaseException as exc:  # handed to the caller, as ThreadPoolExecutor does
            future.set_exception(exc)
        else:
            future.set_result(result)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            self._shut = True
            if cancel_futures:
                while True:
                    try:
                        item = self._work.get_nowait()
                    except queue.Empty:
                        break
                    if item is not None:
                        item[0].cancel()
            self._work.put(None)
            threads = list(self._threads)
        if wait:
            for thread in threads:
                thread.join()


class _Shared:
    """The process's pool for blocking judges, made on first use."""

    pool: DaemonThreadPool | None = None
    lock = threading.Lock()


def _forget_shared_pool() -> None:
    # A forked child (a --workers process) has none of the parent's threads: it starts its own.
    _Shared.pool = None
    _Shared.lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_shared_pool)


def shared_pool() -> DaemonThreadPool:
    """The process's pool for blocking judges, as big as asyncio's default executor."""
    with _Shared.lock:
        if _Shared.pool is None:
            _Shared.pool = DaemonThreadPool(min(32, (os.cpu_count() or 1) + 4), thread_name_prefix="jurybox-judge")
        return _Shared.pool


async def to_daemon_thread(fn: Callable[..., T], /, *args: Any) -> T:
    """``asyncio.to_thread`` on a daemon thread: the context variables go along, a hung call is not waited for."""
    loop = asyncio.get_running_loop()
    call = functools.partial(contextvars.copy_context().run, fn, *args)
    return await loop.run_in_executor(shared_pool(), call)
