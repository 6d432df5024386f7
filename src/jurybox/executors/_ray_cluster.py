"""Connecting the driver to Ray, and reading Ray's errors; the only place that imports Ray before a run asks for it.

A run without ``--executor ray`` never reaches this module (the runner imports
the Ray executor lazily), so a jurybox without the ``ray`` extra loses nothing
but this executor.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from jurybox.executors import _ray_join as _join
from jurybox.executors._ray_setup import RAY_EXTRA_MISSING, ExecutorError

LOCAL_CPUS = 2
"""CPUs of the local Ray a run starts: actors need none while they run, so this only sets the default actor count."""
LOCAL_OBJECT_STORE = 128 * 1024 * 1024
"""Bytes of shared memory for a local Ray's object store: chunks of results are small and consumed at once."""
PROBE_TIMEOUT = 5.0
"""Seconds a cluster's address gets to accept a connection before the run says nothing answers there."""
CLIENT_ATTEMPTS = 3
"""Times a ``ray://`` join is tried when the Ray Client server fails to start the session (see ``_join_ray``)."""
CLIENT_RETRY_PAUSE = 1.0
"""Seconds between those tries."""
CURRENT_CLUSTER_FILE = "/tmp/ray/ray_current_cluster"
"""Where ``ray start`` notes the address of the cluster this machine runs (what ``auto`` means)."""
JURYBOX_SETTINGS = ("JURYBOX_JUDGE_MODEL", "JURYBOX_JUDGE_TIMEOUT", "JURYBOX_JUDGE_RETRIES")
"""Environment settings the actors need to load the suite as the driver did (none of them a secret)."""


def import_ray() -> ModuleType:
    """The ``ray`` module.

    Raises:
        ExecutorError: ray is not installed (the message says how to install it).
    """
    try:
        import ray
    except ImportError as exc:
        raise ExecutorError(RAY_EXTRA_MISSING) from exc
    return ray


def connect(address: str | None, *, cpus: int) -> bool:
    """Join the Ray at ``address``, or start a small local one; True when this call started the connection.

    A driver already connected (a test's module fixture, a notebook) is used as it is.

    Raises:
        ExecutorError: ray is not installed, or the cluster at ``address`` cannot be reached.
    """
    ray = import_ray()
    if ray.is_initialized():
        return False
    quiet: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.ERROR, "configure_logging": True}
    if address is None:
        # A local Ray for this run only: nothing reported to Ray's usage statistics server from it.
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        ray.init(
            num_cpus=max(LOCAL_CPUS, cpus),
            include_dashboard=False,
            object_store_memory=LOCAL_OBJECT_STORE,
            **quiet,
        )
    else:
        problem = join_problem(address)
        if problem is not None:
            raise ExecutorError(f"--ray-address {address}: {problem}")
        try:
            _join_ray(ray, address, quiet)
        except (ConnectionError, ValueError, RuntimeError, TimeoutError, ray.exceptions.RayError) as exc:
            _join.restore()
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ExecutorError(f"--ray-address {address}: cannot join that Ray cluster: {reason}") from exc
    return True


def _join_ray(ray: ModuleType, address: str, quiet: dict[str, Any]) -> None:
    """``ray.init(address)``; through Ray Client, again when the server failed to start this client's session.

    The Ray Client server starts a process per client; on a loaded machine that process
    sometimes dies before it serves ("Initialization failure from server"), and the next
    connection gets a new one.
    """
    for attempt in range(1, CLIENT_ATTEMPTS + 1):
        try:
            ray.init(address=address, **quiet)
            return
        except ConnectionAbortedError:
            if not address.startswith("ray://") or attempt == CLIENT_ATTEMPTS:
                raise
            with contextlib.suppress(Exception):
                ray.shutdown()
            time.sleep(CLIENT_RETRY_PAUSE)


def join_problem(address: str) -> str | None:
    """Why this process cannot join the cluster at ``address`` (found in milliseconds); None when it may.

    Nothing answers there, the port is of the other kind (GCS or Ray Client), or the cluster
    wants a token this process does not have (``_ray_join``: this process's token mode is set
    to what the cluster wants). Ray's own errors come from ``ray.init`` afterwards.
    """
    problem = unreachable(address)
    if problem is not None:
        return problem
    target = _target(address)
    if target is None:
        return None
    host_port, client = target
    return _join.auth_problem(host_port, client=client)


def unreachable(address: str, *, timeout: float = PROBE_TIMEOUT) -> str | None:
    """Why nothing answers at ``address``, found in seconds (``ray.init`` waits a minute or more); None when it may.

    ``auto`` is the cluster this machine last started (``$RAY_ADDRESS``, else the file ``ray start``
    writes); with neither, ``ray.init`` itself says so at once.
    """
    target = _target(address)
    if target is None:
        return None  # a form Ray reads its own way (or auto with no cluster): let it say what is wrong
    host, _, port = target[0].rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            return None
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        hint = "start one (ray start --head) or leave out --ray-address for a local Ray"
        return f"no Ray cluster answers at {host}:{port} ({reason}); {hint}"


def _target(address: str) -> tuple[str, bool] | None:
    """``(HOST:PORT, is_ray_client)`` that ``address`` means; None for ``auto`` with no cluster, or a form Ray reads."""
    where = address
    if address == "auto":
        where = os.environ.get("RAY_ADDRESS", "") or _current_cluster()
        if not where or where == "auto":
            return None
    client = where.startswith("ray://")
    host, _, port = where.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return None
    return f"{host}:{port}", client


def _current_cluster() -> str:
    try:
        return Path(CURRENT_CLUSTER_FILE).read_text(encoding="utf-8").strip()
    except OSError:
        return ""


def is_client() -> bool:
    """True when this process joined through Ray Client (``ray://``)."""
    from ray.util.client import ray as client

    connected: Any = client.is_connected  # untyped in Ray
    return bool(connected())


def cluster_cpus() -> int:
    """The connected cluster's CPU count (at least 1)."""
    cpus = import_ray().cluster_resources().get("CPU", 1)
    return max(1, int(cpus))


def actor_nodes() -> list[str]:
    """The ids of the live nodes that take actors (with CPUs: a head started with ``--num-cpus 0`` takes none)."""
    return [
        node["NodeID"]
        for node in import_ray().nodes()
        if node.get("Alive") and node.get("Resources", {}).get("CPU", 0) > 0
    ]


def placement_for(nodes: list[str], index: int) -> Any:
    """Where actor ``index`` starts: the nodes in turn, so N actors on N nodes take one each.

    Ray's ``SPREAD``, and a soft node affinity, put two actors of two on one node of two about
    half the time here. Held to its node, an actor whose node is lost cannot be restarted: it is
    retired, and its cases go to the others (the run's summary says so).
    """
    if not nodes:
        return "SPREAD"
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    return NodeAffinitySchedulingStrategy(node_id=nodes[index % len(nodes)], soft=False)


def this_node() -> tuple[str, str]:
    """The id and IP address of the node this process (an actor) runs on; empty outside Ray.

    Outside a Ray worker (a ``CaseActor`` built in a plain process, as tests do) asking for
    the runtime context would start a local Ray as a side effect, so it is not asked.
    """
    ray = import_ray()
    if not ray.is_initialized():
        return "", ""
    return ray.get_runtime_context().get_node_id(), ray.util.get_node_ip_address()


def actor_runtime_env() -> dict[str, Any]:
    """The environment the actors get: the driver's jurybox settings, so each loads the suite the same way."""
    found = {name: os.environ[name] for name in JURYBOX_SETTINGS if name in os.environ}
    return {"env_vars": found} if found else {}


def disconnect() -> None:
    """Leave Ray (and stop the local one this process started); this process's token mode goes back as it was."""
    import_ray().shutdown()
    _join.restore()


def kill(actor: Any) -> None:
    """Kill an actor for good (no restart); one already gone is fine."""
    ray = import_ray()
    with contextlib.suppress(Exception):  # its process or the whole cluster is gone already
        ray.kill(actor, no_restart=True)


def is_gone_for_good(error: BaseException) -> bool:
    """True when an actor error says it will not come back (killed for good, or out of restarts)."""
    from ray.exceptions import ActorDiedError

    return isinstance(error, ActorDiedError)


def is_ray_error(error: BaseException) -> bool:
    """True for what Ray raises when an actor or its call failed (its death, or an exception inside it)."""
    from ray.exceptions import RayError

    return isinstance(error, RayError)


def describe(error: BaseException) -> str:
    """One line for a run summary: Ray's messages carry tracebacks and actor ids; keep the cause."""
    cause = getattr(error, "cause", None)
    if isinstance(cause, BaseException) and cause is not error:
        return describe(cause)
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    if not lines:
        return type(error).__name__
    # A remote exception ends with its own "Type: message" line; a death says why in its last line.
    last = lines[-1]
    return last if ":" in last or len(lines) == 1 else f"{type(error).__name__}: {last}"
