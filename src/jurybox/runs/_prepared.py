"""Starting a run: ``prepare(request)`` loads and plans the suites; the ``PreparedRun`` opens the store and runs them.

``jurybox run SUITE.yaml``, ``jurybox run --suite NAME`` and the dashboard's
"Run" button all come through here, so a run is put together one way: the same
loading, judge model, concurrency fallback, executor settings, git facts, store
and resume, whoever starts it. The callers keep their own words and threads.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, cast

from jurybox.core import frozen_heap, paused_collector
from jurybox.engine import (
    DEFAULT_CONCURRENCY,
    ProgressSink,
    RecordTally,
    RunOptions,
    RunResult,
    RunStore,
    SuiteRunner,
)
from jurybox.executors import fork_available
from jurybox.models import PROBE_TIMEOUT
from jurybox.runs._check import cancel_check, settle_check, watch_check
from jurybox.runs._early_probe import EarlyProbes
from jurybox.runs._executors import STORE_BUSY_TIMEOUT, executor_fields
from jurybox.runs._experiment import (
    ExperimentSlot,
    experiment_suites,
    experiment_to_resume,
    new_experiment_id,
    variant_environment,
    variant_run,
)
from jurybox.runs._git import git_info
from jurybox.runs._preflight import Preflight, preflight
from jurybox.runs._request import NoCasesError, RunRequest, RunRequestError
from jurybox.runs._resume import Notice, Notify, resume_point
from jurybox.runs._stored import export_stored_suites, remember_suite_source
from jurybox.suites import Problem, RunPlan, Suite, SuiteError, load_suite, plan_run

if TYPE_CHECKING:
    # The store's modules (SQLAlchemy's) load when the store is opened: `jurybox run` imports
    # them while its judge server's check (started as the suite loads) waits for an answer.
    from jurybox.store import Store

Starting = Callable[["PlannedSuite"], ProgressSink | None]
"""Called as each suite's run starts (to say so); returns where its progress goes, or None."""
Finished = Callable[["PlannedSuite", RunResult], None]
"""Called with each suite's result as its run ends (to report it)."""
Tallying = Callable[["PlannedSuite"], RecordTally | None]
"""Called as each suite's run starts; returns what is told of each case the run takes (its totals), or None."""


@dataclass
class PlannedSuite:
    """One suite of a prepared run: loaded, its cases chosen, and the stored run it finishes.

    Attributes:
        suite: The loaded suite.
        plan: What will run: the cases, their judges per tier and their judge calls (``--dry-run``
            prints it). When a run is resumed, the cases that run planned.
        resume: The id of the stored run this one finishes (known once the run is opened); None: a new run.
        experiment: The experiment it is a variant of (a suite with ``variants:`` or ``trials:``); None: none.
    """

    suite: Suite
    plan: RunPlan
    resume: str | None = None
    experiment: ExperimentSlot | None = None


def prepare(request: RunRequest, *, tune_gc: bool = False, check_servers: bool = False) -> PreparedRun:
    """Load, check and plan every suite of ``request``; nothing runs and no run is opened yet.

    Args:
        request: What to run and how.
        tune_gc: For a process that runs this one request (a command line): the garbage collector
            runs less while the suites load and leaves them alone while they run. A server that
            runs several requests at once leaves the collector as it is (the default).
        check_servers: ``preflight()`` will be asked: each suite's judge server is checked from the
            moment its model is read, while the rest of the suite loads.

    Raises:
        RunRequestError: the request cannot run here (``NoCasesError``: no case matches its filter).
        SuiteError, JudgeModelError: a suite file (or the judge model it names) is wrong; the
            message names the file, line and field.
        StoreError: a stored suite cannot be read from the store.
        OSError: a stored suite cannot be written to a temporary file.
    """
    if request.workers > 1 and not fork_available():
        raise RunRequestError("--workers needs os.fork (Linux or macOS); run without it here")
    store: Store | None = None
    folder: tempfile.TemporaryDirectory[str] | None = None
    suites: list[Suite] = []
    early = EarlyProbes() if check_servers else None
    try:
        load = load_keywords(request, request.base_dir)
        sources = [(path, load) for path in request.suites]
        stored: dict[Path, str] = {}
        if request.stored_suites:
            store = _open_store(request.store)
            folder = tempfile.TemporaryDirectory(prefix="jurybox-stored-")
            files = export_stored_suites(store, request.stored_suites, Path(folder.name))
            # Each resolves its relative paths against the folder of the file it came from.
            sources = [(file.path, load_keywords(request, file.folder)) for file in files]
            stored = {file.path: file.name for file in files}
        # A command line whose one process runs the cases: a big cases file is checked in a forked child
        # while the run starts (a server, with its threads, does not fork; worker processes and Ray
        # actors are given the checked file's counts).
        one_process = tune_gc and request.executor == "local" and request.workers == 1
        check: bool | Literal["background"] = "background" if one_process else True
        with paused_collector() if tune_gc else contextlib.nullcontext():
            for path, keywords in sources:
                on_model = early.start if early is not None else None
                suites.append(load_suite(path, check_cases_file=check, on_model=on_model, **keywords))
        twice = _same_names(suites)
        if twice is not None:
            raise RunRequestError(twice)
        # A suite with variants runs as one suite per variant, tied by the experiment.
        made = [pair for suite in suites for pair in experiment_suites(suite, request.variants, load)]
        if request.executor == "ray" and any(slot is not None and slot.variant for _, slot in made):
            raise RunRequestError(
                "--executor ray loads the suite file again on each actor, without its variant; "
                "run an experiment's variants with the local or processes executor"
            )
        planned, skipped = _plans(made, request.selectors)
        running = {id(p.suite.cases) for p in planned}
        for loaded in suites:  # a suite left out by the filter: its file's check is not wanted
            if id(loaded.cases) not in running:
                cancel_check(loaded)
    except BaseException:
        for loaded in suites:
            cancel_check(loaded)
        if store is not None:
            store.close()
        if folder is not None:
            folder.cleanup()
        raise
    prepared = PreparedRun(request, planned, skipped, load=load, store=store, folder=folder, tune_gc=tune_gc)
    prepared.early_probes = early
    prepared.stored_names = {id(p.suite): stored[p.suite.path] for p in planned if p.suite.path in stored}
    return prepared


def load_keywords(request: RunRequest, base_dir: Path | None) -> dict[str, Any]:
    """How the request loads a suite (``load_suite``'s keywords): a Ray actor loads it again the same way."""
    return {
        "judge_model": request.judge_model,
        "concurrency": request.concurrency,
        "judge_timeout": request.judge_timeout,
        "judge_retries": request.judge_retries,
        **({"base_dir": base_dir} if base_dir is not None else {}),
    }


class PreparedRun:
    """A request's suites, loaded and planned, ready to run one after another (a context manager).

    ``open()`` opens the store and finds the runs to resume; ``start(planned)`` runs one
    suite in the caller's event loop, ``run()`` runs them all in one of its own;
    ``close()`` releases the store and the stored suites' temporary files.

    Attributes:
        request: The request it was prepared from.
        suites: The suites to run, in the request's order.
        skipped: Names of the suites left out because no case of theirs matches the filter.
    """

    def __init__(
        self,
        request: RunRequest,
        suites: Sequence[PlannedSuite],
        skipped: Sequence[str],
        *,
        load: dict[str, Any],
        store: Store | None,
        folder: tempfile.TemporaryDirectory[str] | None,
        tune_gc: bool,
    ) -> None:
        self.request = request
        self.suites = tuple(suites)
        self.skipped = tuple(skipped)
        self._load = load
        self._store = store
        self._folder = folder
        self._tune_gc = tune_gc
        self._opened = False
        self._stopping = False
        self._runner: SuiteRunner | None = None
        self.stored_names: dict[int, str] = {}
        """The store's name of each suite loaded from the store (by ``id`` of its ``Suite``)."""
        self.early_probes: EarlyProbes | None = None
        """Server checks started while the suites loaded (``prepare(check_servers=True)``): ``preflight`` uses them."""

    @property
    def store(self) -> Store | None:
        """The store the runs are written to (once opened); None with ``no_store``."""
        return self._store

    def load_store_code(self) -> None:
        """Import the store's modules (SQLAlchemy with them) unless the run has no store.

        ``preflight`` does it first, so the import overlaps the server checks started while the
        suites loaded; ``jurybox run`` calls it just before, so ``-v`` shows it as a phase of its own.
        """
        if not self.request.no_store:
            importlib.import_module("jurybox.store._store")

    def preflight(self, *, timeout: float = PROBE_TIMEOUT) -> Preflight:
        """Check every model server the suites name: the servers that stop the run (down, or refusing the key),
        and the judge servers that are down but whose response cache the run goes on with."""
        # Loaded while the checks started with the suites wait for their answers, not after them.
        self.load_store_code()
        # The early answers once, and only for the same patience: a second check asks the servers again.
        early, self.early_probes = self.early_probes, None
        if early is not None and early.timeout != timeout:
            early = None
        return preflight([planned.suite for planned in self.suites], timeout=timeout, early=early)

    def open(self, notify: Notify | None = None) -> None:
        """Open the store and find each suite's run to resume, before any suite runs (done once).

        Args:
            notify: Told what is worth saying: the store is locked by another process (a run that
                waits for it must not look hung), there is no run to resume, a resumed run started
                with another judge model.

        Raises:
            StoreError: the store cannot be opened, or has no run with the id to resume.
            RunRequestError: the run to resume is another suite's, or planned cases the suite no longer has.
        """
        if self._opened or self.request.no_store:
            self._opened = True
            return
        from jurybox.store import StoreError, lock_notice, open_store

        if notify is not None:
            waiting = lock_notice(self.request.store, STORE_BUSY_TIMEOUT)
            if waiting is not None:
                notify(Notice("waiting", waiting))
        if self._store is None:
            try:
                self._store = open_store(self.request.store, busy_timeout=STORE_BUSY_TIMEOUT)
            except (StoreError, ValueError) as exc:
                raise StoreError(f"cannot open the store: {exc}") from exc
        for planned in self.suites:
            if id(planned.suite) not in self.stored_names:
                remember_suite_source(self._store, planned.suite)
            if planned.experiment is None:
                self._resume(planned, self.request.resume, notify or _ignore)
        self._open_experiments(notify or _ignore)
        self._opened = True

    def _resume(self, planned: PlannedSuite, resume: str | None, notify: Notify) -> None:
        assert self._store is not None
        run_id, cases = resume_point(self._store, planned.suite, resume, notify)
        planned.resume = run_id
        if cases is not None:  # the intro and the report speak of what that run planned
            planned.plan = plan_run(planned.suite, cases)

    def _open_experiments(self, notify: Notify) -> None:
        """Give each experiment its id, or find the one to finish and what each of its variants still lacks."""
        groups: dict[str, list[PlannedSuite]] = {}
        for planned in self.suites:
            if planned.experiment is not None:
                groups.setdefault(planned.experiment.suite, []).append(planned)
        for suite, members in groups.items():
            names = [m.suite.name for m in members]
            found = None
            if self._store is not None:
                found = experiment_to_resume(self._store, names, self.request.resume)
                if found is None and self.request.resume is not None:
                    notify(Notice("info", f"no unfinished experiment of suite {suite!r} to resume; starting a new one"))
            experiment = found or new_experiment_id()
            for member in members:
                assert member.experiment is not None
                member.experiment.id = experiment
                if found is None or self._store is None:
                    continue
                run_id, done = variant_run(self._store, found, member.suite.name)
                if done:
                    member.experiment.done = True
                    member.resume = run_id
                    notify(Notice("info", f"{member.suite.name}: finished in run {run_id}; not run again"))
                elif run_id is not None:
                    self._resume(member, run_id, notify)

    @property
    def experiments(self) -> dict[str, str]:
        """Each experiment's id (known once opened), by the suite it is an experiment of."""
        return {
            p.experiment.suite: p.experiment.id for p in self.suites if p.experiment is not None and p.experiment.id
        }

    def options(self, planned: PlannedSuite) -> RunOptions:
        """How ``planned`` runs: concurrency (the request's, else the suite's, else 8), filter, timeouts,
        retries, lessons, the executor and its settings, and the git facts of the suite's folder.

        Raises:
            RunRequestError: more worker processes than cases in flight, or an executor no plug-in provides.
        """
        request, suite = self.request, planned.suite
        concurrency = request.concurrency or suite.concurrency or DEFAULT_CONCURRENCY
        git = git_info(suite.base_dir)
        fields = executor_fields(request, suite, {**self._load, "base_dir": suite.base_dir}, concurrency, self.store)
        stored = self.stored_names.get(id(suite))
        # A stored suite's file is a temporary one, gone after the run: the run names the suite and its folder.
        source = {"stored_suite": stored, "suite_folder": str(suite.base_dir)} if stored is not None else {}
        if request.lessons is not None:
            fields["lessons"] = request.lessons
        slot = planned.experiment
        experiment = slot.config(suite.select(request.selectors)) if slot is not None else {}
        if slot is not None:
            fields["experiment_id"] = slot.id
            fields["variant"] = slot.variant.name if slot.variant is not None else None
        try:
            options = RunOptions(
                concurrency=concurrency,
                selectors=request.selectors,
                timeout=request.timeout,
                retries=request.retries,
                git_commit=git.commit if git is not None else None,
                extra_config={
                    **(git.run_config() if git is not None else {}),
                    **source,
                    **experiment,
                    **request.extra_config,
                },
                **fields,
            )
        except ValueError as exc:
            raise RunRequestError(str(exc)) from exc
        if options.workers > options.concurrency:
            raise RunRequestError(
                f"--workers {options.workers} is more than the run's concurrency ({options.concurrency}): "
                "each worker runs at least one case at a time; raise --concurrency"
            )
        return options

    async def start(
        self,
        planned: PlannedSuite | None = None,
        *,
        progress: ProgressSink | None = None,
        on_open: Callable[[str], None] | None = None,
        tally: RecordTally | None = None,
    ) -> RunResult:
        """Run one suite (the only one when ``planned`` is None) in this event loop; its result.

        Args:
            planned: One of ``suites``.
            progress: Where the run reports each finished case.
            on_open: Told the run's id as soon as the run is opened (or resumed) in the store.
            tally: Told of each case the run takes (``jurybox.report.LiveTally``: the report's totals).

        Raises:
            RunRequestError: see ``options``.
            TargetConfigError: the suite's agent cannot be built (no run is opened).
            ExecutorError: the executor cannot start (Ray cannot reach its cluster, say).
        """
        if planned is None:
            if len(self.suites) != 1:
                what = "variants (an experiment)" if any(p.experiment for p in self.suites) else "suites"
                raise RunRequestError(f"name the suite to start: this run has {len(self.suites)} {what}")
            planned = self.suites[0]
        self.open()
        options = self.options(planned)
        store = cast(RunStore | None, self.store)
        runner = SuiteRunner(planned.suite, options, store=store, progress=progress, on_open=on_open, tally=tally)
        self._runner = runner
        if self._stopping:
            runner.stop()
        env = planned.experiment.env if planned.experiment is not None else {}
        watching = watch_check(planned.suite, runner)
        try:
            with variant_environment(env):
                result = await runner.run(resume=planned.resume)
        except SuiteError as exc:  # a bad line reached before the background check named it
            problems = await _checked(watching, cancel=False)
            raise (SuiteError(list(problems)) if problems else exc) from None
        finally:
            self._runner = None
        problems = await _checked(watching, cancel=result.status == "interrupted")
        if problems:
            raise SuiteError(list(problems))
        return result

    def run(
        self,
        *,
        starting: Starting | None = None,
        finished: Finished | None = None,
        tallying: Tallying | None = None,
    ) -> list[RunResult]:
        """Run every suite, one after another, in one event loop of its own; their results.

        A run that was interrupted (Ctrl-C, ``stop()``) ends the request: the suites after it do
        not start.

        Args:
            starting: Called as each suite's run starts; returns where its progress goes.
            finished: Called with each suite's result as its run ends.
            tallying: Called as each suite's run starts: what to tell of each case it takes.
        """
        self.open()

        async def each() -> list[RunResult]:
            results: list[RunResult] = []
            for planned in self.suites:
                if self._stopping:
                    break
                if planned.experiment is not None and planned.experiment.done:
                    continue  # a variant a resumed experiment finished before
                progress = starting(planned) if starting is not None else None
                tally = tallying(planned) if tallying is not None else None
                result = await self.start(planned, progress=progress, tally=tally)
                results.append(result)
                if finished is not None:
                    finished(planned, result)
                if result.status == "interrupted":
                    break
            return results

        # The loaded suites are left out of collections while they run (a command's one request).
        with frozen_heap() if self._tune_gc else contextlib.nullcontext():
            return asyncio.run(each())

    def stop(self) -> None:
        """Stop as Ctrl-C does: the running suite takes no new case (it stays resumable); no other starts.

        Call it on the event loop the run is in (``loop.call_soon_threadsafe(prepared.stop)`` from another thread).
        """
        self._stopping = True
        if self._runner is not None:
            self._runner.stop()

    def settle(self) -> None:
        """Wait for the suites' background checks of their cases files and plan with their totals (``--dry-run``).

        Raises:
            SuiteError: a cases file has bad lines (file, line and field of each).
        """
        for planned in self.suites:
            problems = settle_check(planned.suite)
            if problems:
                raise SuiteError(list(problems))
            if planned.plan.estimated:
                planned.plan = plan_run(planned.suite, planned.suite.select(self.request.selectors))

    def close(self) -> None:
        """Close the store and remove the stored suites' temporary files."""
        for planned in self.suites:
            cancel_check(planned.suite)
        store, self._store = self._store, None
        if store is not None:
            store.close()
        folder, self._folder = self._folder, None
        if folder is not None:
            folder.cleanup()

    def __enter__(self) -> PreparedRun:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()


def _open_store(url: str | None) -> Store:
    from jurybox.store import StoreError, open_store

    try:
        return open_store(url, busy_timeout=STORE_BUSY_TIMEOUT)
    except ValueError as exc:  # a URL SQLAlchemy cannot parse
        raise StoreError(str(exc)) from exc


def _same_names(suites: Sequence[Suite]) -> str | None:
    """Why the suites cannot run together: two of them share a name (their reports and stored runs would mix)."""
    first: dict[str, Path] = {}
    for suite in suites:
        earlier = first.setdefault(suite.name, suite.path)
        if earlier is suite.path:
            continue
        if earlier.resolve() == suite.path.resolve():
            return f"suite file {suite.path} is given twice"
        return (
            f"suites {earlier} and {suite.path} are both named {suite.name!r}: reports and stored runs "
            "are kept by suite name, so one would overwrite the other; rename one"
        )
    return None


def _plans(
    suites: Sequence[tuple[Suite, ExperimentSlot | None]], selectors: Sequence[str]
) -> tuple[list[PlannedSuite], list[str]]:
    """Each suite's plan; a suite no case of which matches the filter is left out, unless all are."""
    plans = [(suite, slot, plan_run(suite, suite.select(selectors))) for suite, slot in suites]
    empty = [suite.name for suite, _, plan in plans if not plan.cases]
    # `jurybox run suites/*.yaml -k smoke`: the suites without a smoke case are not an error.
    if empty and (len(empty) == len(plans) or not selectors):
        raise NoCasesError(empty, selectors)
    return [PlannedSuite(suite, plan, experiment=slot) for suite, slot, plan in plans if plan.cases], empty


async def _checked(watching: asyncio.Task[tuple[Problem, ...]] | None, *, cancel: bool) -> tuple[Problem, ...]:
    """The background check's problems once it ends (stopped first when the run was interrupted)."""
    if watching is None:
        return ()
    if cancel and not watching.done():
        watching.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watching
        return ()
    return await watching


def _ignore(_notice: Notice) -> None:
    """Nobody to tell (a server's launch): notices are dropped."""
