"""``--ray-address`` to a cluster started outside jurybox (``ray start``, token authentication), as teams run it.

The module starts its own two-node cluster with ``ray start --head`` and ``ray start --address``
(one CPU and a small object store each, node address 127.0.0.1, a temporary directory and free
ports of its own, a token of its own), and ``jurybox run`` processes join it the ways users do:
the GCS address, ``ray://`` and ``auto``, the token from ``$RAY_AUTH_TOKEN_PATH`` or
``$RAY_AUTH_TOKEN``, never from ``RAY_AUTH_MODE`` (the case that used to fail).

Teardown stops the two ``ray start --block`` processes and then kills, by process id, whatever
they started that is still alive. Not ``ray stop``: it kills every Ray process on the machine,
other tests' clusters included.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import OperationalError

from jurybox.store import open_store

pytestmark = [pytest.mark.ray, pytest.mark.slow]

PG_ADMIN_URL = os.environ.get("JURYBOX_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
CASES = 24
START_TIMEOUT = 120.0
"""Seconds a node gets to start (two cores shared with other work: Ray's start takes 5 to 30 s here)."""
RUN_TIMEOUT = 240.0
HEAD_PORTS = ("port", "ray-client-server-port", "dashboard-port")
NODE_PORTS = (
    "dashboard-agent-listen-port",
    "dashboard-agent-grpc-port",
    "runtime-env-agent-port",
    "metrics-export-port",
    "node-manager-port",
    "object-manager-port",
)


@dataclass(frozen=True)
class Cluster:
    gcs: str
    client: str
    token: Path
    nodes: frozenset[str]
    """The ids of the two nodes, as the cluster lists them."""


def free_ports(count: int) -> list[int]:
    sockets = []
    try:
        for _ in range(count):
            probe = socket.socket()
            probe.bind(("127.0.0.1", 0))
            sockets.append(probe)
        return [int(s.getsockname()[1]) for s in sockets]
    finally:
        for probe in sockets:
            probe.close()


def ray_start(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """``ray start ... --block`` in a session of its own (its services are its children), logging to ``log``."""
    ray_cli = Path(sys.executable).parent / "ray"
    command = [str(ray_cli), "start", "--block", "--node-ip-address", "127.0.0.1", "--num-cpus", "1"]
    command += ["--object-store-memory", str(80 * 1024 * 1024), "--disable-usage-stats", *args]
    with log.open("wb") as out:
        return subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def wait_started(process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        written = log.read_text(encoding="utf-8", errors="replace")
        if "Ray runtime started" in written:
            return
        if process.poll() is not None:
            pytest.fail(f"ray start exited with {process.returncode}:\n{written[-3000:]}")
        time.sleep(0.5)
    pytest.fail(f"ray start did not start within {START_TIMEOUT:g}s:\n{log.read_text(errors='replace')[-3000:]}")


def alive_nodes(gcs: str, env: dict[str, str]) -> set[str]:
    """The cluster's live node ids, asked by a separate driver (this process stays out of Ray)."""
    script = (
        "import logging, sys, ray\n"
        "ray.init(address=sys.argv[1], log_to_driver=False, logging_level=logging.ERROR)\n"
        "print(' '.join(n['NodeID'] for n in ray.nodes() if n['Alive']))\n"
    )
    asked = {**env, "RAY_AUTH_MODE": "token"}
    done = subprocess.run(
        [sys.executable, "-c", script, gcs], env=asked, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return set(done.stdout.split())


def descendants(roots: list[int]) -> list[int]:
    """``roots`` and every process below them (read from /proc: the processes this module started)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], list(roots)
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def stop(processes: list[subprocess.Popen[bytes]]) -> None:
    """SIGTERM the ``ray start`` processes (they stop their services), then SIGKILL what of theirs is left."""
    started = descendants([p.pid for p in processes if p.poll() is None])
    for process in processes:
        if process.poll() is None:
            process.terminate()
    for process in processes:
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
    deadline = time.monotonic() + 10
    left = [pid for pid in started if Path(f"/proc/{pid}").exists()]
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = [pid for pid in left if Path(f"/proc/{pid}").exists()]
    for pid in left:
        with contextlib.suppress(ProcessLookupError, PermissionError):  # gone since
            os.kill(pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    pytest.importorskip("ray")
    if not (Path(sys.executable).parent / "ray").exists():
        pytest.skip("the ray command is not installed next to this Python")
    # Short: Ray's Unix socket paths under it must stay within 107 bytes.
    root = Path(tempfile.mkdtemp(prefix="jbxray", dir="/tmp"))
    token = root / "token"
    token.write_text(secrets.token_hex(32), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN_PATH=str(token), RAY_USAGE_STATS_ENABLED="0")
    env["JURYBOX_CACHE_DIR"] = str(root / "judge-cache")
    processes: list[subprocess.Popen[bytes]] = []
    try:
        head_ports = dict(zip(HEAD_PORTS + NODE_PORTS, free_ports(len(HEAD_PORTS + NODE_PORTS)), strict=True))
        args = ["--head", "--temp-dir", str(root / "ray"), "--include-dashboard", "false"]
        args += [f"--{name}={port}" for name, port in head_ports.items()]
        processes.append(ray_start(args, env, root / "head.log"))
        wait_started(processes[0], root / "head.log")
        gcs = f"127.0.0.1:{head_ports['port']}"
        node_ports = dict(zip(NODE_PORTS, free_ports(len(NODE_PORTS)), strict=True))
        args = ["--address", gcs, *(f"--{name}={port}" for name, port in node_ports.items())]
        processes.append(ray_start(args, env, root / "node.log"))
        wait_started(processes[1], root / "node.log")
        deadline = time.monotonic() + START_TIMEOUT
        while len(nodes := alive_nodes(gcs, env)) < 2 and time.monotonic() < deadline:
            time.sleep(1)
        assert len(nodes) == 2, f"the cluster has nodes {nodes}"
        yield Cluster(gcs, f"ray://127.0.0.1:{head_ports['ray-client-server-port']}", token, frozenset(nodes))
    finally:
        stop(processes)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    (tmp_path / "capitals_agent.py").write_text(
        "import asyncio\n\n\nasync def respond(message, session_id):\n"
        "    await asyncio.sleep(0.2)\n    return 'The capital of France is Paris.'\n",
        encoding="utf-8",
    )
    cases = "".join(
        f"  - name: q{i:02d}\n    prompt: 'What is the capital of France? ({i})'\n    judges: [{{contains: Paris}}]\n"
        for i in range(CASES)
    )
    path = tmp_path / "capitals.yaml"
    path.write_text(f"name: capitals\nagent: {{python: 'capitals_agent:respond'}}\ncases:\n{cases}", encoding="utf-8")
    return path


def driver_env(**settings: str) -> dict[str, str]:
    """This process's environment without Ray's settings (a local Ray here may have set some), plus ``settings``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env.update(RAY_USAGE_STATS_ENABLED="0", COLUMNS="300")  # one line per summary line, however long
    return {**env, **settings}


def jurybox_run(suite: Path, address: str, env: dict[str, str], store: str | None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "jurybox", "run", str(suite), "--executor", "ray", "--ray-address", address]
    command += ["--actors", "2", "--concurrency", "4", "--no-progress"]
    command += ["--store", store] if store is not None else ["--no-store"]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT, check=False)


def placement(stderr: str) -> tuple[str, dict[str, int]]:
    """The summary's count line, and each node's cases (the node ids as shown) from the lines below it."""
    lines = stderr.splitlines()
    count = next((line.rstrip(":") for line in lines if re.fullmatch(r"\d+ actor\(s\) on \d+ node\(s\):", line)), "")
    cases: dict[str, int] = {}
    for line in lines:
        node = re.match(r"  node ([0-9a-f]+) \(", line)
        if node is not None:
            cases[node.group(1)] = sum(int(n.replace(",", "")) for n in re.findall(r"([\d,]+) cases\)", line))
    return count, cases


def assert_on_both_nodes(cluster: Cluster, done: subprocess.CompletedProcess[str]) -> None:
    count, cases = placement(done.stderr)
    assert count == "2 actor(s) on 2 node(s)", done.stderr
    assert len(cases) == 2 and all(any(node.startswith(shown) for node in cluster.nodes) for shown in cases)
    assert sum(cases.values()) == CASES and all(cases.values()), cases


def assert_exactly_once(url: str) -> None:
    with open_store(url) as store:
        run = store.runs.latest("capitals")
        assert run is not None and run.status == "completed" and run.recorded == CASES
        names = Counter(record.case for record in store.results.read_all(run.id))
        assert names == Counter({f"q{i:02d}": 1 for i in range(CASES)})


def _pg_url() -> Iterator[str]:
    engine = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT", connect_args={"connect_timeout": 5})
    try:
        with engine.connect() as connection:
            connection.execute(text("SELECT 1"))
    except OperationalError as exc:
        engine.dispose()
        reason = f"PostgreSQL at {PG_ADMIN_URL} is unreachable: {str(exc).splitlines()[0]}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{reason} (CI=true: PostgreSQL tests must run, not skip)")
        pytest.skip(reason)
    schema = f"jbx_join_{os.getpid()}_{time.monotonic_ns() % 1_000_000}"
    with engine.connect() as connection:
        connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    try:
        yield f"{PG_ADMIN_URL}?options=-csearch_path%3D{schema}"
    finally:
        with engine.connect() as connection:
            connection.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        engine.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """SQLite: the records come back and the driver writes them. PostgreSQL: the actors write."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'runs.db'}"
    else:
        yield from _pg_url()


def test_the_gcs_address_with_the_token_in_a_file_runs_on_both_nodes_exactly_once(
    cluster: Cluster, suite: Path, store_url: str
) -> None:
    """The case that failed: HOST:PORT, RAY_AUTH_MODE not set, the token where Ray keeps it."""
    done = jurybox_run(suite, cluster.gcs, driver_env(RAY_AUTH_TOKEN_PATH=str(cluster.token)), store_url)
    assert done.returncode == 0, done.stderr[-3000:]
    assert_on_both_nodes(cluster, done)
    assert_exactly_once(store_url)


def test_ray_client_and_auto_join_the_same_cluster(cluster: Cluster, suite: Path, tmp_path: Path) -> None:
    token = cluster.token.read_text(encoding="utf-8")
    for address, env in (
        (cluster.client, driver_env(RAY_AUTH_TOKEN=token)),
        ("auto", driver_env(RAY_ADDRESS=cluster.gcs, RAY_AUTH_TOKEN_PATH=str(cluster.token))),
    ):
        url = f"sqlite:///{tmp_path / (address.replace('/', '_').replace(':', '_') + '.db')}"
        done = jurybox_run(suite, address, env, url)
        assert done.returncode == 0, f"{address}: {done.stderr[-3000:]}"
        assert_on_both_nodes(cluster, done)
        assert_exactly_once(url)


def test_a_missing_or_wrong_token_is_one_line_that_names_where_jurybox_looked(
    cluster: Cluster, suite: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"  # no ~/.ray/auth_token there
    home.mkdir()
    started = time.monotonic()
    missing = jurybox_run(suite, cluster.gcs, driver_env(HOME=str(home)), None)
    wrong = jurybox_run(suite, cluster.client, driver_env(HOME=str(home), RAY_AUTH_TOKEN="not-the-token"), None)
    assert time.monotonic() - started < 120  # seconds each, not ray.init's 20 to 40 s of retries and then some

    said = " ".join(missing.stderr.split())
    assert missing.returncode == 2 and "Traceback" not in missing.stderr, missing.stderr
    assert f"--ray-address {cluster.gcs}: the Ray cluster there requires a token" in said
    for where in ("$RAY_AUTH_TOKEN: not set", "$RAY_AUTH_TOKEN_PATH: not set", f"{home}/.ray/auth_token: no such file"):
        assert where in said, said
    assert "ray get-auth-token" in said

    said = " ".join(wrong.stderr.split())
    assert wrong.returncode == 2 and "Traceback" not in wrong.stderr, wrong.stderr
    assert f"--ray-address {cluster.client}: the Ray cluster there refused the token from $RAY_AUTH_TOKEN" in said
    assert "not-the-token" not in said  # the token itself is never printed
