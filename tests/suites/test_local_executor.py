"""LocalExecutor hands each finished case to the runner from the task that judged it.

What a stop must keep: a case whose hand-over has begun is a result (its record
is written); the cases still being judged are abandoned (a resume re-runs them);
no case is handed over twice. A bug in the runner's own code is raised, not
swallowed as a case failure.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, cast

import pytest

from jurybox.core import CaseRecord, Judgment
from jurybox.engine import CaseDone, CaseExecutor
from jurybox.executors import LocalExecutor
from jurybox.models import Spend
from jurybox.suites import Case


@dataclass
class _Named:
    name: str


class _Cases:
    """A CaseExecutor stand-in: case ``slow-*`` waits until released, every other one passes at once."""

    def __init__(self) -> None:
        self.spend = Spend()
        self.release = asyncio.Event()
        self.started: list[str] = []
        self.closed = False

    async def execute(self, case: Any, run_id: str) -> CaseRecord:
        self.started.append(case.name)
        if case.name.startswith("slow"):
            await self.release.wait()
        return CaseRecord(case.name, Judgment.passed(reasoning=f"{run_id} ok"))

    async def aclose(self) -> None:
        self.closed = True


def _executor(cases: _Cases, concurrency: int) -> LocalExecutor:
    return LocalExecutor(cast(CaseExecutor, cases), concurrency)


def _plan(*names: str) -> list[Case]:
    return [cast(Case, _Named(name)) for name in names]


async def test_every_case_is_handed_over_once_with_its_record() -> None:
    cases = _Cases()
    executor = _executor(cases, concurrency=3)
    executor.start("run-1", _plan(*(f"c{i}" for i in range(10))))
    taken: list[CaseDone] = []

    async def take(done: CaseDone) -> None:
        taken.append(done)

    await executor.run(take)
    assert sorted(done.case for done in taken) == sorted(f"c{i}" for i in range(10))
    assert all(done.record is not None and done.record.judgment.reasoning == "run-1 ok" for done in taken)
    assert executor.summary().status == "completed"
    await executor.aclose()
    assert cases.closed


async def test_a_stop_keeps_the_case_being_handed_over_and_abandons_the_ones_being_judged() -> None:
    cases = _Cases()
    executor = _executor(cases, concurrency=2)
    executor.start("run-1", _plan("fast", "slow-1", "slow-2", "never"))
    handing_over = asyncio.Event()
    finish_hand_over = asyncio.Event()
    taken: list[str] = []

    async def take(done: CaseDone) -> None:
        handing_over.set()
        await finish_hand_over.wait()  # a store catching up: the stop arrives in the middle of this
        taken.append(done.case)

    running = asyncio.create_task(executor.run(take))
    await handing_over.wait()
    await asyncio.sleep(0)  # let the other task start judging its slow case
    executor.stop()
    finish_hand_over.set()
    await asyncio.wait_for(running, timeout=5)
    assert taken == ["fast"]  # handed over in full although the stop came during it
    assert "never" not in cases.started  # no new case after the stop
    assert executor.summary().status == "interrupted"


async def test_a_stop_before_the_run_runs_nothing() -> None:
    cases = _Cases()
    executor = _executor(cases, concurrency=2)
    executor.start("run-1", _plan("a", "b"))
    executor.stop()

    async def take(done: CaseDone) -> None:
        raise AssertionError("nothing should be handed over")

    await executor.run(take)
    assert cases.started == []


async def test_a_bug_in_the_runners_hand_is_raised_not_taken_for_a_case_failure() -> None:
    cases = _Cases()
    executor = _executor(cases, concurrency=2)
    executor.start("run-1", _plan("a", "b", "c"))

    async def take(done: CaseDone) -> None:
        raise KeyError("the runner's own bug")

    with pytest.raises(KeyError, match="the runner's own bug"):
        await asyncio.wait_for(executor.run(take), timeout=5)
