"""The rest of a run's plan, written while its cases run: one chunk per short transaction, on the store thread.

Writing a million-case plan before the first case took half a minute and held
SQLite's write lock all that time (no ``jurybox runs``, no other run, no review
could write meanwhile). So the runner opens a run with the plan's first chunk
and its size, starts the cases, and a ``PlanWriter`` writes the rest of the plan
``PLAN_CHUNK`` cases per transaction through the run's one store thread, where
the batched writer's result writes take their turns between the chunks.

Exactly once still holds: the store knows the plan's size from the start, so a
run killed before its plan is whole says so (``plan_progress``), and its resume
writes the rest of the plan as it finishes the cases.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Mapping
from itertools import islice
from typing import Any

from jurybox.engine._store_port import PlanLog
from jurybox.engine._writer import StoreThread

PLAN_CHUNK = 2_000
"""Cases of the plan per transaction: tens of milliseconds of the store's write lock, one chunk in memory."""

PlanPairs = Iterator[tuple[str, Mapping[str, Any]]]
"""The plan still to write: (case name, definition as stored), read once, in plan order."""


def plan_chunk(pairs: PlanPairs) -> tuple[list[tuple[str, Mapping[str, Any]]], bool]:
    """The next ``PLAN_CHUNK`` pairs of the plan, and whether they are its last (fewer than a chunk)."""
    size = PLAN_CHUNK  # read at each call, so a test can make chunks small
    part = list(islice(pairs, size))
    return part, len(part) < size


class PlanWriter:
    """Writes a run's plan from position ``first`` on, a chunk at a time, while the run's cases run.

    Args:
        plans: The store's runs.
        thread: The run's store thread (every chunk is one call on it: reading the chunk,
            then writing it in one transaction).
        run_id: The run, opened with the plan's size.
        pairs: The rest of the plan, in order.
        first: Cases of the plan already stored.
        on_error: Called once if a chunk cannot be written (the runner stops the run: its resume
            writes the rest of the plan).
    """

    def __init__(
        self,
        plans: PlanLog,
        thread: StoreThread,
        run_id: str,
        pairs: PlanPairs,
        *,
        first: int,
        on_error: Callable[[], None],
    ) -> None:
        self._plans = plans
        self._thread = thread
        self._run_id = run_id
        self._pairs = pairs
        self._on_error = on_error
        self._stopping = False
        self._task: asyncio.Task[None] | None = None
        self.written = first
        """Cases of the plan stored so far."""
        self.complete = False
        """The whole plan is stored."""
        self.error: str | None = None
        """Why the plan could not be written to its end, if it could not."""

    def start(self) -> None:
        """Start writing, in a task of the running event loop."""
        self._task = asyncio.get_running_loop().create_task(self._write_all(), name="jurybox-plan")

    def stop(self) -> None:
        """Write no chunk after the one being written (the run was stopped; a resume writes the rest)."""
        self._stopping = True

    async def wait(self) -> None:
        """Until the plan is whole, or the writer stopped or failed."""
        if self._task is not None:
            await asyncio.shield(self._task)

    async def _write_all(self) -> None:
        try:
            while not self._stopping:
                if await self._thread.call(self._write_next):
                    self.complete = True
                    return
        except Exception as exc:
            self.error = f"the run's plan could not be written past case {self.written}: {type(exc).__name__}: {exc}"
            self._on_error()

    def _write_next(self) -> bool:
        """On the store thread: read the next chunk, write it in one transaction; True once the plan is whole."""
        part, last = plan_chunk(self._pairs)
        self._plans.extend_plan(self._run_id, part, first=self.written, last=last)
        self.written += len(part)
        return last
