"""What the Ray executor's driver and actors say to each other, and how a run asks for Ray.

Nothing here imports Ray: ``RunOptions`` carries ``RaySettings`` for every run,
and the messages are plain dataclasses that Ray pickles. A case travels to an
actor by name only (its built judges hold model clients and closures that do
not pickle); each actor loads the suite itself and looks the case up.
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from jurybox.core import KIND_EXECUTOR, CaseRecord, LessonNote, PluginRegistry, Status
from jurybox.engine import Executor, RunStore
from jurybox.models import Spend
from jurybox.suites import CaseLine

if TYPE_CHECKING:
    from jurybox.engine import RunOptions, SuiteRunner
    from jurybox.suites import Suite

RAY_EXTRA_MISSING = "the ray executor needs the ray extra: pip install 'jurybox[ray]'"


class ExecutorError(RuntimeError):
    """The executor cannot start here: Ray is not installed, or its cluster cannot be reached."""


@dataclass(frozen=True)
class RaySettings:
    """Where and how a run uses Ray (``jurybox run --executor ray``).

    Attributes:
        address: The cluster: ``HOST:PORT`` (its GCS), ``auto`` (the one this machine belongs to) or
            ``ray://HOST:10001`` (Ray Client); None starts a small local Ray for the run and shuts it
            down afterwards. A cluster with token authentication gets the token Ray's own places hold.
        actors: Long-lived actors that run the cases; None: the cluster's CPU count (at least 1),
            at most the run's concurrency and its number of cases.
        load_suite: How an actor loads the suite, on its node (a picklable callable: the CLI hands
            ``functools.partial(load_suite, path, judge_model=...)``). None: the suite file at the
            driver's path, with the run's concurrency.
        open_store: How an actor opens the store to write its cases itself (PostgreSQL); None: the
            records come back and the driver writes them (SQLite: one writer).
    """

    address: str | None = None
    actors: int | None = None
    load_suite: Callable[[], Suite] | None = field(default=None, compare=False)
    open_store: Callable[[], RunStore] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.actors is not None and (isinstance(self.actors, bool) or self.actors < 1):
            raise ValueError(f"actors must be a whole number >= 1, got {self.actors!r}")


@dataclass(frozen=True)
class ActorSetup:
    """Everything an actor needs to build its share of the run (sent once, when it starts).

    Attributes:
        run_id: The run the driver opened.
        index: This actor's place among ``count`` (its connection share).
        count: Actors in the run.
        concurrency: Cases this actor keeps in flight.
        load_suite: Loads the suite on the actor's node.
        judge_model: The driver's judge model label: an actor that resolves another refuses to start.
        timeout: Seconds per case, overriding the suite's (None keeps them).
        retries: Extra attempts after an agent crash or timeout, overriding the suite's.
        open_store: Opens the store the actor writes to; None: the driver writes.
        lessons: Each case's stored lessons, as the driver fetched them before the run.
        rate_signal: The name of the run's ``RateSignalActor``: 429s shared with the other actors (None: not shared).
    """

    run_id: str
    index: int
    count: int
    concurrency: int
    load_suite: Callable[[], Suite]
    judge_model: str | None
    timeout: float | None = None
    retries: int | None = None
    open_store: Callable[[], RunStore] | None = None
    lessons: Mapping[str, Sequence[LessonNote]] = field(default_factory=dict)
    rate_signal: str | None = None


@dataclass(frozen=True)
class Finished:
    """One case an actor finished: its record when the driver writes it, else only what progress needs."""

    case: str
    status: Status
    llm_skipped: bool
    record: CaseRecord | None = None


@dataclass(frozen=True)
class Chunk:
    """Cases an actor finished close together, sent as one streamed item (one object per chunk, not per case).

    Attributes:
        actor: The actor's incarnation (a restarted actor counts its spend from zero under a new one).
        spend: That incarnation's running total of judge-model spend.
        finished: The cases, written to the store already when the actor writes.
        store_errors: Writes of the actor's that failed.
    """

    actor: str
    spend: Spend
    finished: list[Finished]
    store_errors: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ActorStats:
    """An actor's process, for the run's notes and the benchmarks."""

    pid: int
    peak_rss: int
    """Peak resident memory in bytes."""
    loaded_rss: int
    """Peak resident memory in bytes once the suite was loaded and the agent built (what the run adds is the rest)."""
    cases: int
    """Cases it finished."""
    node: str = ""
    """The id of the Ray node it runs on."""
    address: str = ""
    """That node's IP address."""


def default_suite_loader(suite: Suite, concurrency: int) -> Callable[[], Suite]:
    """Load ``suite`` again from its file (absolute, so an actor's working directory does not matter)."""
    from jurybox.suites import load_suite

    # The driver checked the cases file; an actor builds only the lines it is sent.
    return functools.partial(load_suite, suite.path.resolve(), concurrency=concurrency, check_cases_file=False)


Work = str | CaseLine
"""What a batch sends an actor per case: the name of a case in the suite file, or a line of its cases file."""


def work_name(item: str | CaseLine) -> str:
    return item if isinstance(item, str) else item.name


class RayPlugin:
    """``ray``: long-lived actors on a Ray cluster (this machine's, or one named by ``RaySettings.address``)."""

    def check_options(self, options: RunOptions) -> None:
        if options.workers > 1:
            raise ValueError("workers are the processes executor's; the ray executor takes actors (--actors)")
        if options.executor_settings is not None and not isinstance(options.executor_settings, RaySettings):
            raise ValueError(f"the ray executor's settings are RaySettings, got {options.executor_settings!r}")

    def check(self, options: RunOptions, *, has_store: bool, own_target: bool) -> None:
        if not own_target:
            raise ValueError(
                "--executor ray: each actor builds its agent from the suite's agent spec; "
                "a target given to the runner cannot be sent to another process"
            )
        if importlib.util.find_spec("ray") is None:
            raise ValueError(RAY_EXTRA_MISSING)

    def create(self, runner: SuiteRunner, todo: int) -> Executor:
        options = runner.options
        cases = runner.case_executor
        if not todo:  # nothing left to run: no cluster to start
            from jurybox.executors._local import LocalExecutor

            return LocalExecutor(cases, options.concurrency)
        from jurybox.executors._ray import RayExecutor  # imports ray: only a run that asks for it pays for it

        return RayExecutor(
            runner.suite,
            options.concurrency,
            options.executor_settings or RaySettings(),
            timeout=options.timeout,
            retries=options.retries,
            lessons=cases.lessons,  # fetched by the driver before the run: the actors do not ask the store again
        )


PluginRegistry.default().register(
    KIND_EXECUTOR,
    "ray",
    RayPlugin(),
    summary="long-lived actors on a Ray cluster, this machine's or one named by --ray-address",
    extra="ray",
    requires=("ray",),
)
