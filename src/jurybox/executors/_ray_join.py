"""Joining a Ray cluster someone started (``ray start --head``): which port answers, and which token it wants.

Ray's token authentication (Ray 2.52+; a cluster that ``ray start --head`` starts
where a token exists has it on, and Ray 2.59+ turns it on for every local
cluster) is set per process by ``RAY_AUTH_MODE`` (``token`` or ``disabled``), and
the token is, in Ray's order: ``$RAY_AUTH_TOKEN``, else the file
``$RAY_AUTH_TOKEN_PATH`` names (an unreadable one makes Ray abort the process),
else ``~/.ray/auth_token``. ``ray.init`` turns token mode on by itself only for
``auto``; for an explicit address it does not, so a driver holding the right
token was refused, and ``ray.init`` said only "Failed to connect" after 20 s
(40 s through ``ray://``). Both sides must agree: a driver in token mode joins
a cluster without authentication but its actors then die (its own server
refuses the workers' unauthenticated calls).

So before ``ray.init``, one gRPC call in each mode finds what the cluster wants,
in milliseconds: without a token first, then with the token Ray would use. This
process's ``RAY_AUTH_MODE`` is left at what worked (``restore`` puts the old
value back after the run).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

MODE_ENV = "RAY_AUTH_MODE"
TOKEN_ENV = "RAY_AUTH_TOKEN"
TOKEN_PATH_ENV = "RAY_AUTH_TOKEN_PATH"
DEFAULT_TOKEN_FILE = Path("~/.ray/auth_token")
"""Where ``ray start`` and ``ray get-auth-token --generate`` keep the token (the home of the user running them)."""
ASK_TIMEOUT = 5.0
"""Seconds one question to the cluster may take."""
GET_TOKEN_HINT = "run `ray get-auth-token` on the head node and put its output in ~/.ray/auth_token or $RAY_AUTH_TOKEN"

Answer = Literal["ok", "refused", "other service", "unknown"]
"""What one question got: an answer; ``refused`` (unauthenticated); a gRPC server of another kind; anything else."""

_saved: dict[str, str | None] = {}
"""``mode``: this process's ``RAY_AUTH_MODE`` before a join changed it (None: it was not set); absent: unchanged."""


@dataclass(frozen=True)
class TokenSource:
    """One place Ray takes the token from, as this process sees it (never the token itself).

    Attributes:
        where: How a user names it: ``$RAY_AUTH_TOKEN``, ``$RAY_AUTH_TOKEN_PATH (/path)``, ``/home/me/.ray/auth_token``.
        state: ``found``, ``missing`` (not set, no such file), or why the file cannot be used.
    """

    where: str
    state: str

    @property
    def found(self) -> bool:
        return self.state == "found"


def token_sources() -> list[TokenSource]:
    """Where Ray looks for the token, in its order; Ray takes the first that is set (a broken path is not skipped)."""
    sources = [TokenSource(f"${TOKEN_ENV}", "found" if os.environ.get(TOKEN_ENV) else "not set")]
    path = os.environ.get(TOKEN_PATH_ENV)
    if path:
        sources.append(TokenSource(f"${TOKEN_PATH_ENV} ({path})", _file_state(Path(path))))
    else:
        sources.append(TokenSource(f"${TOKEN_PATH_ENV}", "not set"))
    default = DEFAULT_TOKEN_FILE.expanduser()
    sources.append(TokenSource(str(default), _file_state(default)))
    return sources


def _file_state(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return "no such file"
    except (OSError, UnicodeDecodeError) as exc:
        return f"cannot be read ({getattr(exc, 'strerror', None) or type(exc).__name__})"
    return "found" if text.strip() else "empty"


def token_in_use(sources: list[TokenSource]) -> TokenSource | None:
    """The source Ray takes the token from: the first set (``$RAY_AUTH_TOKEN_PATH`` counts when set, even if broken)."""
    env, path, default = sources
    if env.found:
        return env
    if path.state != "not set":
        return path
    return default if default.found else None


def looked_in(sources: list[TokenSource]) -> str:
    return ", ".join(f"{source.where}: {source.state}" for source in sources)


def client_support() -> str | None:
    """Why this Python cannot use ``ray://`` (Ray Client needs grpcio); None when it can."""
    if importlib.util.find_spec("grpc") is None:
        return "ray:// (Ray Client) needs grpcio: pip install 'jurybox[ray]' (it brings ray[client])"
    return None


def auth_problem(target: str, *, client: bool) -> str | None:
    """Set this process's token mode to what the cluster at ``target`` wants; why it cannot join, or None.

    Args:
        target: ``HOST:PORT`` of its GCS, or of its Ray Client server when ``client``.
        client: ``target`` is a Ray Client server (``ray://``).

    None also when the cluster's answer says nothing about tokens (a gRPC server that does not
    answer in time, TLS, a mode jurybox does not know): ``ray.init`` then decides, as before.
    """
    if importlib.util.find_spec("grpc") is None:
        return client_support() if client else None  # no gRPC client here: Ray's own join decides
    user_mode = os.environ.get(MODE_ENV)
    if user_mode not in (None, "token", "disabled"):
        return None  # a mode of a newer Ray (Kubernetes tokens, say): Ray knows it, jurybox does not
    _use_mode("disabled")
    answer = _ask(target, client=client)
    if answer == "ok":
        return None  # no token wanted; a driver in token mode here would lose its actors
    if answer == "other service":
        restore()
        return _wrong_port(target, client=client)
    if answer != "refused":
        restore()
        return None
    sources = token_sources()
    source = token_in_use(sources)
    if source is None:
        restore()
        return (
            f"the Ray cluster there requires a token (token authentication) and none was found "
            f"(jurybox looked at {looked_in(sources)}): {GET_TOKEN_HINT}"
        )
    if not source.found:  # a path that cannot be read: Ray would abort this process
        restore()
        unusable = f"{source.where} cannot be used ({source.state})"
        return f"the Ray cluster there requires a token and {unusable}: {GET_TOKEN_HINT}"
    _use_mode("token")
    answer = _ask(target, client=client)
    if answer == "refused":
        restore()
        return (
            f"the Ray cluster there refused the token from {source.where} "
            f"(jurybox looked at {looked_in(sources)}; Ray takes the first set): it is not this cluster's token; "
            f"{GET_TOKEN_HINT}"
        )
    return None


def restore() -> None:
    """Put ``RAY_AUTH_MODE`` back as it was before ``auth_problem`` set it (a later local Ray reads it)."""
    if "mode" not in _saved:
        return
    before = _saved.pop("mode")
    if before is None:
        os.environ.pop(MODE_ENV, None)
    else:
        os.environ[MODE_ENV] = before
    _refresh()


def _use_mode(mode: str) -> None:
    _saved.setdefault("mode", os.environ.get(MODE_ENV))
    os.environ[MODE_ENV] = mode
    _refresh()


def _refresh() -> None:
    """Make Ray read ``RAY_AUTH_MODE`` and the token again (it caches both per process, as ray.init does for auto)."""
    raylet: Any = importlib.import_module("ray._raylet")
    raylet.Config.initialize("")
    raylet.AuthenticationTokenLoader.instance().reset_cache()


def _ask(target: str, *, client: bool, timeout: float = ASK_TIMEOUT) -> Answer:
    """One call to the GCS (its cluster id) or to the Ray Client server (a ping), with the token mode now set."""
    grpc: Any = importlib.import_module("grpc")
    channels: Any = importlib.import_module("ray._private.grpc_utils")
    channel = channels.init_grpc_channel(target, asynchronous=False)  # adds the token in token mode, as Ray does
    try:
        if client:
            proto: Any = importlib.import_module("ray.core.generated.ray_client_pb2")
            service: Any = importlib.import_module("ray.core.generated.ray_client_pb2_grpc")
            request = proto.ClusterInfoRequest(type=proto.ClusterInfoType.PING)
            service.RayletDriverStub(channel).ClusterInfo(request, timeout=timeout)
        else:
            proto = importlib.import_module("ray.core.generated.gcs_service_pb2")
            service = importlib.import_module("ray.core.generated.gcs_service_pb2_grpc")
            service.NodeInfoGcsServiceStub(channel).GetClusterId(proto.GetClusterIdRequest(), timeout=timeout)
    except grpc.RpcError as exc:
        code = exc.code() if callable(getattr(exc, "code", None)) else None
        if code == grpc.StatusCode.UNAUTHENTICATED:
            return "refused"
        if code == grpc.StatusCode.UNIMPLEMENTED:
            return "other service"
        return "unknown"
    finally:
        channel.close()
    return "ok"


def _wrong_port(target: str, *, client: bool) -> str:
    host, _, port = target.rpartition(":")
    if client:
        return (
            f"{target} answers but is not a Ray Client server (is {port} the cluster's GCS port? "
            f"then use --ray-address {host}:{port} without ray://; the client port is usually 10001)"
        )
    return (
        f"{target} answers but is not a Ray cluster's GCS port (is it the Ray Client port? then use "
        f"--ray-address ray://{host}:{port}; the GCS port is the one `ray start --head --port` took, usually 6379)"
    )
