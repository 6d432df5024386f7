"""``--ray-address`` where no cluster answers: a clear error in seconds, not ``ray.init`` waiting a minute or more."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from suite_helpers import TOY_HEADER

from jurybox._cli.run import RunRequest, execute
from jurybox.executors import _ray_cluster as cluster


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
