"""The batched writer: finished records go to the store on one thread, many cases per transaction.

A batch costs a fixed transaction plus a little per case, so cases that finish
close together are committed together: a record waits ``WRITE_LINGER`` for
others to join it, ``WRITE_BATCH`` records start a write at once, and while the
writer thread commits one batch the next one gathers. The queue is bounded
(``MAX_PENDING_WRITES``): a store slower than the cases holds the cases back
instead of queueing the whole run in memory.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from jurybox.core import CaseRecord
from jurybox.engine._store_port import RecordSink

T = TypeVar("T")

MAX_PENDING_WRITES = 64
"""Finished records queued for the store's writer before the cases wait for it, whatever the concurrency.

While the writer thread commits one batch the next one gathers, so a busy run commits many cases at once.
A bigger queue only holds more records in memory: at 10,000 cases and concurrency 256, where the writer
sets the pace, 2 x concurrency (512) cost 19 MB more peak RSS than 64 for the same wall time.
"""
WRITE_LINGER = 0.05
"""Seconds a finished record waits for others to join its batch (a kill loses at most this much of finished work).

A batch costs a fixed transaction plus a little per case, so at concurrency 16 and 200 ms per judge call
this halves the store's CPU per case; ``WRITE_BATCH`` records, a drain or Ctrl-C write at once.
"""
WRITE_BATCH = 64
"""Queued records that start a write without waiting for ``WRITE_LINGER``."""


class StoreThread:
    """The one thread every store call of a run goes through, so the event loop never blocks on the database."""

    def __init__(self) -> None:
        self._pool: ThreadPoolExecutor | None = ThreadPoolExecutor(max_workers=1, thread_name_prefix="jurybox-store")

    @property
    def pool(self) -> ThreadPoolExecutor:
        if self._pool is None:
            raise RuntimeError("the store thread was shut down")
        return self._pool

    async def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` on the store thread."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.pool, lambda: fn(*args, **kwargs))

    def pause(self) -> None:
        """Stop the thread (a fork must not copy a thread that may hold a lock); ``resume`` starts a new one."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def resume(self) -> None:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="jurybox-store")

    def shutdown(self) -> None:
        self.pause()


class BatchedWriter:
    """Writes one run's finished records to the store in batches, in the order cases finish.

    Args:
        store: Where records go (a store's ``results``).
        thread: The run's store thread.
        run_id: The run the records belong to.
    """

    def __init__(self, store: RecordSink, thread: StoreThread, run_id: str) -> None:
        self._store = store
        self._thread = thread
        self._run_id = run_id
        self.pending: list[CaseRecord] = []
        """Finished records waiting for the writer thread."""
        self.errors: list[str] = []
        """Writes that failed (the run went on; the store misses these cases)."""
        self._writing: asyncio.Future[list[str]] | None = None
        self._linger: asyncio.TimerHandle | None = None  # a pending write of the queue, once it has gathered
        self._written = asyncio.Event()
        # Read when the run starts, not at import, so a test can change them.
        self._max_pending = MAX_PENDING_WRITES
        self._batch = WRITE_BATCH
        self._linger_seconds = WRITE_LINGER

    async def put(self, record: CaseRecord) -> None:
        """Queue a finished record; waits only while the queue is full (backpressure)."""
        self.pending.append(record)
        if len(self.pending) >= self._batch:
            self._flush()
        elif self._linger is None and self._writing is None:
            self._linger = asyncio.get_running_loop().call_later(self._linger_seconds, self._flush)
        while len(self.pending) > self._max_pending:
            # A store slower than the cases must not queue the whole run in memory.
            self._flush()
            self._written.clear()
            await self._written.wait()

    async def drain(self) -> None:
        """Write every queued record and wait until the writer thread has committed them all."""
        while self._writing is not None or self.pending:
            self._flush()
            self._written.clear()
            await self._written.wait()

    async def close(self) -> None:
        """Drain what is left, never raising: only a runner bug leaves records queued at the end."""
        if self.pending or self._writing is not None:
            with contextlib.suppress(Exception):
                await self.drain()

    def _flush(self) -> None:
        """Write the queue now, or as soon as the writer thread is free (its done callback writes it)."""
        if self._linger is not None:
            self._linger.cancel()
            self._linger = None
        if self._writing is None and self.pending:
            self._write_pending()

    def _write_pending(self) -> None:
        """Hand every queued record to the writer thread as one batch (one transaction, one commit)."""
        batch, self.pending = self.pending, []
        future = asyncio.get_running_loop().run_in_executor(self._thread.pool, self._store_batch, batch)
        self._writing = future
        future.add_done_callback(self._batch_written)

    def _store_batch(self, batch: list[CaseRecord]) -> list[str]:
        """On the writer thread: the batch in one transaction; if that fails, case by case so only a bad one is lost."""
        try:
            self._store.record_many(self._run_id, batch)
            return []
        except Exception:
            errors = []
            for record in batch:
                try:
                    self._store.record(self._run_id, record)
                except Exception as exc:
                    errors.append(f"{record.case}: {type(exc).__name__}: {exc}")
            return errors

    def _batch_written(self, future: asyncio.Future[list[str]]) -> None:
        self._writing = None
        if future.cancelled():
            self.errors.append("a write to the store was cancelled")
        elif future.exception() is not None:
            exc = future.exception()
            self.errors.append(f"{type(exc).__name__}: {exc}")
        else:
            self.errors.extend(future.result())
        if self.pending:
            # They gathered while the writer was busy, which is what a linger waits for.
            self._flush()
        self._written.set()
