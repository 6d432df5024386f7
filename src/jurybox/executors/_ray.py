"""``RayExecutor``: ``jurybox run --executor ray``, the run's cases on long-lived Ray actors.

The driver (this process) opens the run, starts N actors (``CaseActor``, each
with its share of the concurrency) and keeps each one fed: a batch of case
names goes to an actor whenever it has no more than its share left to finish,
so it is never idle and never holds more than two shares. Each batch is a
streaming call whose chunks of finished cases arrive as they finish and go to
the runner one case at a time; nothing holds a list of the run's results.

Exactly once, under faults: the driver knows, per batch, which cases it has
heard of. A batch whose actor dies gives its other cases back to the queue,
first in line, for the actors that are still up (a case the store already has,
written by an actor that died before it said so, is not written twice: the
store keeps a case's first record). The actor is restarted by Ray and given
work again once it answers; one that fails ``MAX_ACTOR_FAILURES`` times is
retired, with the reason in the run's summary, and the run goes on with the
rest. A case lost with its actor ``MAX_CASE_LOSSES`` times (one that kills its
process, say) is left for ``--resume`` instead of taking every actor down.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import uuid
from collections import deque
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from jurybox.core import LessonNote, RunStatus
from jurybox.engine import CaseDone, ExecutorSummary, TakeResult, WorkerPlacement
from jurybox.executors import _ray_cluster as cluster
from jurybox.executors._ray_actor import CaseActor
from jurybox.executors._ray_rates import start_rate_signal, stop_rate_signal
from jurybox.executors._ray_setup import (
    ActorSetup,
    ActorStats,
    Chunk,
    RaySettings,
    Work,
    default_suite_loader,
    work_name,
)
from jurybox.models import Spend, split_evenly
from jurybox.suites import Case, CaseLine, StreamedCases, Suite

MAX_ACTOR_FAILURES = 3
"""Deaths (or failed batches) after which an actor is retired and the run goes on without it."""
MAX_CASE_LOSSES = 3
"""Times a case may be lost with a dying actor before it is left for ``--resume``."""
ACTOR_RESTART_TIMEOUT = 120.0
"""Seconds a failed actor gets to come back (Ray restarts it: a new process loads the suite) before it is retired."""
ACTOR_CLOSE_TIMEOUT = 10.0
"""Seconds the actors get, together, to close their agents and connections at the end before they are killed."""
RESTART_POLL = 0.5
"""Seconds between the driver's questions to a restarting actor."""


@dataclass(eq=False)
class _Slot:
    """One actor, as the driver sees it."""

    index: int
    actor: Any
    share: int
    unfinished: int = 0
    """Cases sent to it that the driver has not heard of yet."""
    finished: int = 0
    """Cases it finished, as the driver heard (a restarted actor's earlier lives included)."""
    failures: int = 0
    state: Literal["ready", "recovering", "retired"] = "ready"
    error: str = ""


class RayExecutor:
    """Runs cases on Ray actors; records come back to the driver, or the actors write them (``open_store``).

    Args:
        suite: The loaded suite (the driver's copy: each actor loads its own).
        concurrency: Cases in flight across all actors; each gets its share.
        settings: The cluster, the actor count, how actors load the suite and open the store.
        timeout: Seconds per case, overriding the suite's (None keeps them).
        retries: Extra attempts after an agent crash or timeout, overriding the suite's.
        lessons: Each case's stored lessons, fetched once by the driver (the actors get them when they start).
    """

    def __init__(
        self,
        suite: Suite,
        concurrency: int,
        settings: RaySettings,
        *,
        timeout: float | None = None,
        retries: int | None = None,
        lessons: Mapping[str, Sequence[LessonNote]] | None = None,
    ) -> None:
        self._suite = suite
        self._lessons = lessons or {}
        self._concurrency = concurrency
        self._settings = settings
        self._timeout = timeout
        self._retries = retries
        self._owns_ray = False
        self._client = False
        """Joined through Ray Client (``ray://``): batches come back whole."""
        self._rates: Any = None  # the run's RateSignalActor: a 429 on one actor pauses all of them
        self._slots: list[_Slot] = []
        self._todo: Iterator[Case | CaseLine] = iter(())
        self._unsent = 0
        """Cases in ``_todo`` not sent yet (a cases file's are read from it as they are sent)."""
        self._again: deque[Work] = deque()
        """Cases lost with an actor, sent again before any new one."""
        self._losses: dict[str, int] = {}
        self._given_up: list[str] = []
        self._streams: set[asyncio.Task[None]] = set()
        self._recoveries: set[asyncio.Task[None]] = set()
        self._latest: dict[str, Spend] = {}
        self._store_errors: list[str] = []
        self._problems: list[str] = []
        self._take: TakeResult | None = None
        self._idle: asyncio.Future[None] | None = None
        self._stopping = False
        self.actor_stats: list[ActorStats] = []
        """Each actor's process, node, peak memory and cases, read when the run ends (for benchmarks)."""
        self._stats_by_actor: dict[int, ActorStats] = {}
        self._stats_read = False

    def start(self, run_id: str, cases: Sequence[Case]) -> None:
        """Connect to Ray (or start a local one) and start the actors; they load the suite while the run begins.

        Raises:
            ExecutorError: ray is not installed, or its cluster cannot be reached.
        """
        settings = self._settings
        self._owns_ray = cluster.connect(settings.address, cpus=settings.actors or cluster.LOCAL_CPUS)
        self._client = cluster.is_client()
        self._todo = cases.items() if isinstance(cases, StreamedCases) else iter(cases)
        self._unsent = len(cases)
        wanted = settings.actors or cluster.cluster_cpus()
        count = max(1, min(wanted, self._concurrency, len(cases)))
        load = settings.load_suite or default_suite_loader(self._suite, self._concurrency)
        remote = cluster.import_ray().remote(CaseActor)
        tag = f"jurybox-{run_id[:12]}-{uuid.uuid4().hex[:6]}"
        rates, self._rates = start_rate_signal(tag)
        nodes = cluster.actor_nodes()
        for index, share in enumerate(split_evenly(self._concurrency, count)):
            setup = ActorSetup(
                run_id=run_id,
                index=index,
                count=count,
                concurrency=share,
                load_suite=load,
                judge_model=self._suite.judge_model,
                timeout=self._timeout,
                retries=self._retries,
                open_store=settings.open_store,
                lessons=self._lessons,
                rate_signal=rates,
            )
            actor = remote.options(
                name=f"{tag}-{index}",
                num_cpus=0,  # it waits on the network: no CPU held, and no free CPU needed to place it where it is sent
                max_restarts=MAX_ACTOR_FAILURES - 1,
                max_task_retries=0,  # a lost batch is the driver's to send again: it knows which cases finished
                scheduling_strategy=cluster.placement_for(nodes, index),
                runtime_env=cluster.actor_runtime_env() or None,
            ).remote(setup)
            self._slots.append(_Slot(index, actor, share))

    async def run(self, take: TakeResult) -> None:
        """Feed the actors until every case finished, every actor was retired, or ``stop``."""
        self._take = take
        self._idle = asyncio.get_running_loop().create_future()
        self._feed()
        self._check_idle()
        try:
            await self._idle
        finally:
            tasks = self._streams | self._recoveries
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        await self._read_stats()

    @property
    def spend(self) -> Spend:
        """The sum of every actor's latest running total (a restarted actor's earlier life included)."""
        total = Spend()
        for spend in self._latest.values():
            total.merge(spend)
        return total

    def stop(self) -> None:
        """Ask every actor to stop as Ctrl-C does: no new cases, finished ones still arrive."""
        self._stopping = True
        for slot in self._slots:
            if slot.state != "retired":
                slot.actor.stop.remote()
        self._check_idle()

    def summary(self) -> ExecutorSummary:
        problems = list(self._problems)
        unjudged = self._pending() + len(self._given_up)
        if self._given_up:
            shown = ", ".join(self._given_up[:5]) + (" ..." if len(self._given_up) > 5 else "")
            problems.append(
                f"{len(self._given_up)} case(s) were lost with a dying actor {MAX_CASE_LOSSES} times ({shown}); "
                "they have no result (resume the run to judge them)"
            )
        if self._pending() and not self._stopping:
            problems.append(
                f"{self._pending()} case(s) have no result: every actor was retired (resume the run to judge them)"
            )
        status: RunStatus = "interrupted" if self._stopping else "failed" if unjudged else "completed"
        placement = [
            WorkerPlacement(f"actor {slot.index}", stats.node, stats.address, stats.pid, slot.finished)
            for slot in self._slots
            if (stats := self._stats_by_actor.get(slot.index)) is not None
        ]
        return ExecutorSummary(status, list(self._store_errors), problems, placement)

    async def aclose(self) -> None:
        """Read the actors' figures (unless the run did), let each close its agent and connections, kill it."""
        await self._read_stats()
        live = [slot for slot in self._slots if slot.state != "retired"]
        if live:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(ACTOR_CLOSE_TIMEOUT):
                    await asyncio.gather(*(_get(slot.actor.close.remote()) for slot in live))
        for slot in self._slots:
            cluster.kill(slot.actor)
        stop_rate_signal(self._rates)
        if self._owns_ray:
            self._owns_ray = False
            cluster.disconnect()

    async def _read_stats(self) -> None:
        """Each live actor's process, node, memory and cases, once, at the end (one that does not answer: left out)."""
        if self._stats_read:
            return
        self._stats_read = True
        live = [slot for slot in self._slots if slot.state != "retired"]
        if not live:
            return
        with contextlib.suppress(Exception):
            async with asyncio.timeout(ACTOR_CLOSE_TIMEOUT):
                stats = await asyncio.gather(*(_get(slot.actor.stats.remote()) for slot in live))
                self._stats_by_actor = {slot.index: found for slot, found in zip(live, stats, strict=True)}
                self.actor_stats = list(stats)

    # -- feeding the actors ------------------------------------------------------------------------

    def _pending(self) -> int:
        return len(self._again) + self._unsent

    def _next_batch(self, size: int) -> list[Work]:
        """Up to ``size`` cases: lost ones first, then the next never sent (a name, or a cases file's line)."""
        batch: list[Work] = []
        while self._again and len(batch) < size:
            batch.append(self._again.popleft())
        wanted = min(size - len(batch), self._unsent)
        before = len(batch)
        for item in itertools.islice(self._todo, wanted):
            batch.append(item if isinstance(item, CaseLine) else item.name)
        taken = len(batch) - before
        self._unsent = self._unsent - taken if taken == wanted else 0  # ran dry: nothing more will come
        return batch

    def _feed(self) -> None:
        """Give every ready actor with no more than its share left a batch of one share (the least busy first)."""
        if self._stopping:
            return
        ready = sorted((s for s in self._slots if s.state == "ready"), key=lambda s: s.unfinished / s.share)
        for slot in ready:
            while slot.unfinished <= slot.share and self._pending():
                batch = self._next_batch(slot.share)
                if not batch:
                    break
                slot.unfinished += len(batch)
                task = asyncio.create_task(self._stream(slot, batch), name=f"jurybox-ray-batch-{slot.index}")
                self._streams.add(task)
                task.add_done_callback(self._stream_ended)

    def _stream_ended(self, task: asyncio.Task[None]) -> None:
        self._streams.discard(task)
        failure = None if task.cancelled() else task.exception()
        if failure is not None and self._idle is not None and not self._idle.done():
            self._idle.set_exception(failure)  # a driver bug, not a case failure: the run must not hide it
            return
        self._check_idle()

    def _check_idle(self) -> None:
        """End ``run`` once nothing is in flight and nothing more can be sent (a restarting actor still may)."""
        if self._idle is None or self._idle.done() or self._streams:
            return
        if self._stopping or not self._pending() or all(s.state == "retired" for s in self._slots):
            self._idle.set_result(None)

    async def _stream(self, slot: _Slot, batch: list[Work]) -> None:
        """One batch on one actor: each case it finishes to the runner; on failure, the rest back in line."""
        left = {work_name(item): item for item in batch}
        take = self._take
        assert take is not None
        try:
            async for chunk in self._chunks(slot, batch):
                self._latest[chunk.actor] = chunk.spend
                self._store_errors.extend(chunk.store_errors)
                spend = self.spend
                for item in chunk.finished:
                    if item.case not in left:
                        continue
                    del left[item.case]
                    slot.unfinished -= 1
                    slot.finished += 1
                    self._losses.pop(item.case, None)
                    await take(CaseDone(item.case, item.status, item.llm_skipped, spend, item.record))
                self._feed()
        except asyncio.CancelledError:
            raise
        except Exception as error:
            if not cluster.is_ray_error(error):
                raise
            slot.unfinished -= len(left)
            if not self._stopping:
                self._send_again(left)
                self._failed(slot, error)
        else:
            slot.unfinished -= len(left)
            if left and not self._stopping:  # an actor stopped by someone else: its cases are not lost
                self._send_again(left)
                self._feed()

    async def _chunks(self, slot: _Slot, batch: list[Work]) -> AsyncIterator[Chunk]:
        """The batch's chunks as the actor sends them; through Ray Client (``ray://``), all of them when it ends.

        Ray Client cannot stream an actor's results: there the driver hears of a batch's cases
        at its end, and an actor that dies mid-batch has all of them sent again (the store keeps
        a case's first record, so none is stored twice).
        """
        if self._client:
            for chunk in await slot.actor.run_whole_batch.remote(batch):
                yield chunk
            return
        async for ref in slot.actor.run_batch.options(num_returns="streaming").remote(batch):
            yield await ref

    def _send_again(self, lost: dict[str, Work]) -> None:
        """Put cases lost with an actor first in line (in their order), or give up on one lost too often."""
        again = []
        for name, item in lost.items():
            losses = self._losses.get(name, 0) + 1
            if losses >= MAX_CASE_LOSSES:
                self._losses.pop(name, None)
                self._given_up.append(name)
            else:
                self._losses[name] = losses
                again.append(item)
        self._again.extendleft(reversed(again))

    def _failed(self, slot: _Slot, error: BaseException) -> None:
        """Count an actor's failure (once per death, however many batches it had) and wait for it to come back."""
        if slot.state != "ready":
            return
        slot.failures += 1
        slot.error = cluster.describe(error)
        if slot.failures >= MAX_ACTOR_FAILURES:
            self._retire(slot)
            return
        slot.state = "recovering"
        task = asyncio.create_task(self._recover(slot), name=f"jurybox-ray-recover-{slot.index}")
        self._recoveries.add(task)
        task.add_done_callback(self._recovered)
        self._feed()  # its cases, to the others

    def _recovered(self, task: asyncio.Task[None]) -> None:
        self._recoveries.discard(task)
        self._check_idle()

    async def _recover(self, slot: _Slot) -> None:
        """Wait for Ray to restart the actor; give it work again once it answers, or retire it."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + ACTOR_RESTART_TIMEOUT
        while not self._stopping:
            try:
                async with asyncio.timeout(max(0.0, deadline - loop.time())):
                    await _get(slot.actor.stats.remote())
            except TimeoutError:
                slot.error += f"; it did not come back within {ACTOR_RESTART_TIMEOUT:g}s"
                self._retire(slot)
                return
            except Exception as error:
                if not cluster.is_ray_error(error):
                    raise
                if cluster.is_gone_for_good(error):  # the same death, now known to be for good
                    slot.error = cluster.describe(error)
                    self._retire(slot)
                    return
                await asyncio.sleep(RESTART_POLL)  # still restarting
            else:
                slot.state = "ready"
                self._feed()
                return

    def _retire(self, slot: _Slot) -> None:
        slot.state = "retired"
        cluster.kill(slot.actor)
        self._problems.append(
            f"actor {slot.index} was retired after {slot.failures} failure(s) ({slot.error}); "
            "the run went on without it and its unfinished cases were sent to the other actors"
        )
        self._feed()
        self._check_idle()


async def _get(ref: Any) -> Any:
    """The value of a Ray object reference, awaited on this event loop."""
    return await ref
