"""An adaptive concurrency limit: at most N calls in flight, halved on rate limits, regained on success."""

from __future__ import annotations

import asyncio
import time
from collections import deque

from jurybox.models._rate_signal import RateBoard, loop_or_none, rate_board


class AdaptiveLimiter:
    """Limits how many calls run at once (additive increase, multiplicative decrease).

    A 429 halves the limit (at least 1); each run of ``limit`` successful calls in a row
    raises it by one, up to ``maximum``. Several 429s from calls that were all started
    under the same limit shrink it once, not once per call, so a single burst does not
    collapse the limit to 1.

    With a rate signal in use (``use_rate_signal``) and an endpoint ``key``, the limiter
    also hears of other processes' 429s on that endpoint: it holds new calls until their
    Retry-After ends and halves its limit once per burst (shrink generation), as for its
    own; and its own 429s pause every process. Without one it behaves as above and the
    only added cost is one attribute test per ``acquire``.

    One limiter belongs to one event loop (asyncio primitives are loop-bound).
    """

    def __init__(self, maximum: int, *, adaptive: bool = True, key: str | None = None) -> None:
        if maximum < 1:
            raise ValueError(f"concurrency must be at least 1, got {maximum}")
        self.maximum = maximum
        self.limit = maximum
        self.adaptive = adaptive
        self.in_flight = 0
        self.shrinks = 0
        self.paused_until = 0.0
        """Monotonic time before which no new call starts (a shared Retry-After); 0.0: no pause."""
        self.key = key
        self._generation = 0
        self._successes = 0
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._board: RateBoard | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        board = rate_board() if key is not None else None
        if board is not None and key is not None:
            self._board, self._loop = board, loop_or_none()
            self._generation, self.paused_until = board.attach(key, self)

    @property
    def generation(self) -> int:
        """Shrinks so far, counting the bursts other processes reported (the rate signal's numbering)."""
        return self._generation

    async def acquire(self) -> int:
        """Wait for a free slot (and for a pause to end); returns the generation to pass to ``release``."""
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
        if self.paused_until:
            await self._sit_out_pause()
        return self._generation

    def release(self, generation: int, *, rate_limited: bool = False, succeeded: bool = False) -> None:
        """Free a slot, telling the limiter how the call went."""
        self.in_flight -= 1
        if self.adaptive and rate_limited and generation == self._generation:
            self._shrink(1)
        elif self.adaptive and succeeded and self.limit < self.maximum:
            self._successes += 1
            if self._successes >= self.limit:
                self.limit += 1
                self._successes = 0
        self._wake()

    def rate_limited(self, generation: int, pause: float) -> None:
        """A call started under ``generation`` got a 429 asking for ``pause`` seconds: tell the other processes.

        Nothing without a rate signal (the call's own retry waits as before). With one, this
        limiter holds new calls for ``pause`` too, and so does every process once it hears.
        """
        board = self._board
        if board is None or self.key is None:
            return
        self.paused_until = max(self.paused_until, time.monotonic() + pause)
        board.publish(self.key, generation, pause)

    def learn(self, generation: int, paused_until: float) -> None:
        """Another process's news: shrink once per generation not seen yet; hold new calls until ``paused_until``."""
        self.paused_until = max(self.paused_until, paused_until)
        if generation > self._generation:
            if self.adaptive:
                self._shrink(generation - self._generation)
            self._generation = generation

    def learn_soon(self, generation: int, paused_until: float) -> None:
        """``learn`` from any thread: run on this limiter's event loop (a closed loop's limiter is gone)."""
        loop = self._loop
        if loop is None:
            self.learn(generation, paused_until)
            return
        try:
            loop.call_soon_threadsafe(self.learn, generation, paused_until)
        except RuntimeError:  # the loop is closed: nothing will call through this limiter again
            return

    def _shrink(self, times: int) -> None:
        for _ in range(times):
            self.limit = max(1, self.limit // 2)
            self.shrinks += 1
        self._generation += times
        self._successes = 0

    async def _sit_out_pause(self) -> None:
        """Wait, holding the slot, until the pause ends (a later pause learned meanwhile is waited out too)."""
        try:
            while (left := self.paused_until - time.monotonic()) > 0:
                await asyncio.sleep(left)
        except asyncio.CancelledError:
            self.in_flight -= 1
            self._wake()
            raise
        self.paused_until = 0.0

    def _wake(self) -> None:
        while self._waiters and self.in_flight < self.limit:
            future = self._waiters.popleft()
            if not future.done():
                self.in_flight += 1
                future.set_result(None)
