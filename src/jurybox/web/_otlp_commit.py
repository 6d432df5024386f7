"""Group commit for ``/v1/traces``: the requests waiting at one moment are written in one transaction.

A request is answered 2xx only once its rows are committed (a server killed a moment later
loses nothing it acknowledged), and a commit costs a disk sync: one per request caps the
receiver at a few hundred requests a second. Here each request hands its rows over and
waits; while one transaction is being written, the requests that come meanwhile gather,
and the next transaction takes them all. One request alone is written at once, as before.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from starlette.concurrency import run_in_threadpool

Fragment = tuple[str, bool, str]
"""(trace id, holds the root span, redacted spans JSON): one queue row."""
Writer = Callable[[Sequence[Sequence[Fragment]]], list[bool]]
"""Writes groups of rows in one transaction; for each group, whether it fitted in the queue."""
MAX_GROUP_ROWS = 20_000
"""Rows one transaction takes at most (the rest wait for the next): a bound on its memory and time."""


class GroupCommit:
    """Gathers the rows of concurrent requests and writes them in one transaction at a time.

    Used from one event loop (the server's); the writing runs in a worker thread.
    """

    def __init__(self, write: Writer) -> None:
        self._write = write
        self._waiting: list[tuple[Sequence[Fragment], asyncio.Future[bool]]] = []
        self._busy = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None  # held: the loop keeps only a weak reference
        self.transactions = 0
        """Transactions written (fewer than the requests when they were grouped)."""

    async def submit(self, fragments: Sequence[Fragment]) -> bool:
        """Write ``fragments`` (all or none); True once committed, False when the queue was full.

        Raises:
            Exception: whatever writing raised (the store down or locked), as without grouping.
        """
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # a new server loop (a test client started again): nothing of the old one goes on
            self._loop, self._waiting, self._busy = loop, [], False
        done: asyncio.Future[bool] = loop.create_future()
        self._waiting.append((fragments, done))
        if not self._busy:
            self._busy = True
            self._task = loop.create_task(self._drain())
        # shield: a client that hangs up does not cancel the write others share
        return await asyncio.shield(done)

    async def _drain(self) -> None:
        try:
            while self._waiting:
                group = self._take()
                try:
                    kept = await run_in_threadpool(self._write, [fragments for fragments, _ in group])
                except Exception as exc:  # every request of the group hears it, as it would have alone
                    for _, done in group:
                        if not done.done():
                            done.set_exception(exc)
                    continue
                self.transactions += 1
                for (_, done), fitted in zip(group, kept, strict=True):
                    if not done.done():
                        done.set_result(fitted)
        finally:
            self._busy = False

    def _take(self) -> list[tuple[Sequence[Fragment], asyncio.Future[bool]]]:
        rows = 0
        count = 0
        for fragments, _ in self._waiting:
            if count and rows + len(fragments) > MAX_GROUP_ROWS:
                break
            rows += len(fragments)
            count += 1
        group, self._waiting = self._waiting[:count], self._waiting[count:]
        return group
