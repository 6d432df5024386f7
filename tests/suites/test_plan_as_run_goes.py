"""A big plan is written in chunks while the run's cases run: the first case starts at once, the store stays
writable by other commands, and a run killed part-way through its plan resumes with every case stored once."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

import jurybox.engine._plan_writer as plan_writer
from jurybox.core import CaseRecord, Judgment, Status
from jurybox.engine import RunOptions, SuiteRunner
from jurybox.executors import fork_available
from jurybox.models import Spend
from jurybox.runs import RunRequest, prepare
from jurybox.store import RunRepository, Store, StoreAccessError, open_store
from jurybox.store._schema import results_table, run_cases_table
from jurybox.suites import load_suite

DRIVER = Path(__file__).with_name("plan_kill_driver.py")
AGENT = """import asyncio


async def respond(message, session_id):
    await asyncio.sleep({sleep})
    return 'the answer is 42'
"""


def write_suite(folder: Path, count: int, *, failing_every: int = 7, sleep: float = 0.001) -> Path:
    """A suite of ``count`` cases in a cases file (each reply takes ``sleep`` s); every ``failing_every``-th fails."""
    (folder / "plan_agent.py").write_text(AGENT.format(sleep=sleep), encoding="utf-8")
    with (folder / "cases.jsonl").open("w", encoding="utf-8") as out:
        for i in range(count):
            wanted = "43" if i % failing_every == 0 else "42"
            tags = ["smoke"] if i % 2 == 0 else []
            out.write(
                json.dumps({"name": f"c-{i:05d}", "prompt": f"q {i}", "tags": tags, "judges": [{"contains": wanted}]})
            )
            out.write("\n")
    path = folder / "suite.yaml"
    path.write_text("name: big\nagent: {python: 'plan_agent:respond'}\ncases_file: cases.jsonl\n", encoding="utf-8")
    return path


class FirstCase:
    """A progress sink that notes how much of the plan the store held when the first case finished."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.run_id = ""
        self.plan_at_first: tuple[int, int] | None = None

    def start(self, suite: str, total: int, done: int) -> None:
        return None

    def case_done(self, record: CaseRecord, spend: Spend) -> None:
        if self.plan_at_first is None:
            written, size, _ = self.store.runs.plan_progress(self.run_id)
            self.plan_at_first = (written, size)

    def stop(self) -> None:
        return None


def slowed_chunks(monkeypatch: pytest.MonkeyPatch, pause: float) -> list[int]:
    """Make each chunk after the first wait ``pause`` s before its transaction; returns where each chunk began."""
    extend = RunRepository.extend_plan
    firsts: list[int] = []

    def slow(self: RunRepository, run_id: str, cases: Sequence[tuple[str, Mapping[str, Any]]], **kw: Any) -> None:
        time.sleep(pause)
        firsts.append(kw["first"])
        extend(self, run_id, cases, **kw)

    monkeypatch.setattr(RunRepository, "extend_plan", slow)
    return firsts


def plan_and_results(store: Store, run_id: str) -> tuple[list[tuple[str, int, int]], list[tuple[str, int | None]]]:
    """(name, position, version) of every plan row in plan order; (name, version) of every result."""
    with store.engine.connect() as connection:
        plan = connection.execute(
            select(run_cases_table.c.case_name, run_cases_table.c.position, run_cases_table.c.case_id)
            .where(run_cases_table.c.run_id == run_id)
            .order_by(run_cases_table.c.position)
        ).all()
        results = connection.execute(
            select(results_table.c.case_name, results_table.c.case_id).where(results_table.c.run_id == run_id)
        ).all()
    return [tuple(row) for row in plan], [tuple(row) for row in results]  # type: ignore[misc]


async def test_the_first_case_runs_while_the_plan_is_still_being_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(plan_writer, "PLAN_CHUNK", 100)
    firsts = slowed_chunks(monkeypatch, 0.05)
    suite = load_suite(write_suite(tmp_path, 1_000))
    with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        progress = FirstCase(store)
        runner = SuiteRunner(suite, RunOptions(concurrency=4), store=store, progress=progress,
                             on_open=lambda run_id: setattr(progress, "run_id", run_id))  # fmt: skip
        result = await runner.run()
        assert result.status == "completed" and result.total_cases == 1_000 == len(result.records)
        assert result.count(Status.FAIL) == 143 and not result.store_errors
        assert progress.plan_at_first is not None
        written, size = progress.plan_at_first
        assert size == 1_000 and 100 <= written < 1_000  # the first case finished with most of the plan to come
        assert firsts == list(range(100, 1_001, 100))  # nine chunks after the first, then the empty last one
        plan, results = plan_and_results(store, result.run_id)
        assert [(name, position) for name, position, _ in plan] == [(f"c-{i:05d}", i) for i in range(1_000)]
        versions = {name: version for name, _, version in plan}
        assert sorted(results) == sorted(versions.items())  # every case once, with the version it ran
        info = store.runs.get(result.run_id)
        assert (info.status, info.planned, info.recorded) == ("completed", 1_000, 1_000)


async def test_other_commands_write_to_the_store_while_a_big_plan_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process's small run and a listing go through between the plan's chunks, not after all of it."""
    monkeypatch.setattr(plan_writer, "PLAN_CHUNK", 500)
    suite = load_suite(write_suite(tmp_path, 20_000))
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    landed: list[tuple[int, int, float]] = []  # (plan rows before, after, seconds the write took)
    failures: list[str] = []
    done = threading.Event()

    def other_commands(run_ids: list[str]) -> None:
        with open_store(url, busy_timeout=20) as other:
            while not done.is_set():
                if not run_ids:
                    time.sleep(0.005)
                    continue
                before = other.runs.plan_progress(run_ids[0]).written
                started = time.perf_counter()
                try:
                    small = other.runs.begin("other", cases={"one": {"prompt": "hi"}})
                    other.results.record(small, CaseRecord("one", Judgment(Status.PASS, reasoning="ok")))
                    other.finish_run(small)
                    other.runs.newest(limit=5)  # what `jurybox runs` reads
                except Exception as exc:  # a locked store is the failure this test looks for
                    failures.append(f"{type(exc).__name__}: {exc}")
                    return
                after = other.runs.plan_progress(run_ids[0])
                landed.append((before, after.written, time.perf_counter() - started))
                if after.complete:
                    return

    opened: list[str] = []
    writer = threading.Thread(target=other_commands, args=(opened,))
    writer.start()
    try:
        with open_store(url) as store:
            result = await SuiteRunner(suite, RunOptions(concurrency=8), store=store, on_open=opened.append).run()
            assert result.status == "completed" and len(result.records) == 20_000
            assert result.count(Status.FAIL) == 2_858
    finally:
        done.set()
        writer.join(timeout=60)
    assert not failures, failures
    during = [entry for entry in landed if entry[1] < 20_000]
    assert during, f"no other write landed while the plan was written: {landed[:5]}"
    with open_store(url) as store:
        others = store.runs.newest("other")
        assert others and all(run.status == "completed" and run.recorded == 1 for run in others)


def _start(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(DRIVER.parent), *sys.path) if p)}
    return subprocess.Popen(
        [sys.executable, str(DRIVER), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )


def _plan_and_count(store: Store) -> tuple[int, int, int]:
    """(plan rows, the plan's size, results) of the suite's latest run, read as another command would."""
    latest = store.runs.latest("big")
    if latest is None:
        return 0, 0, 0
    written, size, _ = store.runs.plan_progress(latest.id)
    return written, size, latest.recorded


def _kill_when(url: str, wanted: Any, *args: str, may_finish: bool = False) -> tuple[int, int, int]:
    """Start the driver, SIGKILL it once ``wanted(plan rows, size, results)`` holds; what the store held then.

    With ``may_finish``, a driver that finished first (a machine so busy that the plan came last) is no failure.
    """
    process = _start(*args)
    try:
        deadline = time.monotonic() + 120
        seen = (0, 0, 0)
        with open_store(url) as store:
            while time.monotonic() < deadline and process.poll() is None:
                seen = _plan_and_count(store)
                if wanted(*seen):
                    break
                time.sleep(0.005)
        assert may_finish or process.poll() is None, f"the driver ended before the kill point: {process.communicate()}"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, signal.SIGKILL)
        process.communicate(timeout=60)
    return seen


def test_a_run_killed_while_its_plan_is_written_resumes_with_every_case_stored_once(tmp_path: Path) -> None:
    count = 3_000
    path = write_suite(tmp_path, count, sleep=0.01)  # 8 at a time: about 4 s of cases, longer than the plan
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    args = (str(path), url, "50", "0.03")  # 60 chunks of 50, each 30 ms apart: about 2 s of planning
    kills = [
        # While the first run writes its plan, once some cases are stored.
        _kill_when(url, lambda written, size, results: results >= 20 and 0 < written < size / 3, *args),
        # While its resume writes the rest of that plan.
        _kill_when(url, lambda written, size, results: size / 3 <= written < size * 2 / 3, *args),
        # Once the plan is whole, part-way through the cases.
        _kill_when(url, lambda written, size, results: written == size and results < size, *args, may_finish=True),
    ]
    assert [k[0] < k[1] for k in kills] == [True, True, False], kills
    final = _start(*args)
    out, err = final.communicate(timeout=300)
    assert final.returncode == 0, err
    assert out.splitlines()[-1].startswith("completed "), out

    with open_store(url) as store:
        [run] = store.runs.newest("big")  # resumed each time: one run
        assert (run.status, run.planned, run.recorded) == ("completed", count, count)
        plan, results = plan_and_results(store, run.id)
        assert [(name, position) for name, position, _ in plan] == [(f"c-{i:05d}", i) for i in range(count)]
        versions = {name: version for name, _, version in plan}
        assert sorted(results) == sorted(versions.items())  # each case stored once, with its version
        records = store.results.records(run.id)
        assert [r.case for r in records] == [f"c-{i:05d}" for i in range(count)]
        assert records.status_counts()[Status.FAIL] == len(range(0, count, 7))
        with store.engine.connect() as connection:
            assert connection.execute(select(func.count()).select_from(results_table)).scalar_one() == count


def test_a_filtered_run_killed_mid_plan_resumes_its_own_selection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rest of a plan is the selection the run was started with: ``--resume last`` takes no filter."""
    monkeypatch.setattr(plan_writer, "PLAN_CHUNK", 40)
    path = write_suite(tmp_path, 400)
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    with open_store(url) as store:
        # What a kill leaves: the run opened with two chunks of its smoke selection, four cases judged.
        smoke = [f"c-{i:05d}" for i in range(0, 400, 2)]
        definitions = [(name, {"prompt": name}) for name in smoke]
        run_id = store.runs.begin("big", cases=definitions[:80], planned=200, config={"selectors": ["smoke"]})
        store.results.record_many(run_id, [CaseRecord(n, Judgment(Status.PASS, reasoning="r")) for n in smoke[:3]])
        store.results.record_many(run_id, [CaseRecord(smoke[150], Judgment(Status.PASS, reasoning="r"))])

    with prepare(RunRequest(suites=(path,), store=url, resume="last")) as prepared:
        prepared.open()
        [planned] = prepared.suites
        assert planned.resume == run_id and len(planned.plan.cases) == 200  # what the intro and report speak of
        [result] = prepared.run()
    assert result.status == "completed" and result.resumed == 4 and result.total_cases == 200
    assert [r.case for r in result.records] == smoke
    with open_store(url) as store:
        plan, results = plan_and_results(store, run_id)
        assert [name for name, _, _ in plan] == smoke and [p for _, p, _ in plan] == list(range(200))
        assert sorted(results) == sorted((name, version) for name, _, version in plan)


@pytest.mark.skipif(not fork_available(), reason="worker processes need os.fork")
async def test_worker_processes_writing_their_own_results_while_the_plan_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each worker writes its results itself, some before their plan rows: each is stored once, with its version."""
    monkeypatch.setattr(plan_writer, "PLAN_CHUNK", 100)
    slowed_chunks(monkeypatch, 0.02)  # the workers finish cases faster than the plan is written
    suite = load_suite(write_suite(tmp_path, 1_500))
    with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        options = RunOptions(concurrency=8, workers=2, executor="processes")
        result = await SuiteRunner(suite, options, store=store).run()
        assert result.status == "completed" and not result.store_errors and not result.worker_errors
        assert len(result.records) == 1_500 and result.count(Status.FAIL) == len(range(0, 1_500, 7))
        plan, results = plan_and_results(store, result.run_id)
        assert [name for name, _, _ in plan] == [f"c-{i:05d}" for i in range(1_500)]
        assert sorted(results) == sorted((name, version) for name, _, version in plan)


async def test_a_chunk_the_store_refuses_stops_the_run_and_its_resume_finishes_the_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(plan_writer, "PLAN_CHUNK", 100)
    extend = RunRepository.extend_plan
    calls: list[int] = []

    def refusing(self: RunRepository, run_id: str, cases: Sequence[tuple[str, Mapping[str, Any]]], **kw: Any) -> None:
        calls.append(kw["first"])
        if len(calls) == 3:
            raise StoreAccessError("sqlite:///runs.db", "database is locked")
        time.sleep(0.02)
        extend(self, run_id, cases, **kw)

    monkeypatch.setattr(RunRepository, "extend_plan", refusing)
    suite = load_suite(write_suite(tmp_path, 800))
    with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        stopped = await SuiteRunner(suite, RunOptions(concurrency=4), store=store).run()
        assert stopped.status == "interrupted"
        assert stopped.store_errors == [
            "the run's plan could not be written past case 300: StoreAccessError: "
            "the store sqlite:///runs.db cannot be used right now: database is locked"
        ]
        assert tuple(store.runs.plan_progress(stopped.run_id))[:2] == (300, 800)

        resumed = await SuiteRunner(load_suite(tmp_path / "suite.yaml"), RunOptions(concurrency=4), store=store).run(
            resume=stopped.run_id
        )
        assert resumed.status == "completed" and len(resumed.records) == 800 and resumed.ok is False  # 1 in 7 fail
        plan, results = plan_and_results(store, stopped.run_id)
        assert [name for name, _, _ in plan] == [f"c-{i:05d}" for i in range(800)]
        assert sorted(results) == sorted((name, version) for name, _, version in plan)
