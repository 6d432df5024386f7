"""``--executor ray``: a suite's cases on Ray actors, exactly once under faults, resumable, stoppable.

One local Ray (two CPUs, no dashboard) serves the whole module; each run starts
its own two actors in it. A driver killed with SIGKILL is a ``jurybox run``
subprocess that joins the same Ray with ``--ray-address``.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import OperationalError
from suite_helpers import TOY_HEADER, stub_reply

from jurybox._cli.run import RunRequest, execute
from jurybox.core import Status
from jurybox.engine import RunOptions, SuiteRunner
from jurybox.executors import RaySettings, fork_available
from jurybox.models import Spend
from jurybox.store import CaseRecord, Store, open_store
from jurybox.stubs import StubServer
from jurybox.suites import load_suite

PG_ADMIN_URL = os.environ.get("JURYBOX_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/test")


def suite_text(count: int, *, model: str | None = None, slow: bool = False) -> str:
    """``count`` toy-agent cases: listings (pass), hello (fail), crash (error); with ``model``, an LLM judge too."""
    prompts = ["What are my listings?", "What are my listings?", "hello", "please crash"]
    text = TOY_HEADER + "cases:\n"
    for i in range(count):
        prompt = ("slow " if slow else "") + prompts[i % 4]
        judges = "{contains: Beach House}"
        if model is not None:
            judges += ", {correctness: {reference: 'Beach House'}}"
        text += f"  - name: case-{i:02d}\n    prompt: '{prompt} ({i})'\n    judges: [{judges}]\n"
    return text


class Recorder:
    """A progress sink keeping what the driver heard; calls ``at[n]`` when the n-th case arrives."""

    def __init__(self, at: dict[int, Callable[[], None]] | None = None) -> None:
        self.statuses: dict[str, Status] = {}
        self.last_spend = Spend()
        self.at = at or {}

    def start(self, suite: str, total: int, done: int) -> None:
        self.total = total

    def case_done(self, record: CaseRecord, spend: Spend) -> None:
        assert record.case not in self.statuses, f"{record.case} reported twice"
        self.statuses[record.case] = record.status
        self.last_spend = spend
        action = self.at.get(len(self.statuses))
        if action is not None:
            action()

    def stop(self) -> None:
        return None


@pytest.fixture(scope="module")
def ray_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    ray = pytest.importorskip("ray")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("RAY_USAGE_STATS_ENABLED", "0")  # nothing leaves 127.0.0.1
        # The actors inherit this process's environment: their judge cache is this module's, not the checkout's.
        env.setenv("JURYBOX_CACHE_DIR", str(tmp_path_factory.mktemp("judge-cache")))
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
        yield ray
        ray.shutdown()


def run_actors(ray: Any) -> list[Any]:
    """The actors of the run in progress (each run names its own ``jurybox-<run>-<tag>-<index>``)."""
    names = sorted(name for name in ray.util.list_named_actors() if name.startswith("jurybox-"))
    return [ray.get_actor(name) for name in names]


def outcomes(store: Store, run_id: str) -> dict[str, tuple[Status, float | None]]:
    return {r.case: (r.status, r.score) for r in store.results.read_all(run_id)}


pytestmark = [pytest.mark.ray, pytest.mark.slow]


async def test_two_actors_give_the_results_and_spend_of_a_local_run(
    ray_cluster: Any, toy_suite: Callable[[str], Path], tmp_path: Path
) -> None:
    with StubServer("openai", stub_reply) as stub:
        model = f"openai:gpt-4o-mini@{stub.base_url}"
        path = toy_suite(suite_text(24, model=model))
        suite = load_suite(path, judge_model=model, concurrency=4)
        # Each actor loads the suite on its node: the way the driver did, judge model included.
        load = functools.partial(load_suite, path, judge_model=model, concurrency=4)
        with (
            open_store(f"sqlite:///{tmp_path / 'local.db'}") as one,
            open_store(f"sqlite:///{tmp_path / 'ray.db'}") as two,
        ):
            progress = Recorder()
            options = RunOptions(
                concurrency=4, executor="ray", executor_settings=RaySettings(actors=2, load_suite=load)
            )
            remote = await SuiteRunner(suite, options, store=two, progress=progress).run()
            local = await SuiteRunner(suite, RunOptions(concurrency=4), store=one).run()

            assert remote.status == "completed" and not remote.worker_errors and not remote.store_errors
            assert outcomes(two, remote.run_id) == outcomes(one, local.run_id)
            assert [r.case for r in remote.records] == [c.name for c in suite.cases]
            assert progress.statuses == {r.case: r.status for r in remote.records}
            # The judge calls of both actors add up to one total: each reached the stub once.
            assert remote.spend.attempts == len(stub.requests) == 12
            assert (remote.spend.calls, remote.spend.tokens) == (local.spend.calls, local.spend.tokens)
            assert progress.last_spend.calls == remote.spend.calls
            # The actors wrote the judge cache this machine shares: the local repeat cost no request.
            assert local.spend.attempts == 0 and len(stub.requests) == 12
            # A record that came back from an actor is the whole record: its rounds and verdict tree.
            first = next(iter(two.results.read_all(remote.run_id)))
            assert first.rounds and first.judgment.children
    assert remote.count(Status.PASS) == 12 and remote.count(Status.FAIL) == 6 and remote.count(Status.ERROR) == 6


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
    schema = f"jbx_ray_{os.getpid()}_{time.monotonic_ns() % 1_000_000}"
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


async def test_an_actor_killed_mid_run_loses_and_duplicates_nothing(
    ray_cluster: Any, toy_suite: Callable[[str], Path], store_url: str
) -> None:
    """Actor 0's process is killed (Ray restarts it), then actor 1 is killed for good (it is retired)."""
    suite = load_suite(toy_suite(suite_text(40, slow=True)))
    killed: list[int] = []

    def kill_process() -> None:
        pid = ray_cluster.get(run_actors(ray_cluster)[0].stats.remote()).pid
        os.kill(pid, signal.SIGKILL)
        killed.append(pid)

    def kill_for_good() -> None:
        ray_cluster.kill(run_actors(ray_cluster)[1], no_restart=True)

    with open_store(store_url) as store:
        opener = None if store_url.startswith("sqlite") else (lambda: open_store(store_url))
        progress = Recorder(at={6: kill_process, 18: kill_for_good})
        settings = RaySettings(actors=2, open_store=opener)
        options = RunOptions(concurrency=4, executor="ray", executor_settings=settings)
        result = await SuiteRunner(suite, options, store=store, progress=progress).run()

        assert killed, result.worker_errors
        # Every case judged exactly once: each in the store once, each heard of once.
        assert store.runs.get(result.run_id).recorded == 40 == len(result.records)
        assert sorted(progress.statuses) == [f"case-{i:02d}" for i in range(40)]
        assert {r.case: r.status for r in result.records} == progress.statuses
        assert result.count(Status.PASS) == 20 and result.count(Status.ERROR) == 10
        assert result.status == "completed" and not result.store_errors
        # The restarted actor is not a problem; the one killed for good is retired, with the reason.
        assert len(result.worker_errors) == 1
        assert "actor 1 was retired after 1 failure(s)" in result.worker_errors[0]
        assert "killed by `ray.kill`" in result.worker_errors[0]
        assert not result.ok  # a retired actor is reported, not hidden


def test_ctrl_c_stops_every_actor_and_the_resume_finishes_the_run(
    ray_cluster: Any, toy_suite: Callable[[str], Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = toy_suite(suite_text(40, slow=True))
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    request = RunRequest(suites=(path,), store=url, concurrency=2, executor="ray", actors=2, progress=False)
    with open_store(url) as store:
        interrupter = threading.Thread(target=_interrupt_after, args=(store, 4), daemon=True)
        interrupter.start()
        assert execute(request) == 130  # what Ctrl-C exits with
        interrupter.join(5)
        run = store.runs.latest("toy")
        assert run is not None and run.status == "interrupted"
        stopped_at = run.recorded
        assert 4 <= stopped_at < 40
        deadline = time.monotonic() + 10  # ray.kill takes effect asynchronously
        while run_actors(ray_cluster) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not run_actors(ray_cluster), "an actor outlived its run"
        hint = capsys.readouterr().err
        assert "--resume" in hint and "--executor ray --actors 2" in hint

        resumed = RunRequest(suites=(path,), store=url, resume="last", executor="ray", actors=2, progress=False)
        assert execute(resumed) == 1  # finished: some cases fail by design
        finished = store.runs.get(run.id)
        assert finished.status == "completed" and finished.recorded == 40


def _otlp_receiver_module() -> Any:
    """tests/traces/otlp_receiver.py (a 127.0.0.1 OTLP/HTTP receiver decoding what it is sent)."""
    import importlib.util

    location = Path(__file__).resolve().parents[1] / "traces" / "otlp_receiver.py"
    spec = importlib.util.spec_from_file_location("otlp_receiver_for_ray", location)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_ray_run_exported_live_sends_each_case_once(
    ray_cluster: Any, toy_suite: Callable[[str], Path], tmp_path: Path
) -> None:
    """The actors store their records: the driver sends those cases' spans from the store at the end, once each."""
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http")
    receiver = _otlp_receiver_module()
    path = toy_suite(suite_text(8))
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    with receiver.otlp_receiver() as (endpoint, received):
        request = RunRequest(
            suites=(path,), store=url, concurrency=2, executor="ray", actors=2, progress=False, otel_endpoint=endpoint
        )
        assert execute(request) == 1  # finished: some cases fail by design
        spans = received.spans()
    cases = Counter(span.name for span, _ in spans if span.name.startswith("jurybox case"))
    assert cases == Counter({f"jurybox case case-{i:02d}": 1 for i in range(8)})
    [(run_span, attributes)] = [(span, a) for span, a in spans if span.name == "jurybox run toy"]
    assert attributes["jurybox.run.cases"] == 8
    assert all(span.parent_span_id == run_span.span_id for span, _ in spans if span.name.startswith("jurybox case"))
    with open_store(url) as store:
        stored = store.runs.latest("toy")
        assert stored is not None and attributes["jurybox.run.id"] == stored.id


def _interrupt_after(store: Store, cases: int) -> None:
    """Ctrl-C this process once the run has ``cases`` results (its handler is in place by then)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        run = store.runs.latest("toy")
        if run is not None and run.recorded >= cases:
            os.kill(os.getpid(), signal.SIGINT)
            return
        time.sleep(0.02)


def test_a_driver_killed_with_sigkill_is_finished_by_resume(
    ray_cluster: Any, toy_suite: Callable[[str], Path], tmp_path: Path
) -> None:
    path = toy_suite(suite_text(40, slow=True))
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    command = [sys.executable, "-m", "jurybox", "run", str(path), "--store", url, "--concurrency", "2"]
    # This module's Ray by its address ("auto" would pick whichever Ray this machine started last).
    address = ray_cluster.get_runtime_context().gcs_address
    command += ["--executor", "ray", "--ray-address", address, "--no-progress"]
    driver = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    with open_store(url) as store:
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and driver.poll() is None:
                run = store.runs.latest("toy")
                if run is not None and run.recorded >= 4:
                    break
                time.sleep(0.02)
            assert driver.poll() is None, driver.communicate()[1].decode()
            driver.kill()
        finally:
            driver.wait(30)
        run = store.runs.latest("toy")
        assert run is not None and run.status == "running" and run.recorded < 40

        request = RunRequest(suites=(path,), store=url, resume="last", executor="ray", progress=False)
        assert execute(request) == 1
        finished = store.runs.get(run.id)
        assert finished.status == "completed" and finished.recorded == 40


def test_without_the_ray_extra_the_run_says_how_to_install_it(
    toy_suite: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ray" else real(name, *a))
    path = toy_suite(suite_text(2))
    assert execute(RunRequest(suites=(path,), no_store=True, executor="ray")) == 2
    assert "the ray executor needs the ray extra: pip install 'jurybox[ray]'" in capsys.readouterr().err
    with pytest.raises(ValueError, match="needs the ray extra"):
        asyncio.run(SuiteRunner(load_suite(path), RunOptions(executor="ray")).run())


def test_a_run_without_the_ray_executor_never_imports_ray(toy_suite: Callable[[str], Path]) -> None:
    path = toy_suite(suite_text(4))
    script = (
        "import sys\n"
        "from jurybox._cli.run import RunRequest, execute\n"
        f"code = execute(RunRequest(suites=({str(path)!r},), no_store=True, progress=False))\n"
        "assert code == 1, code\n"
        "assert 'ray' not in sys.modules, 'ray was imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr


def test_the_processes_executor_forks_workers_without_being_told_how_many(
    toy_suite: Callable[[str], Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if not fork_available():
        pytest.skip("the processes executor forks")
    path = toy_suite(suite_text(8))
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    assert execute(RunRequest(suites=(path,), store=url, concurrency=4, executor="processes", progress=False)) == 1
    with open_store(url) as store:
        run = store.runs.latest("toy")
        assert run is not None and run.status == "completed" and run.recorded == 8
    assert "worker" not in capsys.readouterr().out  # no worker died: the report has no note of one
    with pytest.raises(ValueError, match="the ray executor takes actors"):
        RunOptions(executor="ray", workers=2)


async def test_a_cases_file_runs_on_actors_that_build_only_the_lines_they_are_sent(
    ray_cluster: Any, toy_suite: Callable[..., Path], store_url: str
) -> None:
    """The driver sends lines, not names: each actor loads the suite unchecked and builds what it is sent."""
    inline = toy_suite(suite_text(30, slow=True))
    spec = load_suite(inline)
    header = inline.read_text(encoding="utf-8").split("cases:\n")[0]
    path = toy_suite(header + "cases_file: cases.jsonl\n", "streamed.yaml")
    (path.parent / "cases.jsonl").write_text(
        "".join(json.dumps(dict(case.spec)) + "\n" for case in spec.cases), encoding="utf-8"
    )
    suite = load_suite(path)
    killed: list[int] = []

    def kill_process() -> None:
        pid = ray_cluster.get(run_actors(ray_cluster)[0].stats.remote()).pid
        os.kill(pid, signal.SIGKILL)
        killed.append(pid)

    with open_store(store_url) as store:
        opener = None if store_url.startswith("sqlite") else (lambda: open_store(store_url))
        progress = Recorder(at={5: kill_process})
        settings = RaySettings(actors=2, open_store=opener)
        options = RunOptions(concurrency=4, executor="ray", executor_settings=settings)
        result = await SuiteRunner(suite, options, store=store, progress=progress).run()
        local = await SuiteRunner(load_suite(inline), RunOptions(concurrency=4), store=store).run()

        assert killed and result.status == "completed" and not result.store_errors
        assert store.runs.get(result.run_id).recorded == 30 == len(result.records)
        assert store.results.planned(result.run_id) == [c.name for c in spec.cases]
        assert outcomes(store, result.run_id) == outcomes(store, local.run_id)
        assert sorted(progress.statuses) == sorted(c.name for c in spec.cases)
