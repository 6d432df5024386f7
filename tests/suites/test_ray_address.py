"""``--ray-address`` where no cluster answers: a clear error in seconds, not ``ray.init`` waiting a minute or more."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from suite_helpers import TOY_HEADER

from jurybox._cli.run import RunRequest, execute
from jurybox._cli.run_messages import placement_lines
from jurybox.engine import WorkerPlacement
from jurybox.executors import _ray_cluster as cluster
from jurybox.executors import _ray_join as join


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_address_nobody_listens_on_is_named_with_what_to_do() -> None:
    port = free_port()
    for address in (f"127.0.0.1:{port}", f"ray://127.0.0.1:{port}"):
        problem = cluster.unreachable(address, timeout=2)
        assert problem is not None and problem.startswith(f"no Ray cluster answers at 127.0.0.1:{port}")
        assert "ray start --head" in problem


def test_auto_is_the_cluster_this_machine_started(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setattr(cluster, "CURRENT_CLUSTER_FILE", str(tmp_path / "ray_current_cluster"))
    assert cluster.unreachable("auto") is None  # none started: ray.init says so itself, at once
    port = free_port()
    (tmp_path / "ray_current_cluster").write_text(f"127.0.0.1:{port}\n", encoding="utf-8")
    assert f"127.0.0.1:{port}" in (cluster.unreachable("auto", timeout=2) or "")  # a cluster that has stopped
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:1")
    assert "127.0.0.1:1" in (cluster.unreachable("auto", timeout=2) or "")


def test_an_address_that_answers_is_left_to_ray() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        assert cluster.unreachable(f"127.0.0.1:{server.getsockname()[1]}", timeout=2) is None
    assert cluster.unreachable("not an address") is None


@pytest.mark.ray
def test_jurybox_run_fails_fast_with_the_reason(
    toy_suite: Callable[[str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    ray = pytest.importorskip("ray")
    if ray.is_initialized():
        pytest.skip("this process already joined a Ray")
    path = toy_suite(TOY_HEADER + "cases:\n  - {name: one, prompt: hello, judges: [{contains: x}]}\n")
    port = free_port()
    started = time.monotonic()
    code = execute(RunRequest(suites=(path,), no_store=True, executor="ray", ray_address=f"127.0.0.1:{port}"))
    assert code == 2 and time.monotonic() - started < 30
    err = capsys.readouterr().err
    assert f"--ray-address 127.0.0.1:{port}: no Ray cluster answers" in " ".join(err.split())
    assert "Traceback" not in err


# -- token authentication: where the token comes from, and what a cluster's answers lead to ---------

TOKEN_VARS = ("RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "RAY_AUTH_MODE")


@pytest.fixture
def no_ray_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No token settings, and a home without ~/.ray/auth_token; returns that home."""
    for name in TOKEN_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(join, "_refresh", lambda: None)  # Ray's per-process cache: not read here
    return tmp_path


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    env_token=st.sampled_from(["", "tok-env"]),
    path_state=st.sampled_from(["unset", "found", "empty", "missing"]),
    default_state=st.sampled_from(["found", "empty", "missing"]),
)
def test_the_token_is_taken_where_ray_takes_it(
    no_ray_settings: Path, monkeypatch: pytest.MonkeyPatch, env_token: str, path_state: str, default_state: str
) -> None:
    home = no_ray_settings
    default = home / ".ray" / "auth_token"
    default.parent.mkdir(exist_ok=True)
    default.unlink(missing_ok=True)
    if default_state != "missing":
        default.write_text("tok-default\n" if default_state == "found" else "  \n", encoding="utf-8")
    monkeypatch.delenv("RAY_AUTH_TOKEN", raising=False)
    if env_token:
        monkeypatch.setenv("RAY_AUTH_TOKEN", env_token)
    path = home / "elsewhere-token"
    path.unlink(missing_ok=True)
    monkeypatch.delenv("RAY_AUTH_TOKEN_PATH", raising=False)
    if path_state != "unset":
        monkeypatch.setenv("RAY_AUTH_TOKEN_PATH", str(path))
        if path_state != "missing":
            path.write_text("tok-path" if path_state == "found" else "", encoding="utf-8")

    sources = join.token_sources()
    used = join.token_in_use(sources)
    # Ray's order: the variable, else the path it names (even a broken one: Ray aborts), else the default file.
    if env_token:
        assert used is not None and used.where == "$RAY_AUTH_TOKEN" and used.found
    elif path_state != "unset":
        assert used is not None and used.where == f"$RAY_AUTH_TOKEN_PATH ({path})"
        assert used.found == (path_state == "found")
    elif default_state == "found":
        assert used is not None and used.where == str(default) and used.found
    else:
        assert used is None
    listed = join.looked_in(sources)
    assert listed.count(": ") == 3 and str(default) in listed
    assert "tok-" not in listed  # where, never what


class Cluster:
    """A cluster's answers to ``_ask``: whether it wants a token, and which one it takes."""

    def __init__(self, wants: str | None, service: str = "gcs") -> None:
        self.wants = wants
        self.service = service
        self.asked: list[tuple[str, str | None]] = []

    def __call__(self, target: str, *, client: bool) -> str:
        mode = os.environ.get("RAY_AUTH_MODE")
        self.asked.append((mode or "", os.environ.get("RAY_AUTH_TOKEN")))
        if (self.service == "client") != client:
            return "other service"
        if self.wants is None:
            return "ok"
        return "ok" if mode == "token" and os.environ.get("RAY_AUTH_TOKEN") == self.wants else "refused"


@pytest.mark.parametrize("user_mode", [None, "token", "disabled"])
@pytest.mark.parametrize("token", [None, "right", "wrong"])
@pytest.mark.parametrize("wants", [None, "right"])
def test_the_driver_takes_the_mode_the_cluster_wants_or_says_why_not(
    no_ray_settings: Path, monkeypatch: pytest.MonkeyPatch, user_mode: str | None, token: str | None, wants: str | None
) -> None:
    pytest.importorskip("grpc")
    if user_mode is not None:
        monkeypatch.setenv("RAY_AUTH_MODE", user_mode)
    if token is not None:
        monkeypatch.setenv("RAY_AUTH_TOKEN", token)
    cluster = Cluster(wants)
    monkeypatch.setattr(join, "_ask", cluster)

    problem = join.auth_problem("127.0.0.1:6379", client=False)

    if wants is None:  # an open cluster: no token, even for a driver told token mode (its actors would die)
        assert problem is None and os.environ["RAY_AUTH_MODE"] == "disabled"
    elif token == "right":
        assert problem is None and os.environ["RAY_AUTH_MODE"] == "token"
    elif token is None:
        assert problem is not None and "requires a token" in problem and "none was found" in problem
        assert "$RAY_AUTH_TOKEN: not set" in problem and "ray get-auth-token" in problem
    else:
        assert problem is not None and "refused the token from $RAY_AUTH_TOKEN" in problem
        assert "wrong" not in problem.replace("$RAY_AUTH_TOKEN", "")
    assert cluster.asked[0][0] == "disabled"  # asked without a token first
    if problem is not None:  # nothing changed for a run that did not join
        assert os.environ.get("RAY_AUTH_MODE") == user_mode
    join.restore()
    assert os.environ.get("RAY_AUTH_MODE") == user_mode


def test_a_port_of_the_other_kind_is_named(no_ray_settings: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("grpc")
    monkeypatch.setattr(join, "_ask", Cluster(None, service="client"))
    gcs_given = join.auth_problem("10.0.0.5:10001", client=False)
    assert gcs_given is not None and "not a Ray cluster's GCS port" in gcs_given
    assert "--ray-address ray://10.0.0.5:10001" in gcs_given
    monkeypatch.setattr(join, "_ask", Cluster(None, service="gcs"))
    client_given = join.auth_problem("10.0.0.5:6379", client=True)
    assert client_given is not None and "not a Ray Client server" in client_given
    assert "--ray-address 10.0.0.5:6379 without ray://" in client_given
    assert "RAY_AUTH_MODE" not in os.environ


def test_a_token_path_that_cannot_be_read_is_named_before_ray_aborts_on_it(
    no_ray_settings: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("grpc")
    monkeypatch.setenv("RAY_AUTH_TOKEN_PATH", str(no_ray_settings / "nothing-here"))
    cluster = Cluster("right")
    monkeypatch.setattr(join, "_ask", cluster)
    problem = join.auth_problem("127.0.0.1:6379", client=False)
    assert problem is not None and "cannot be used (no such file)" in problem
    assert [mode for mode, _ in cluster.asked] == ["disabled"]  # never asked in token mode: Ray would abort


def test_without_grpc_ray_client_says_what_to_install(no_ray_settings: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "grpc" else real(name, *a))
    assert "pip install 'jurybox[ray]'" in (join.auth_problem("h:10001", client=True) or "")
    assert join.auth_problem("h:6379", client=False) is None  # ray.init decides, as before


def test_the_summary_lists_each_node_with_its_actors() -> None:
    placement = [
        WorkerPlacement("actor 0", "a" * 56, "10.0.0.1", 101, 1200),
        WorkerPlacement("actor 1", "b" * 56, "10.0.0.2", 102, 3),
        WorkerPlacement("actor 2", "a" * 56, "10.0.0.1", 103, 0),
    ]
    assert placement_lines(placement) == [
        "3 actor(s) on 2 node(s):",
        f"  node {'a' * 12} (10.0.0.1): actor 0 (pid 101, 1,200 cases), actor 2 (pid 103, 0 cases)",
        f"  node {'b' * 12} (10.0.0.2): actor 1 (pid 102, 3 cases)",
    ]
    assert placement_lines([]) == []


class FlakyRay:
    """``ray.init`` whose Ray Client session fails to start ``failures`` times (as a loaded head's sometimes does)."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls: list[str] = []

    def init(self, address: str, **settings: object) -> None:
        self.calls.append(address)
        if len(self.calls) <= self.failures:
            raise ConnectionAbortedError("Initialization failure from server:\n")

    def shutdown(self) -> None:
        return None


@pytest.mark.parametrize("failures", [0, 1, cluster.CLIENT_ATTEMPTS - 1, cluster.CLIENT_ATTEMPTS])
def test_a_ray_client_session_that_fails_to_start_is_tried_again_a_few_times(
    monkeypatch: pytest.MonkeyPatch, failures: int
) -> None:
    monkeypatch.setattr(cluster, "CLIENT_RETRY_PAUSE", 0.0)
    ray = FlakyRay(failures)
    if failures >= cluster.CLIENT_ATTEMPTS:
        with pytest.raises(ConnectionAbortedError):
            cluster._join_ray(ray, "ray://h:10001", {})  # type: ignore[arg-type]
    else:
        cluster._join_ray(ray, "ray://h:10001", {})  # type: ignore[arg-type]
    assert len(ray.calls) == min(failures + 1, cluster.CLIENT_ATTEMPTS)
    gcs = FlakyRay(1)
    with pytest.raises(ConnectionAbortedError):  # not Ray Client: nothing to start again
        cluster._join_ray(gcs, "h:6379", {})  # type: ignore[arg-type]
    assert len(gcs.calls) == 1
