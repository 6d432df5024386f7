"""An adaptive concurrency limit: at most N calls in flight, halved on rate limits, regained on success."""

from __future__ import annotations

import asyncio
from collections import deque


class AdaptiveLimiter:
    """Limits how many calls run at once (additive increase, multiplicative decrease).

    A 429 halves the limit (at least 1); each run of ``limit`` successful calls in a row
    raises it by one, up to ``maximum``. Several 429s from calls that were all started
    under the same limit shrink it once, not once per call, so a single burst does not
    collapse the limit to 1.

    One limiter belongs to one event loop (asyncio primitives are loop-bound).
    """

    def __init__(self, maximum: int, *, adaptive: bool = True) -> None:
        if maximum < 1:
            raise ValueError(f"concurrency must be at least 1, got {maximum}")
        self.maximum = maximum
        self.limit = maximum
        self.adaptive = adaptive
        self.in_flight = 0
        self.shrinks = 0
        self._generation = 0
        self._successes = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    async def acquire(self) -> int:
        """Wait for a free slot; returns the generation to pass to ``release``."""
        if self.in_flight >= self.limit or self._waiters:
            future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(future)
            try:
                await future
            except asyncio.CancelledError:
                if future.done() and not future.cancelled():
                    # We were handed a slot just as we got cancelled: pass it on.
                    self.in_flight -= 1
                    self._wake()
                else:
                    self._waiters.remove(future)
                raise
        else:
            self.in_flight += 1
        return self._generation

    def release(self, generation: int, *, rate_limited: bool = False, succeeded: bool = False) -> None:
        """Free a slot, telling the limiter how the call went."""
        self.in_flight -= 1
        if self.adaptive and rate_limited and generation == self._generation:
            self.limit = max(1, self.limit // 2)
            self._generation += 1
            self._successes = 0
            self.shrinks += 1
        elif self.adaptive and succeeded and self.limit < self.maximum:
            self._successes += 1
            if self._successes >= self.limit:
                self.limit += 1
                self._successes = 0
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self.in_flight < self.limit:
            future = self._waiters.popleft()
            if not future.done():
                self.in_flight += 1
                future.set_result(None)
