"""Rate signals: a 429 seen by one process pauses and shrinks the same endpoint's limiter in every process.

Each process's ``AdaptiveLimiter`` reacts to the 429s its own calls get. When several
processes (Ray actors, ``--workers``) call the same endpoint, that is not enough: the
others keep sending while one is told to back off. A ``RateSignal`` carries the news:

* a process that gets a 429 *publishes* (endpoint key, the shrink generation its call
  started under, seconds to pause: the Retry-After, or its backoff when there is none);
* a shared ``RateLedger`` (in the Ray signal actor, or in memory) keeps per key the latest
  pause deadline and a shrink generation that moves on once per burst: a report from a
  generation already counted only extends the pause, so 4 processes hit by the same burst
  shrink their limits once, not 4 times;
* every process *learns* the ledger's changes on one background thread and hands them to
  its limiters of that key, which hold new calls until the deadline and halve their limit
  once per generation they had not seen.

How news arrives: a long poll. The listener thread asks the signal "anything after version
V?" and the signal answers as soon as something changes (or after ``WAIT_TIMEOUT`` with
nothing). That is a push in effect (a process learns one round trip after the 429, where a
0.25 s poll would leave the others sending for up to 0.25 s) at the cost of one idle
outstanding request per process, and nothing on the hot path: a judge call never talks to
the signal, and a limiter checks one float attribute.

Clocks: a report carries a *duration* and the ledger answers with durations left, each side
converting with its own monotonic clock. Nodes' wall clocks may disagree by seconds; a
duration is only off by the message's transit time (so a pause ends a little late, never early).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
import weakref
from typing import TYPE_CHECKING, NamedTuple, Protocol

if TYPE_CHECKING:
    from jurybox.models._limiter import AdaptiveLimiter

WAIT_TIMEOUT = 10.0
"""Seconds a long poll waits for a change before asking again (bounds how long a stopped listener lingers)."""
RETRY_PAUSE = 1.0
"""Seconds the listener waits after a signal failed to answer (its actor or server is restarting, say)."""


class RateState(NamedTuple):
    """One endpoint's news: its shrink generation and the seconds its pause still lasts (0: none)."""

    generation: int
    pause: float


class RateSignal(Protocol):
    """How processes tell each other of rate limits (see the module docstring).

    ``publish`` is called on an event loop right after a 429: it must not block (send and
    forget, or hand the I/O to a thread). ``wait`` is called only on the listener thread.
    """

    def publish(self, key: str, generation: int, pause: float) -> None:
        """Report a 429 on ``key`` from a call started under shrink ``generation``; pause ``pause`` seconds."""
        ...

    def wait(self, version: int, timeout: float) -> tuple[int, dict[str, RateState]]:
        """Block until the ledger moves past ``version`` (or ``timeout`` passes); its version and changed keys."""
        ...

    def close(self) -> None:
        """Stop: wake a ``wait`` in progress if it can, and release connections."""
        ...


def rate_key(provider: str, base_url: str, model: str) -> str:
    """The identity of an endpoint for rate limiting: one server, one model (a fleet's endpoints each have one)."""
    return f"{provider} {base_url} {model}"


class RateLedger:
    """The shared record behind a signal: per key, the shrink generation and the pause deadline.

    Pure bookkeeping on its holder's monotonic clock (``now`` is passed in: the Ray signal
    actor's, or a test's); not thread-safe: its holder serialises calls.
    """

    def __init__(self) -> None:
        self.version = 0
        self._keys: dict[str, tuple[int, float, int]] = {}  # key -> (generation, pause deadline, version)

    def report(self, key: str, generation: int, pause: float, now: float) -> bool:
        """Record a 429; True when it changed what others must know (a new generation or a longer pause)."""
        current, deadline, _ = self._keys.get(key, (0, 0.0, 0))
        # A call started under the ledger's generation (or a later one it has not heard of yet)
        # opens a new generation; one started earlier belongs to a burst already counted.
        new_generation = generation + 1 if generation >= current else current
        new_deadline = max(deadline, now + max(0.0, pause))
        if new_generation == current and new_deadline == deadline:
            return False
        self.version += 1
        self._keys[key] = (new_generation, new_deadline, self.version)
        return True

    def since(self, version: int, now: float) -> dict[str, RateState]:
        """Keys changed after ``version``, with the seconds their pause has left."""
        return {
            key: RateState(generation, max(0.0, deadline - now))
            for key, (generation, deadline, changed) in self._keys.items()
            if changed > version
        }


class MemoryRateSignal:
    """A ``RateSignal`` within one process (its threads and event loops): for tests and embedding."""

    def __init__(self) -> None:
        self._ledger = RateLedger()
        self._changed = threading.Condition()
        self._closed = False

    def publish(self, key: str, generation: int, pause: float) -> None:
        with self._changed:
            if self._ledger.report(key, generation, pause, time.monotonic()):
                self._changed.notify_all()

    def wait(self, version: int, timeout: float) -> tuple[int, dict[str, RateState]]:
        with self._changed:
            self._changed.wait_for(lambda: self._closed or self._ledger.version > version, timeout)
            return self._ledger.version, self._ledger.since(version, time.monotonic())

    def close(self) -> None:
        with self._changed:
            self._closed = True
            self._changed.notify_all()


class RateBoard:
    """This process's side of a signal: its limiters by key, and the thread that listens for news."""

    def __init__(self, signal: RateSignal) -> None:
        self.signal = signal
        self._lock = threading.Lock()
        self._known: dict[str, tuple[int, float]] = {}  # key -> (generation, pause deadline on our clock)
        self._limiters: dict[str, weakref.WeakSet[AdaptiveLimiter]] = {}
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._listen, name="jurybox-rate-signal", daemon=True)
        self._thread.start()

    def attach(self, key: str, limiter: AdaptiveLimiter) -> tuple[int, float]:
        """Follow ``key``'s news for ``limiter``; returns what is known so far (generation, pause deadline).

        A new limiter starts from the known generation without shrinking: it counts the
        shrink events that come after it, like a process that joins a run late.
        """
        with self._lock:
            self._limiters.setdefault(key, weakref.WeakSet()).add(limiter)
            return self._known.get(key, (0, 0.0))

    def publish(self, key: str, generation: int, pause: float) -> None:
        try:
            self.signal.publish(key, generation, pause)
        except Exception:  # a signal that is down must not fail the call: the local limit still applies
            return

    def stop(self) -> None:
        self._stopped.set()
        with contextlib.suppress(Exception):
            self.signal.close()

    def _listen(self) -> None:
        version = 0
        while not self._stopped.is_set():
            try:
                # A restarted ledger answers with a lower version: take it, or its news would be missed.
                version, changes = self.signal.wait(version, WAIT_TIMEOUT)
            except Exception:  # the signal's actor is restarting or gone: ask again shortly
                self._stopped.wait(RETRY_PAUSE)
                continue
            if changes and not self._stopped.is_set():
                self._apply(changes, time.monotonic())

    def _apply(self, changes: dict[str, RateState], now: float) -> None:
        for key, state in changes.items():
            with self._lock:
                generation, deadline = self._known.get(key, (0, 0.0))
                generation, deadline = max(generation, state.generation), max(deadline, now + state.pause)
                self._known[key] = (generation, deadline)
                limiters = list(self._limiters.get(key, ()))
            for limiter in limiters:
                limiter.learn_soon(generation, deadline)


RATE_URL_ENV = "JURYBOX_RATE_URL"
"""A ``redis://`` URL: every process that reads it shares its 429s there (unless told otherwise in code)."""

_board: RateBoard | None = None
_board_lock = threading.Lock()
_settled_in: int | None = None
"""The process whose signal is settled (by ``use_rate_signal`` or by reading the environment); a fork re-reads it."""


def use_rate_signal(signal: RateSignal | None) -> None:
    """Share rate limits with other processes through ``signal`` (None: stop sharing; the old one is closed).

    Applies to the limiters made after the call (a model makes one per event loop on its
    first call there), as ``use_connection_share`` does: call it before the first model call.
    """
    global _board, _settled_in  # noqa: PLW0603 - a setting of the whole process, like the connection share
    with _board_lock:
        old, _board = _board, (RateBoard(signal) if signal is not None else None)
        _settled_in = os.getpid()
    if old is not None:
        old.stop()


def rate_board() -> RateBoard | None:
    """The board of the signal in use, or None when this process shares no rate limits.

    The first call in a process (a forked worker too: a board's thread does not survive a
    fork) installs the Redis signal ``$JURYBOX_RATE_URL`` names, unless ``use_rate_signal``
    settled it there already. Called once per limiter, never per call.
    """
    if _settled_in != os.getpid():
        url = os.environ.get(RATE_URL_ENV)
        if url:
            from jurybox.models._rate_signal_redis import RedisRateSignal  # only then: it imports redis

            use_rate_signal(RedisRateSignal(url))
        else:
            use_rate_signal(None)
    return _board


def loop_or_none() -> asyncio.AbstractEventLoop | None:
    """The running event loop, or None outside one."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
