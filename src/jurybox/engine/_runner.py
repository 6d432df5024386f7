"""The suite runner: opens a run, hands its cases to an executor, streams results to the store.

Where the work happens is split by job: ``_execute`` runs and judges one case,
the executors (``jurybox.executors``, found through the plug-in registry) run
many, and ``_writer`` commits finished records in batches on one thread.
This module holds what a run is: its options, resume, progress, Ctrl-C and the
result. An agent that crashes, hangs or returns garbage makes its case ERROR
with the reason; the run goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import signal
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Protocol, cast

from jurybox.agents import Target
from jurybox.core import CaseRecord, Judgment, RunDetails, RunStatus, Status
from jurybox.engine._execute import CaseExecutor
from jurybox.engine._executor import CaseDone, Executor, WorkerPlacement
from jurybox.engine._executor_choice import (
    LOCAL,
    check_executor,
    check_executor_options,
    choose_executor,
    executor_plugin,
)
from jurybox.engine._lessons import LESSON_CHARS, LESSON_LIMIT, fetch_lessons
from jurybox.engine._plan_writer import PlanPairs, PlanWriter, plan_chunk
from jurybox.engine._resume import resumable_cases, unplanned_cases
from jurybox.engine._sql import SqlPort
from jurybox.engine._store_port import PlanLog, RunStore
from jurybox.engine._verdict import LLM_SKIPPED, llm_was_skipped
from jurybox.engine._writer import BatchedWriter, StoreThread
from jurybox.judges import SqlDatabases
from jurybox.models import Spend, use_connection_share
from jurybox.suites import Case, StreamedCases, Suite, case_specs, remaining_cases

DEFAULT_CONCURRENCY = 8


class ProgressSink(Protocol):
    """Where the runner reports progress (the CLI's rich progress bar)."""

    def start(self, suite: str, total: int, done: int) -> None: ...

    def case_done(self, record: CaseRecord, spend: Spend) -> None: ...

    def stop(self) -> None: ...


class RecordTally(Protocol):
    """Told of each case as the run takes it (the report's ``LiveTally``, adding up the run's totals)."""

    def add(self, record: CaseRecord) -> None:
        """A finished case's record."""
        ...

    def miss(self, case: str) -> None:
        """A finished case whose record this process never saw (a worker process stored it)."""
        ...


@dataclass(frozen=True)
class RunOptions:
    """How to run a suite.

    Attributes:
        concurrency: Cases in flight at once.
        selectors: Only cases whose name, tag or name glob matches one of these.
        timeout: Seconds per case, overriding the suite's (None keeps them).
        retries: Extra attempts after an agent crash or timeout, overriding the suite's.
        git_commit: Recorded with the run.
        agent_version: Recorded with the run.
        workers: Processes that run the cases: above 1, the run forks that many workers, each
            running every N-th case with its share of ``concurrency`` and writing its records
            to the store. Needs a store, ``os.fork`` and the suite's own agent spec.
        executor: The registered executor that runs the cases: ``local`` (``processes`` when
            ``workers`` > 1), ``processes``, ``ray``, or one an installed plug-in adds.
        executor_settings: The executor's own settings (``jurybox.executors.RaySettings`` for
            ``ray``); None: its defaults.
        lessons: Stored lessons each case is handed at most (0: none), most relevant first.
        lesson_chars: Characters of lesson text each case is handed at most.
        extra_config: More facts recorded in the run's config in the store (the git branch and
            whether the working tree had changes; an experiment's plan); the runner's own keys win.
        experiment_id: The experiment this run is one variant of (stored with the run); None: none.
        variant: The variant of the experiment this run is.
    """

    concurrency: int = DEFAULT_CONCURRENCY
    selectors: tuple[str, ...] = ()
    timeout: float | None = None
    retries: int | None = None
    git_commit: str | None = None
    agent_version: str | None = None
    workers: int = 1
    executor: str = LOCAL
    executor_settings: Any = field(default=None, compare=False)
    lessons: int = LESSON_LIMIT
    lesson_chars: int = LESSON_CHARS
    extra_config: Mapping[str, Any] = field(default_factory=dict, hash=False)
    experiment_id: str | None = None
    variant: str | None = None

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {self.concurrency}")
        if isinstance(self.workers, bool) or not isinstance(self.workers, int) or self.workers < 1:
            raise ValueError(f"workers must be a whole number >= 1, got {self.workers!r}")
        if self.timeout is not None and self.timeout <= 0:
            raise ValueError(f"timeout must be positive seconds, got {self.timeout}")
        if self.retries is not None and self.retries < 0:
            raise ValueError(f"retries must be >= 0, got {self.retries}")
        if self.lessons < 0 or self.lesson_chars < 1:
            raise ValueError(f"lessons must be >= 0 and lesson_chars >= 1, got {self.lessons}, {self.lesson_chars}")
        check_executor_options(self)


@dataclass
class RunResult:
    """What a run produced.

    Attributes:
        records: Every case of the run, including those judged before a resume, in suite order.
            With a store they are read back from it on each pass (the store's lazy sequence), so
            a run of any size holds none of them in memory; without one they are a list.
        status: ``completed`` or ``interrupted``.
        resumed: Cases already recorded when this session started.
        spend: Judge-model calls, tokens and cost of this session.
        store_errors: Writes that failed (the run went on; the store misses these cases).
        llm_skipped_cases: Cases whose LLM judges were left out for want of a judge model.
        worker_errors: Worker processes that ended before finishing their cases, and how.
        placement: Where the executor's long-lived workers ran (the Ray executor's actors: node, cases).
    """

    suite: str
    run_id: str
    records: Sequence[CaseRecord]
    status: str
    started_at: datetime
    finished_at: datetime
    judge_model: str | None
    llm_skipped: bool
    spend: Spend = field(default_factory=Spend)
    resumed: int = 0
    total_cases: int = 0
    store_errors: list[str] = field(default_factory=list)
    llm_skipped_cases: int = 0
    worker_errors: list[str] = field(default_factory=list)
    placement: list[WorkerPlacement] = field(default_factory=list)

    def count(self, status: Status) -> int:
        return self._status_counts()[status]

    def _status_counts(self) -> Counter[Status]:
        status_counts = getattr(self.records, "status_counts", None)
        if callable(status_counts):
            return cast(Counter[Status], status_counts())  # no judgment tree is read for a count
        return Counter(r.status for r in self.records)

    @property
    def ok(self) -> bool:
        """True when every selected case passed, the run finished and every record was stored.

        A run that judged no case (a selector that matched nothing) is not ok: a gate must not pass on it.
        """
        return (
            self.status == "completed"
            and not self.store_errors
            and not self.worker_errors
            and bool(self.records)
            and len(self.records) >= self.total_cases
            and self.count(Status.PASS) == len(self.records)
        )


class SuiteRunner:
    """Runs one suite's cases against its agent.

    Args:
        suite: The loaded suite.
        options: Concurrency, filters, timeouts, retries, worker processes.
        target: The agent (default: built from the suite's ``agent:``).
        store: Where records go as each case finishes (None: kept in memory only).
        progress: A progress sink, or None.
        databases: Where SQL checks query the agent's databases (default: ``jurybox.judges.SqlDatabases``).
        on_open: Told the run's id as soon as the run is opened (or, resuming, found) in the store.
        tally: Told of each case as it is taken (its record, or that a worker process kept it), so
            the run's totals need not be read back from the store afterwards.
    """

    def __init__(
        self,
        suite: Suite,
        options: RunOptions | None = None,
        *,
        target: Target | None = None,
        store: RunStore | None = None,
        progress: ProgressSink | None = None,
        databases: SqlPort | None = None,
        on_open: Callable[[str], None] | None = None,
        tally: RecordTally | None = None,
    ) -> None:
        self.suite = suite
        self.options = options or RunOptions()
        self.store = store
        self.progress = progress
        self.store_errors: list[str] = []
        """Writes that failed (the run went on; the store misses these cases)."""
        self._own_target = target is None
        self._databases = databases if databases is not None else SqlDatabases()
        self._cases = CaseExecutor(
            suite, self._databases, target=target, timeout=self.options.timeout, retries=self.options.retries
        )
        self._thread: StoreThread | None = None
        self._writer: BatchedWriter | None = None
        self._executor: Executor | None = None
        self._stopping = False
        self._worker_errors: list[str] = []
        self._placement: list[WorkerPlacement] = []
        self._llm_skipped_cases = 0
        self._kept: list[CaseRecord] | None = None
        self._on_open = on_open
        self._tally = tally
        self._plan: PlanWriter | None = None
        self._rest_of_plan: tuple[PlanPairs, int] | None = None  # (pairs still to store, cases stored)

    @property
    def spend(self) -> Spend:
        """Judge-model calls, tokens and cost of this session so far."""
        return self._executor.spend if self._executor is not None else self._cases.spend

    @property
    def case_executor(self) -> CaseExecutor:
        """Runs and judges one case of this runner's suite (what an in-process executor drives)."""
        return self._cases

    def stop(self) -> None:
        """Stop taking new cases and abandon those in flight (they are re-run on resume)."""
        self._stopping = True
        if self._plan is not None:
            self._plan.stop()
        if self._executor is not None:
            self._executor.stop()

    async def execute(self, case: Case, run_id: str) -> CaseRecord:
        """Run and judge one case; never raises for agent or judge failures (ERROR record instead)."""
        return await self._cases.execute(case, run_id)

    async def run(self, *, resume: str | None = None) -> RunResult:
        """Run the suite (or, with ``resume``, only the cases that run has not recorded)."""
        started_at = datetime.now(UTC)
        if resume is not None and self.options.selectors:
            raise ValueError("--resume finishes the cases the run planned; it takes no --filter")
        cases = self.suite.select(self.options.selectors)
        if self.store is not None:
            self._thread = StoreThread()
        try:
            # The agent first: a bad agent spec must fail before a run is opened in the store.
            self._cases.target()
            check_executor(self.options, has_store=self.store is not None, own_target=self._own_target)
            if resume is not None:
                cases = await self._resumed_cases(resume, cases)
            run_id, done = await self._open_run(cases, resume)
            if self._on_open is not None:
                self._on_open(run_id)
            todo = remaining_cases(cases, done)
            if self.store is not None:  # once, before any case starts (and before workers fork)
                self._cases.lessons = await fetch_lessons(
                    self.store, self._store_call, self.suite.name, todo,
                    limit=self.options.lessons, max_chars=self.options.lesson_chars,
                )  # fmt: skip
            # Kept only without a store: with one, each record is written as its case ends and dropped.
            kept: list[CaseRecord] | None = [] if self.store is None else None
            # Workers are forked before the progress bar starts its refresh thread: a thread holding
            # a lock (the terminal's, say) at the fork would leave that lock held in the worker forever.
            executor = self._executor_for(todo)
            executor.start(run_id, todo)
            self._start_plan_writer(run_id)  # after the fork: no worker copies its thread's work
            if self.progress is not None:
                self.progress.start(self.suite.name, len(cases), len(cases) - len(todo))
            status = await self._plan_written(await self._consume(run_id, executor, kept))
            records = await self._finish(run_id, status, cases, kept)
            if done:  # cases judged before the restart: one pass over their stored records
                self._llm_skipped_cases += sum(1 for r in records if r.case in done and llm_was_skipped(r))
        finally:
            if self.progress is not None:
                self.progress.stop()
            await self._close()
        return RunResult(
            suite=self.suite.name,
            run_id=run_id,
            records=records,
            status=status,
            started_at=started_at,
            finished_at=datetime.now(UTC),
            judge_model=self.suite.judge_model,
            llm_skipped=self._llm_left_out(cases),
            spend=self.spend,
            resumed=len(cases) - len(todo),
            total_cases=len(cases),
            store_errors=list(self.store_errors),
            llm_skipped_cases=self._llm_skipped_cases,
            worker_errors=list(self._worker_errors),
            placement=list(self._placement),
        )

    async def run_share(self, run_id: str, cases: Sequence[Case]) -> RunStatus:
        """Run ``cases`` of a run someone else opened and will finish (a worker process's share)."""
        self._thread = StoreThread()
        try:
            self._cases.target()
            executor = executor_plugin(LOCAL).create(self, len(cases))
            self._executor = executor
            executor.start(run_id, cases)
            if self._stopping:
                executor.stop()
            return await self._consume(run_id, executor, None)
        finally:
            await self._close()

    # -- the run's life ----------------------------------------------------------------------------

    def _executor_for(self, todo: Sequence[Case]) -> Executor:
        executor = choose_executor(self, len(todo))
        self._executor = executor
        if self._stopping:
            executor.stop()
        return executor

    def _llm_left_out(self, cases: Sequence[Case]) -> bool:
        """Whether the run's cases have LLM judges left out for want of a judge model."""
        if self.suite.llm_enabled:  # no LLM judge is left out: no pass over (a million, lazily built) cases
            return False
        if self._llm_skipped_cases:
            return True
        if isinstance(cases, StreamedCases) and cases.whole_selection and cases.file.pending is not None:
            first = cases.file.estimate
            if self._stopping and first is not None:  # no wait for the rest of a check an interrupted run stops
                return first.skipped_judges > 0 or any(c.skipped_without_model() for c in cases.inline if not c.skip)
            cases.file.settle()  # the check of a big cases file, running while the cases ran, counted them
        if isinstance(cases, StreamedCases) and cases.whole_selection and cases.file.totals is not None:
            # The load's check pass counted them: no pass that builds every line again.
            inline = any(c.skipped_without_model() for c in cases.inline if not c.skip)
            return cases.file.totals.skipped_judges > 0 or inline
        return any(c.skipped_without_model() for c in cases)

    def _plans(self) -> PlanLog | None:
        """The store's runs, when they take a plan a chunk at a time as the run goes (``jurybox.store``'s do)."""
        runs = self.store.runs if self.store is not None else None
        return cast(PlanLog, runs) if callable(getattr(runs, "extend_plan", None)) else None

    async def _resumed_cases(self, resume: str, cases: Sequence[Case]) -> Sequence[Case]:
        """The cases of the run being resumed: its plan, and the rest of it when the store did not get it whole."""
        # A store that keeps runs' plans (jurybox.store does; a RunStore need not) says what to finish.
        planned_of = getattr(self.store.results, "planned", None) if self.store is not None else None
        if planned_of is None:
            return cases
        planned: list[str] = await self._store_call(planned_of, resume)
        plans = self._plans()
        rest: tuple[str, ...] | None = None
        if plans is not None:
            written, size, selectors = await self._store_call(plans.plan_progress, resume)
            rest = tuple(selectors) if written < size else None
        if rest is not None:  # killed while its plan was written: the resume writes the rest as it goes
            self._rest_of_plan = (iter(_pairs(unplanned_cases(self.suite, rest, planned))), len(planned))
            return resumable_cases(self.suite, planned, resume, rest=rest)
        return resumable_cases(self.suite, planned, resume) if planned else cases

    def _start_plan_writer(self, run_id: str) -> None:
        if self._rest_of_plan is None or self._thread is None:
            return
        plans = self._plans()
        assert plans is not None
        pairs, first = self._rest_of_plan
        self._plan = PlanWriter(plans, self._thread, run_id, pairs, first=first, on_error=self.stop)
        if self._stopping:
            self._plan.stop()
        self._plan.start()

    async def _plan_written(self, status: RunStatus) -> RunStatus:
        """Wait for the plan to be stored whole; a run whose plan is not (stopped, or it failed) is not complete."""
        if self._plan is None:
            return status
        await self._plan.wait()
        if self._plan.error is not None:
            self.store_errors.append(self._plan.error)
        return "interrupted" if status == "completed" and not self._plan.complete else status

    async def _open_run(self, cases: Sequence[Case], resume: str | None) -> tuple[str, set[str]]:
        if self.store is None:
            if resume is not None:
                raise ValueError("--resume needs a store (results of the earlier run live there)")
            return f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(3)}", set()  # the store's id form
        if resume is not None:
            return resume, set(await self._store_call(self.store.results.recorded, resume))
        config = {
            **self.options.extra_config,
            "concurrency": self.options.concurrency,
            "selectors": list(self.options.selectors),
            "suite_file": str(self.suite.path),
            "llm_tier": "enabled" if self.suite.llm_enabled else LLM_SKIPPED,
            "workers": self.options.workers,
        }
        details: RunDetails = {
            "judge_model": self.suite.judge_model,
            "agent_version": self.options.agent_version,
            "git_commit": self.options.git_commit,
            "config": config,
        }
        # Which experiment and variant the run belongs to, when it is one (None: an ordinary run).
        experiment = {"experiment_id": self.options.experiment_id, "variant": self.options.variant}
        plans = self._plans()
        if plans is None:
            run_id = await self._store_call(
                self.store.runs.begin, self.suite.name, cases=case_specs(cases), **details, **experiment
            )
            return str(run_id), set()
        # The run opens with the plan's first chunk; a bigger plan is written while the cases run.
        pairs = iter(_pairs(cases))
        first, whole = await self._store_call(plan_chunk, pairs)
        size = None if whole else len(cases)
        run_id = await self._store_call(
            plans.begin, self.suite.name, cases=first, planned=size, **details, **experiment
        )
        if not whole:
            self._rest_of_plan = (pairs, len(first))
        return str(run_id), set()

    async def _consume(self, run_id: str, executor: Executor, kept: list[CaseRecord] | None) -> RunStatus:
        """Take each result as it comes: keep or write it, count it, show it; Ctrl-C stops the executor."""
        if self.store is not None and self._thread is not None:
            self._writer = BatchedWriter(self.store.results, self._thread, run_id)
        self._kept = kept
        restore = _on_sigint(self.stop)
        try:
            await executor.run(self._take)
        except asyncio.CancelledError:
            self.stop()
        finally:
            restore()
        if self._writer is not None:
            await self._writer.drain()
            self.store_errors.extend(self._writer.errors)
        summary = executor.summary()
        self.store_errors.extend(summary.store_errors)
        self._worker_errors.extend(summary.problems)
        self._placement.extend(summary.placement)
        return "interrupted" if self._stopping and summary.status == "completed" else summary.status

    async def _take(self, done: CaseDone) -> None:
        """One finished case: everything but the store write happens before any wait, so a stop loses none of it."""
        record = done.record
        if done.llm_skipped:
            self._llm_skipped_cases += 1
        if record is not None and self._kept is not None:
            self._kept.append(record)
        if self._tally is not None:
            if record is not None:
                self._tally.add(record)
            else:
                self._tally.miss(done.case)
        if self.progress is not None:
            shown = record or CaseRecord(done.case, Judgment(done.status, reasoning="judged in a worker process"))
            self.progress.case_done(shown, done.spend)
        if record is not None and self._writer is not None:
            await self._writer.put(record)  # queued at once; waits only while the store catches up

    async def _finish(
        self, run_id: str, status: RunStatus, cases: Sequence[Case], kept: list[CaseRecord] | None
    ) -> Sequence[CaseRecord]:
        """Close the run in the store and read its records back (or sort the kept ones)."""
        # A run's records are its plan's cases: a store that keeps plans needs no set of a million names.
        keeps_plans = isinstance(cases, StreamedCases) and hasattr(getattr(self.store, "results", None), "planned")
        wanted = None if keeps_plans else {case.name for case in cases}
        records: Sequence[CaseRecord]
        if self.store is not None:
            await self._store_call(self.store.finish_run, run_id, status)
            records = await self._store_call(self.store.results.records, run_id, cases=wanted)
        else:
            records = kept or []
        if isinstance(records, list | tuple) and wanted is not None:  # a lazy sequence is in plan order already
            positions = {case.name: index for index, case in enumerate(cases)}
            records = sorted(
                (r for r in records if r.case in wanted), key=lambda r: positions.get(r.case, len(positions))
            )
        return records

    async def _store_call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        assert self._thread is not None
        return await self._thread.call(fn, *args, **kwargs)

    async def _close(self) -> None:
        if self._plan is not None:  # only after a runner bug or an executor that raised: the normal end waited
            self._plan.stop()
            await self._plan.wait()
        if self._writer is not None:
            await self._writer.close()  # only after a runner bug: the normal end drains first
        if self._executor is not None:
            await self._executor.aclose()
        else:
            await self._cases.aclose()
        await asyncio.to_thread(self._databases.dispose)
        if self._thread is not None:
            self._thread.shutdown()

    # -- worker processes (--workers) ----------------------------------------------------------------

    def before_fork(self) -> None:
        """No open database connection and no thread crosses the fork (an executor that forks calls this)."""
        before_fork = getattr(self.store, "before_fork", None)
        if callable(before_fork):
            before_fork()
        if self._thread is not None:
            self._thread.pause()

    def after_fork(self) -> None:
        """In the parent, after a fork: start again what ``before_fork`` stopped."""
        if self._thread is not None:
            self._thread.resume()

    def share_runner(self, index: int, count: int, concurrency: int, progress: ProgressSink) -> SuiteRunner:
        """In worker ``index`` of ``count`` (after a fork): the runner of its share, reporting to ``progress``."""
        use_connection_share(index, count)
        runner = SuiteRunner(
            self.suite,
            replace(self.options, concurrency=concurrency, workers=1, executor=LOCAL),
            store=self.store,
            progress=progress,
        )
        runner._cases.lessons = self._cases.lessons  # fetched before the fork; a worker does not ask again
        return runner


def _pairs(cases: Sequence[Case]) -> Iterable[tuple[str, Mapping[str, Any]]]:
    """The plan of ``cases`` as (name, definition) pairs (a cases file's read lazily, line by line)."""
    specs = case_specs(cases)
    return specs.items() if isinstance(specs, Mapping) else specs


def _on_sigint(stop: Callable[[], None]) -> Callable[[], None]:
    """Make Ctrl-C stop the run cleanly (a second Ctrl-C interrupts at once); returns the undo."""
    loop = asyncio.get_running_loop()
    fired = False

    def handler() -> None:
        nonlocal fired
        if fired:
            loop.remove_signal_handler(signal.SIGINT)
            signal.raise_signal(signal.SIGINT)
            return
        fired = True
        stop()

    try:
        loop.add_signal_handler(signal.SIGINT, handler)
    except (NotImplementedError, RuntimeError, ValueError):
        return lambda: None  # not the main thread, or no signal support: KeyboardInterrupt still cancels the run

    def restore() -> None:
        with contextlib.suppress(Exception):
            loop.remove_signal_handler(signal.SIGINT)

    return restore
