"""``jurybox run --executor NAME``: the options, their checks, and what the runner is handed.

NAME is any registered executor: ``local``, ``processes``, ``ray``, or one an installed
package registers through the ``jurybox`` entry points (it runs with its default settings).
"""

from __future__ import annotations

import functools
import importlib.util
import os
from pathlib import Path
from typing import Annotated, Any, ClassVar, Protocol

import typer

from jurybox.core import KIND_EXECUTOR, PluginError, PluginRegistry, UnknownPluginError
from jurybox.engine import ExecutorPlugin, RunOptions
from jurybox.executors import RAY_EXTRA_MISSING, RaySettings, fork_available
from jurybox.store import Store, open_store
from jurybox.suites import load_suite

STORE_BUSY_TIMEOUT = 30.0
"""Seconds an actor's write waits for a lock on the store before it fails (as the driver's do)."""


class ExecutorChoice(str):
    """Where ``jurybox run`` runs the cases: the name of a registered executor (``.value`` is the name)."""

    local: ClassVar[ExecutorChoice]
    processes: ClassVar[ExecutorChoice]
    ray: ClassVar[ExecutorChoice]

    __slots__ = ()

    @property
    def value(self) -> str:
        return str.__str__(self)

    @classmethod
    def parse(cls, text: str) -> ExecutorChoice:
        """The registered executor ``text`` names (by name or alias).

        Raises:
            typer.BadParameter: no executor has that name (a usage error: the closest name, exit code 2).
        """
        if isinstance(text, ExecutorChoice):  # the default, handed back by typer
            return text
        try:
            plugin = PluginRegistry.default().plugin(KIND_EXECUTOR, text)
        except UnknownPluginError as error:
            raise typer.BadParameter(str(error)) from None
        return cls(plugin.name)


ExecutorChoice.local = ExecutorChoice("local")
ExecutorChoice.processes = ExecutorChoice("processes")
ExecutorChoice.ray = ExecutorChoice("ray")
BUILT_IN = (ExecutorChoice.local, ExecutorChoice.processes, ExecutorChoice.ray)

ExecutorOption = Annotated[
    ExecutorChoice,
    typer.Option(
        "--executor",
        parser=ExecutorChoice.parse,
        metavar="NAME",
        help="Where the cases run: local (tasks in this process), processes (forked workers, see --workers), "
        "ray (long-lived actors on a Ray cluster; needs the ray extra), or an executor an installed plug-in "
        "registers (jurybox plugins).",
    ),
]
RayAddressOption = Annotated[
    str | None,
    typer.Option(
        "--ray-address",
        help="--executor ray: the cluster, 'auto' (the one this machine belongs to) or ray://HOST:10001. "
        "Default: a local Ray started for the run.",
        show_default=False,
    ),
]
ActorsOption = Annotated[
    int | None,
    typer.Option(
        "--actors",
        min=1,
        max=1024,
        help="--executor ray: actors that run the cases, each with its share of --concurrency "
        "(default: the cluster's CPU count).",
        show_default=False,
    ),
]


class ExecutorRequest(Protocol):
    """The parts of ``jurybox run``'s request (``RunRequest``) these options read."""

    @property
    def no_store(self) -> bool: ...
    @property
    def workers(self) -> int: ...
    @property
    def executor(self) -> str: ...
    @property
    def ray_address(self) -> str | None: ...
    @property
    def actors(self) -> int | None: ...


def executor_problem(request: ExecutorRequest) -> str | None:
    """Why the executor options cannot work together, worded for the command line; None when they can."""
    executor = request.executor
    if executor != ExecutorChoice.ray and (request.ray_address is not None or request.actors is not None):
        return "--ray-address and --actors are for --executor ray"
    if executor == ExecutorChoice.ray:
        if request.workers > 1:
            return "--workers forks processes on this machine; with --executor ray use --actors N"
        if importlib.util.find_spec("ray") is None:
            return RAY_EXTRA_MISSING
    if executor == ExecutorChoice.processes and request.no_store:
        return "--executor processes: each worker writes its results to the store; it cannot be used with --no-store"
    if executor == ExecutorChoice.processes and not fork_available():
        return "--executor processes needs os.fork (Linux or macOS); run without it here"
    if executor not in BUILT_IN:
        return _plugin_problem(request)
    return None


def _plugin_problem(request: ExecutorRequest) -> str | None:
    """What an installed executor says against these options (or why it cannot be loaded), before the run."""
    try:
        plugin: ExecutorPlugin = PluginRegistry.default().load(KIND_EXECUTOR, request.executor)
        options = RunOptions(executor=request.executor, workers=request.workers)  # its check_options runs here
        plugin.check(options, has_store=not request.no_store, own_target=True)
    except (PluginError, ValueError) as error:
        return f"--executor {request.executor}: {error}"
    return None


def executor_options(
    request: ExecutorRequest, suite_path: Path, load: dict[str, Any], concurrency: int, store: Store | None
) -> dict[str, Any]:
    """The ``RunOptions`` fields of the chosen executor.

    ``--executor processes`` without ``--workers`` forks one worker per core (at least 2). A Ray
    actor loads the suite file itself with ``load`` (the command line's ``load_suite`` keywords);
    on a PostgreSQL store it writes its cases itself, on SQLite the driver does (one writer).
    """
    workers = request.workers
    if request.executor == ExecutorChoice.processes:
        return {
            "executor": "processes",
            "workers": workers if workers > 1 else max(2, min(os.cpu_count() or 2, concurrency)),
        }
    if request.executor not in (ExecutorChoice.ray, ExecutorChoice.local):  # an installed one: its defaults
        return {"executor": str(request.executor), "workers": workers}
    if request.executor != ExecutorChoice.ray:
        return {"executor": "local", "workers": workers}
    settings = RaySettings(
        address=request.ray_address,
        actors=request.actors,
        load_suite=functools.partial(load_suite, suite_path.resolve(), **load),
        open_store=_actor_store(store),
    )
    return {"executor": "ray", "executor_settings": settings}


def executor_resume_args(request: ExecutorRequest) -> list[tuple[str, Any]]:
    """The executor options of the command that finishes a run (it runs the rest the same way)."""
    if request.executor == ExecutorChoice.local:
        return []
    return [("--executor", request.executor), ("--ray-address", request.ray_address), ("--actors", request.actors)]


def _actor_store(store: Store | None) -> Any:
    """How actors open the store to write to it themselves: only a server database takes many writers well."""
    if store is None or store.engine.dialect.name == "sqlite":
        return None
    # The real URL (password included) goes to the actors in their start-up arguments, like the driver's own.
    url = store.engine.url.render_as_string(hide_password=False)
    return functools.partial(open_store, url, busy_timeout=STORE_BUSY_TIMEOUT)
