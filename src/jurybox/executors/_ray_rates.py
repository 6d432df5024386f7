"""Rate limits shared by a Ray run's actors: a 429 on one actor pauses and shrinks that endpoint on all of them.

The driver starts one small named actor per run (``RateSignalActor``, no CPU) that holds
the run's ``RateLedger``; each ``CaseActor`` installs a ``RaySignal`` naming it
(``use_rate_signal``). A 429 is published fire-and-forget (no wait on the event loop); each
actor process keeps one long-poll ``wait`` outstanding on a background thread, answered as
soon as the ledger changes (see ``jurybox.models._rate_signal`` for why a long poll). Pauses
travel as durations, converted by the signal actor to its own monotonic clock and back, so
the nodes' clocks need not agree.

Nothing here imports Ray at module level: the driver wraps ``RateSignalActor`` with ``ray.remote``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

from jurybox.executors._ray_cluster import import_ray, kill
from jurybox.models import RateLedger, RateState

WAIT_GRACE = 5.0
"""Seconds past a long poll's own timeout before its caller gives up on the answer (the actor is gone)."""


class RateSignalActor:
    """The run's rate ledger, in one async Ray actor that every case actor reports to and long-polls."""

    def __init__(self) -> None:
        self._ledger = RateLedger()
        self._changed: asyncio.Event | None = None

    async def publish(self, key: str, generation: int, pause: float) -> None:
        """Record a 429 (see ``RateLedger.report``); wake the long polls when it changed anything."""
        if self._ledger.report(key, generation, pause, time.monotonic()) and self._changed is not None:
            # Every waiter holds this event: set it once and start a new one for the next change.
            self._changed.set()
            self._changed = None

    async def wait(self, version: int, timeout: float) -> tuple[int, dict[str, RateState]]:
        """The ledger's version and the keys changed after ``version``, once there are any or ``timeout`` passed."""
        if self._ledger.version <= version:
            if self._changed is None:
                self._changed = asyncio.Event()
            changed = self._changed
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await changed.wait()
        return self._ledger.version, self._ledger.since(version, time.monotonic())


class RaySignal:
    """A ``RateSignal`` through the run's ``RateSignalActor``, looked up by name in a case actor's process.

    An actor that cannot find it (not registered yet, or gone) still starts: its reports are
    dropped (its own limiter still reacts) and its listener keeps looking.
    """

    def __init__(self, name: str) -> None:
        self._ray = import_ray()
        self._name = name
        self._actor: Any = self._find()

    def _find(self) -> Any:
        try:
            return self._ray.get_actor(self._name)
        except ValueError:  # no actor of that name (yet)
            return None

    def publish(self, key: str, generation: int, pause: float) -> None:
        # Fire and forget: the call is queued to the signal actor; the event loop does not wait for it.
        if self._actor is not None:
            self._actor.publish.remote(key, generation, pause)

    def wait(self, version: int, timeout: float) -> tuple[int, dict[str, RateState]]:
        if self._actor is None:
            self._actor = self._find()
            if self._actor is None:
                raise LookupError(f"no rate signal actor {self._name!r}")  # the listener asks again shortly
        found, changes = self._ray.get(self._actor.wait.remote(version, timeout), timeout=timeout + WAIT_GRACE)
        return int(found), {key: RateState(*state) for key, state in changes.items()}

    def close(self) -> None:
        """Nothing to release: a long poll in progress ends with its timeout (the listener is a daemon thread)."""


def start_rate_signal(tag: str) -> tuple[str, Any]:
    """Start the signal actor of the run whose case actors are named ``tag-<index>``; its name and handle.

    It takes no CPU (it only keeps a small table), and its name does not start with the case
    actors' ``jurybox-`` (tests and tools list a run's case actors by that prefix).
    """
    name = f"jbrates-{tag.removeprefix('jurybox-')}"
    remote: Any = import_ray().remote(RateSignalActor)
    return name, remote.options(name=name, num_cpus=0, max_restarts=-1, max_task_retries=0).remote()


def stop_rate_signal(actor: Any) -> None:
    """Kill the run's signal actor (None: there is none; one killed already is fine)."""
    if actor is not None:
        kill(actor)
