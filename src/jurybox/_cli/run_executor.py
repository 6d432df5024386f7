"""``jurybox run --executor NAME``: the options, their checks, and what the run service is handed.

NAME is any registered executor: ``local``, ``processes``, ``ray``, or one an installed
package registers through the ``jurybox`` entry points (it runs with its default settings).
"""

from __future__ import annotations

import importlib.util
from typing import Annotated, Any, ClassVar, Protocol

import typer

from jurybox.core import KIND_EXECUTOR, PluginError, PluginRegistry, UnknownPluginError
from jurybox.engine import ExecutorPlugin, RunOptions
from jurybox.executors import RAY_EXTRA_MISSING, fork_available


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
        help="Where the cases run: local (this process), processes (forked --workers), ray (actors on a Ray "
        "cluster; the ray extra), or a plug-in's (jurybox plugins).",
    ),
]
RayAddressOption = Annotated[
    str | None,
    typer.Option(
        "--ray-address",
        help="--executor ray: HOST:PORT (GCS), 'auto' or ray://HOST:10001 (token: $RAY_AUTH_TOKEN). "
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


def executor_settings(request: ExecutorRequest) -> dict[str, Any]:
    """The chosen executor's own options, as the run service takes them (``RunRequest.executor_options``)."""
    if request.executor != ExecutorChoice.ray:
        return {}
    given = (("address", request.ray_address), ("actors", request.actors))
    return {name: value for name, value in given if value is not None}


def executor_resume_args(request: ExecutorRequest) -> list[tuple[str, Any]]:
    """The executor options of the command that finishes a run (it runs the rest the same way)."""
    if request.executor == ExecutorChoice.local:
        return []
    return [("--executor", request.executor), ("--ray-address", request.ray_address), ("--actors", request.actors)]
