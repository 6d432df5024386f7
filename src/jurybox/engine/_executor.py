"""The executor interface: planned cases in, each case's result out as it finishes.

The runner opens the run, hands the cases to an executor and takes each result
it hands back: a record to write (the in-process pool) or a summary of a record
the executor already wrote itself (worker processes, and on a cluster the Ray
actors writing to PostgreSQL). Progress, Ctrl-C, the store and the run's
summary stay the runner's; where and how the cases run is the executor's.

Results are pushed (``run(take)``), not pulled: the in-process pool calls
``take`` from the task that finished the case, so a result costs no queue hop
and no task switch. Executors whose results arrive from elsewhere (pipes,
actors) yield them from ``results()`` and get ``run`` from ``StreamedResults``.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from jurybox.core import CaseRecord, RunStatus, Status
from jurybox.models import Spend
from jurybox.suites import Case

if TYPE_CHECKING:
    from jurybox.engine._runner import RunOptions, SuiteRunner


@dataclass(frozen=True)
class CaseDone:
    """One finished case, as an executor reports it.

    Attributes:
        case: The case's name.
        status: Its verdict.
        llm_skipped: Its LLM judges were left out for want of a judge model.
        spend: The executor's running total of judge-model spend, for the progress bar.
        record: The whole record for the runner to write; None when the executor stored it itself.
    """

    case: str
    status: Status
    llm_skipped: bool
    spend: Spend
    record: CaseRecord | None = None


@dataclass(frozen=True)
class WorkerPlacement:
    """Where one of an executor's long-lived workers (a Ray actor) ran, and how many cases it finished.

    Attributes:
        worker: Its name in the run's summary (``actor 0``).
        node: The machine it ran on (a Ray node's id).
        address: That machine's IP address.
        pid: Its process id there.
        cases: Cases it finished.
    """

    worker: str
    node: str
    address: str
    pid: int
    cases: int


@dataclass
class ExecutorSummary:
    """How an executor's share of the run ended, read once its results are exhausted.

    Attributes:
        status: ``completed``, ``interrupted`` (stopped) or ``failed`` (part of it died).
        store_errors: Writes it made itself that failed.
        problems: Parts of it (worker processes, actors) that ended before finishing their cases, and how.
        placement: Where its workers ran (the Ray executor's actors that answered at the end); empty for others.
    """

    status: RunStatus
    store_errors: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    placement: list[WorkerPlacement] = field(default_factory=list)


TakeResult = Callable[[CaseDone], Awaitable[None]]
"""The runner's hand for finished cases: counts, shows and writes one (may wait while the store catches up)."""


class Executor(Protocol):
    """Runs planned cases and hands each result to the runner as it finishes (no list of all results is kept).

    jurybox's own are in ``jurybox.executors``: ``local`` (a task pool in this process),
    ``processes`` (``--workers N`` forked processes) and ``ray`` (actors on a Ray cluster).
    """

    def start(self, run_id: str, cases: Sequence[Case]) -> None:
        """Prepare to run ``cases`` for run ``run_id`` (inside the event loop, before any progress thread)."""
        ...

    async def run(self, take: TakeResult) -> None:
        """Run the cases, awaiting ``take`` once per finished case; returns when all ran or soon after ``stop``.

        A case whose ``take`` has begun counts as finished: a stop never loses it.
        """
        ...

    @property
    def spend(self) -> Spend:
        """Judge-model calls, tokens and cost of the cases it ran so far."""
        ...

    def stop(self) -> None:
        """Take no new case; the results end soon after (cases in flight are abandoned and re-run on resume)."""
        ...

    def summary(self) -> ExecutorSummary:
        """How the run ended; valid once ``results`` is exhausted."""
        ...

    async def aclose(self) -> None:
        """Release the agent and connections it holds."""
        ...


class StreamedResults:
    """``run`` for executors whose results arrive as a stream (worker pipes, actors): each one, in turn, to ``take``."""

    def results(self) -> AsyncGenerator[CaseDone, None]:
        """Each finished case, once, in the order they finish; ends when all ran or soon after ``stop``."""
        raise NotImplementedError

    async def run(self, take: TakeResult) -> None:
        results = self.results()
        try:
            async for done in results:
                await take(done)
        finally:
            await results.aclose()


class ExecutorPlugin(Protocol):
    """An executor kind as the plug-in registry holds it (kind ``executor``): checks a run's options, builds executors.

    Register one with ``jurybox.core.PluginRegistry.default().register("executor", NAME, plugin)``
    (or lazily by ``"package.module:attribute"``); ``RunOptions(executor=NAME)`` and
    ``jurybox run --executor NAME`` then use it.
    """

    def check_options(self, options: RunOptions) -> None:
        """Refuse options that cannot work together (called when ``RunOptions`` is made).

        Raises:
            ValueError: the reason.
        """
        ...

    def check(self, options: RunOptions, *, has_store: bool, own_target: bool) -> None:
        """Refuse, before a run is opened, options this executor cannot run here.

        Raises:
            ValueError: the reason, worded for the command line.
        """
        ...

    def create(self, runner: SuiteRunner, todo: int) -> Executor:
        """An executor for ``todo`` cases of ``runner``'s run (its options, suite, case executor and store)."""
        ...
