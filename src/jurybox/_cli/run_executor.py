"""``jurybox run --executor local|processes|ray``: the options, their checks, and what the run service is handed."""

from __future__ import annotations

import importlib.util
from enum import StrEnum
from typing import Annotated, Any, Protocol

import typer

from jurybox.executors import RAY_EXTRA_MISSING, fork_available


class ExecutorChoice(StrEnum):
    """Where ``jurybox run`` runs the cases."""

    local = "local"
    processes = "processes"
    ray = "ray"


ExecutorOption = Annotated[
    ExecutorChoice,
    typer.Option(
        "--executor",
        help="Where the cases run: local (tasks in this process), processes (forked workers, see --workers) "
        "or ray (long-lived actors on a Ray cluster; needs the ray extra).",
    ),
]
RayAddressOption = Annotated[
    str | None,
    typer.Option(
        "--ray-address",
        help="--executor ray: the cluster, HOST:PORT (its GCS address), 'auto' (the one this machine belongs to) "
        "or ray://HOST:10001. A token, if the cluster wants one: $RAY_AUTH_TOKEN, $RAY_AUTH_TOKEN_PATH or "
        "~/.ray/auth_token. Default: a local Ray started for the run.",
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
