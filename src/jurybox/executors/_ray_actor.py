"""``CaseActor``: one long-lived Ray actor of ``jurybox run --executor ray``, built the way a worker process is.

The actor loads the suite on its node, takes its connection share of every
model (``use_connection_share``, as a ``--workers`` process does) and keeps a
``CaseExecutor`` (the agent and model clients with their pooled connections)
for the whole run. It runs ``concurrency`` tasks on its own event loop that
take cases from one queue, fed by the driver's batches. Each batch is one
streaming call: its finished cases go back in chunks as they finish, written
to the store first when the actor writes (PostgreSQL), so a chunk the driver
hears of is a chunk the store holds.

This class does not import Ray: the driver wraps it with ``ray.remote``.
"""

from __future__ import annotations

import asyncio
import os
import resource
import sys
import uuid
from collections.abc import AsyncGenerator
from dataclasses import replace
from typing import cast

from jurybox.core import CaseRecord, Judgment, Status, freeze_for_life, paused_collector
from jurybox.engine import BatchedWriter, CaseExecutor, StoreThread, llm_was_skipped
from jurybox.executors import _ray_cluster as cluster
from jurybox.executors._ray_rates import RaySignal
from jurybox.executors._ray_setup import ActorSetup, ActorStats, Chunk, Finished, Work
from jurybox.judges import SqlDatabases
from jurybox.models import use_connection_share, use_rate_signal
from jurybox.suites import Case, CaseLine, SuiteError

CHUNK_SIZE = 256
"""Finished cases sent back in one streamed item at most."""
CHUNK_LINGER = 0.02
"""Seconds a finished case waits for others to join its chunk: a streamed item costs far more than a case."""


class _Stopped:
    """The marker an outbox gets when the actor stops: the batch ends with what it sent."""


_STOPPED = _Stopped()
Outbox = asyncio.Queue["Finished | BaseException | _Stopped"]


class CaseActor:
    """Runs cases of one run, batch after batch, on its own event loop (wrapped with ``ray.remote`` by the driver).

    Args:
        setup: The run, this actor's share of it, and how to load the suite and open the store.

    Raises:
        ValueError: the suite this actor loaded judges with another model than the driver's.
    """

    def __init__(self, setup: ActorSetup) -> None:
        use_connection_share(setup.index, setup.count)
        # Before any model call: a 429 here pauses this endpoint on every actor, and theirs pause this one.
        use_rate_signal(RaySignal(setup.rate_signal) if setup.rate_signal is not None else None)
        with paused_collector():
            suite = setup.load_suite()
        if suite.judge_model != setup.judge_model:
            raise ValueError(
                f"this actor's copy of suite {suite.name!r} judges with {suite.judge_model or 'no judge model'}, "
                f"the driver's with {setup.judge_model or 'no judge model'}: set the same judge model "
                "(--judge-model, the suite's judge_model, $JURYBOX_JUDGE_MODEL) on every node, or give "
                "RaySettings(load_suite=...) the way the driver loaded the suite"
            )
        self._setup = setup
        self._suite = suite
        # The suite file's own cases; a cases file's come as lines, built when they arrive and then dropped.
        self._by_name = {case.name: case for case in getattr(suite.cases, "inline", suite.cases)}
        self._databases = SqlDatabases()
        self._cases = CaseExecutor(suite, self._databases, timeout=setup.timeout, retries=setup.retries)
        self._cases.lessons = setup.lessons
        self._cases.target()  # a bad agent spec fails here, once, not on every case
        # The process lives for this run only, as `jurybox run` does: the loaded suite stays out of collections.
        freeze_for_life()
        self._loaded_rss = _peak_rss()
        self._node, self._address = cluster.this_node()
        self._store = setup.open_store() if setup.open_store is not None else None
        self._incarnation = uuid.uuid4().hex
        self._work: asyncio.Queue[tuple[Case, Outbox]] | None = None
        self._pool: list[asyncio.Task[None]] = []
        self._outboxes: set[Outbox] = set()
        self._thread: StoreThread | None = None
        self._writer: BatchedWriter | None = None
        self._stopping = False
        self._finished = 0

    async def run_batch(self, batch: list[Work]) -> AsyncGenerator[Chunk, None]:
        """Run the cases (names, or lines of the cases file); yield them in chunks as they finish.

        Ends early, with what finished, on ``stop``. A line that cannot be built here (the file
        differs on this node) finishes at once as an ERROR case saying why.

        Raises:
            KeyError: a name that is not a case of this actor's copy of the suite.
        """
        if self._stopping:
            return
        outbox: Outbox = asyncio.Queue()
        cases = [self._case(item, outbox) for item in batch]
        work = self._start_pool()
        self._outboxes.add(outbox)
        try:
            for case in cases:
                if case is not None:
                    work.put_nowait((case, outbox))
            left = len(batch)
            while left:
                finished, ended = await self._gather(outbox, left)
                if finished:
                    left -= len(finished)
                    yield await self._chunk(finished)
                if ended:
                    return
        finally:
            self._outboxes.discard(outbox)

    async def run_whole_batch(self, batch: list[Work]) -> list[Chunk]:
        """``run_batch``'s chunks, all at once when the batch ends: Ray Client (``ray://``) cannot stream them."""
        return [chunk async for chunk in self.run_batch(batch)]

    async def stop(self) -> None:
        """Take no new case and abandon the ones in flight (a resume re-runs them); each batch ends."""
        self._stopping = True
        if self._work is not None:
            while not self._work.empty():
                self._work.get_nowait()
        for task in self._pool:
            task.cancel()
        for outbox in self._outboxes:
            outbox.put_nowait(_STOPPED)

    async def close(self) -> None:
        """Release the agent, the connections and the store (the driver kills the actor next)."""
        await self.stop()
        await asyncio.gather(*self._pool, return_exceptions=True)
        use_rate_signal(None)  # the run's signal actor goes next
        if self._writer is not None:
            await self._writer.close()
        await self._cases.aclose()
        await asyncio.to_thread(self._databases.dispose)
        if self._thread is not None:
            self._thread.shutdown()
        close = getattr(self._store, "close", None)
        if callable(close):
            close()

    def stats(self) -> ActorStats:
        """This actor's process id, peak memory (now, and once loaded), cases finished and node."""
        return ActorStats(os.getpid(), _peak_rss(), self._loaded_rss, self._finished, self._node, self._address)

    # -- inside the actor -------------------------------------------------------------------------

    def _case(self, item: Work, outbox: Outbox) -> Case | None:
        if isinstance(item, CaseLine):
            return self._built(item, outbox)
        name = item
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(
                f"case {name!r} is not in this actor's copy of suite file {self._suite.path}: "
                "every node must have the suite the driver loaded"
            ) from None

    def _built(self, line: CaseLine, outbox: Outbox) -> Case | None:
        file = getattr(self._suite.cases, "file", None)
        try:
            if file is None:
                raise SuiteError.at(line.file, line.line, "", "this actor's copy of the suite has no cases_file")
            return cast(Case, file.build_line(line))
        except SuiteError as exc:
            reason = f"this case could not be built on the actor: {exc}"
            record = CaseRecord(line.name, Judgment(Status.ERROR, reasoning=reason))
            outbox.put_nowait(Finished(line.name, Status.ERROR, False, record))
            return None

    def _start_pool(self) -> asyncio.Queue[tuple[Case, Outbox]]:
        """The task pool, started with the first batch (the actor's event loop runs only inside its calls)."""
        if self._work is None:
            self._work = asyncio.Queue()
            self._pool = [
                asyncio.create_task(self._run_cases(self._work), name=f"jurybox-actor-case-{index}")
                for index in range(self._setup.concurrency)
            ]
            if self._store is not None:
                self._thread = StoreThread()
                self._writer = BatchedWriter(self._store.results, self._thread, self._setup.run_id)
        return self._work

    async def _run_cases(self, work: asyncio.Queue[tuple[Case, Outbox]]) -> None:
        execute = self._cases.execute
        run_id = self._setup.run_id
        while True:
            case, outbox = await work.get()
            try:
                record = await execute(case, run_id)
            except asyncio.CancelledError:
                raise
            except BaseException as exc:  # cases never raise: this is a bug, and the driver must hear of it
                outbox.put_nowait(exc)
                continue
            outbox.put_nowait(Finished(record.case, record.status, llm_was_skipped(record), record))

    async def _gather(self, outbox: Outbox, left: int) -> tuple[list[Finished], bool]:
        """The cases finished so far (at least one, unless stopped), and whether the batch ends here.

        Raises:
            BaseException: what a case task raised (a bug: the driver counts the batch as failed).
        """
        finished: list[Finished] = []
        ended = self._take_waiting(outbox, finished, await outbox.get())
        if not ended and len(finished) < min(left, CHUNK_SIZE):
            await asyncio.sleep(CHUNK_LINGER)
            while not ended and not outbox.empty() and len(finished) < CHUNK_SIZE:
                ended = self._take_waiting(outbox, finished, outbox.get_nowait())
        return finished, ended

    def _take_waiting(
        self, outbox: Outbox, finished: list[Finished], first: Finished | BaseException | _Stopped
    ) -> bool:
        item = first
        while True:
            if isinstance(item, BaseException):
                raise item
            if isinstance(item, _Stopped):
                return True
            finished.append(item)
            if outbox.empty() or len(finished) >= CHUNK_SIZE:
                return False
            item = outbox.get_nowait()

    async def _chunk(self, finished: list[Finished]) -> Chunk:
        """The chunk for ``finished``; when this actor writes, only once the store has committed them."""
        errors: list[str] = []
        writer = self._writer
        if writer is not None:
            for item in finished:
                assert item.record is not None
                await writer.put(item.record)
            await writer.drain()
            errors, writer.errors = writer.errors, []
            finished = [replace(item, record=None) for item in finished]  # stored: the driver needs no more
        self._finished += len(finished)
        return Chunk(self._incarnation, replace(self._cases.spend), finished, errors)


def _peak_rss() -> int:
    """This process's peak resident memory in bytes (``ru_maxrss`` is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024
