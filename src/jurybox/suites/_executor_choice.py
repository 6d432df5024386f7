"""Which executor runs a run's cases (``RunOptions.executor``), and the checks made before the run opens.

Kept out of the runner, which only asks for "the executor of these options".
The Ray executor's module, and with it Ray, is imported only for a run that
asks for it: a jurybox without the ``ray`` extra loses nothing but that executor.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from jurybox.suites._pool import LocalExecutor
from jurybox.suites._processes import ProcessExecutor, ShareFactory, check_workers
from jurybox.suites._ray_setup import RAY_EXTRA_MISSING

if TYPE_CHECKING:
    from jurybox.suites._case import Suite
    from jurybox.suites._execute import CaseExecutor
    from jurybox.suites._executor import Executor
    from jurybox.suites._runner import RunOptions

ExecutorName = Literal["local", "processes", "ray"]
EXECUTORS: tuple[ExecutorName, ...] = ("local", "processes", "ray")


@dataclass(frozen=True)
class ForkHooks:
    """What the process executor needs from the runner: a worker's runner, and what to do around the fork."""

    make_runner: ShareFactory
    before_fork: Callable[[], None]
    after_fork: Callable[[], None]


def check_executor_name(executor: str, workers: int) -> None:
    """Refuse an unknown executor, or workers for the Ray one.

    ``processes`` with one worker runs in this process (a worker's own share of a run is that).

    Raises:
        ValueError: the reason.
    """
    if executor not in EXECUTORS:
        raise ValueError(f"executor must be one of {', '.join(EXECUTORS)}, got {executor!r}")
    if executor == "ray" and workers > 1:
        raise ValueError("workers are the processes executor's; the ray executor takes actors (--actors)")


def check_executor(options: RunOptions, *, has_store: bool, own_target: bool) -> None:
    """Refuse, before a run is opened, an executor that cannot run this suite here.

    Raises:
        ValueError: the reason, worded for the command line.
    """
    check_workers(options.workers, options.concurrency, has_store=has_store, own_target=own_target)
    if options.executor != "ray":
        return
    if not own_target:
        raise ValueError(
            "--executor ray: each actor builds its agent from the suite's agent spec; "
            "a target given to the runner cannot be sent to another process"
        )
    if importlib.util.find_spec("ray") is None:
        raise ValueError(RAY_EXTRA_MISSING)


def choose_executor(options: RunOptions, suite: Suite, cases: CaseExecutor, todo: int, fork: ForkHooks) -> Executor:
    """The executor for ``todo`` cases: Ray actors, forked workers (two cases or more), or tasks in this process."""
    if options.executor == "ray" and todo:
        from jurybox.suites._ray import RayExecutor  # imports ray: only a run that asks for it pays for it

        return RayExecutor(
            suite,
            options.concurrency,
            options.ray,
            timeout=options.timeout,
            retries=options.retries,
            lessons=cases.lessons,  # fetched by the driver before the run: the actors do not ask the store again
        )
    if options.workers > 1 and todo > 1:
        return ProcessExecutor(
            options.workers,
            options.concurrency,
            fork.make_runner,
            before_fork=fork.before_fork,
            after_fork=fork.after_fork,
        )
    return LocalExecutor(cases, options.concurrency)
