"""``--workers``: cases run in forked processes that write to the store; the parent counts and finishes the run."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path

import pytest
from suite_helpers import TOY_HEADER, stub_reply

from jurybox.core import Status
from jurybox.engine import RunOptions, SuiteRunner
from jurybox.executors import fork_available
from jurybox.executors._workers import start_worker, stopped_early
from jurybox.models import Spend
from jurybox.store import CaseRecord, Store, open_store
from jurybox.stubs import StubServer
from jurybox.suites import load_suite

pytestmark = pytest.mark.skipif(not fork_available(), reason="--workers forks its worker processes")

MIXED = (
    TOY_HEADER
    + "cases:\n"
    + "".join(
        f"  - name: case-{i:02d}\n    prompt: '{prompt} ({i})'\n    judges: [{{contains: Beach House}}]\n"
        for i, prompt in enumerate(["What are my listings?", "What are my listings?", "hello", "please crash"] * 5)
    )
)


class Recorder:
    """A progress sink that keeps what the parent hears, and can stop the run after some cases."""

    def __init__(self, stop_after: int | None = None) -> None:
        self.statuses: dict[str, Status] = {}
        self.last_spend = Spend()
        self.stop_after = stop_after
        self.runner: SuiteRunner | None = None

    def start(self, suite: str, total: int, done: int) -> None:
        self.total = total

    def case_done(self, record: CaseRecord, spend: Spend) -> None:
        assert record.case not in self.statuses, f"{record.case} reported twice"
        self.statuses[record.case] = record.status
        self.last_spend = spend
        if self.stop_after is not None and len(self.statuses) == self.stop_after and self.runner is not None:
            self.runner.stop()  # what Ctrl-C does

    def stop(self) -> None:
        return None


def open_sqlite(tmp_path: Path, name: str) -> Store:
    return open_store(f"sqlite:///{tmp_path / name}")


def outcomes(store: Store, run_id: str) -> dict[str, tuple[Status, float | None, str | None]]:
    return {r.case: (r.status, r.score, r.error and r.error.split(":")[0]) for r in store.results.read_all(run_id)}


async def test_workers_record_every_case_once_with_the_verdicts_of_one_process(
    toy_suite: Callable[[str], Path], tmp_path: Path
) -> None:
    suite = load_suite(toy_suite(MIXED))
    with open_sqlite(tmp_path, "one.db") as one_store, open_sqlite(tmp_path, "two.db") as two_store:
        one = await SuiteRunner(suite, RunOptions(concurrency=4), store=one_store).run()
        progress = Recorder()
        two = await SuiteRunner(suite, RunOptions(concurrency=4, workers=2), store=two_store, progress=progress).run()

        assert two.status == "completed" and not two.worker_errors and not two.store_errors
        assert outcomes(two_store, two.run_id) == outcomes(one_store, one.run_id)
        assert [r.case for r in two.records] == [c.name for c in suite.cases]  # plan order, each once
        assert two_store.runs.get(two.run_id).status == "completed"
        # The parent heard of every case once, with the status the store holds.
        assert progress.statuses == {r.case: r.status for r in two.records}
    assert two.count(Status.ERROR) == 5 and two.count(Status.FAIL) == 5 and not two.ok


async def test_workers_share_a_judge_models_connection_limit(toy_suite: Callable[[str], Path], tmp_path: Path) -> None:
    """A judge naming its own model (limit 16) in a run of concurrency 32: each worker gets 8 connections."""
    with StubServer("openai", stub_reply, latency=0.1) as stub, open_sqlite(tmp_path, "runs.db") as store:
        model = f"openai:gpt-4o-mini@{stub.base_url}"
        text = TOY_HEADER + "cases:\n"
        for i in range(48):
            text += f"  - name: case-{i:02d}\n    prompt: 'What are my listings? ({i})'\n"
            text += f"    judges: [{{correctness: {{reference: 'Beach House', model: '{model}'}}}}]\n"
        # The suite's own judge model (limit 32) turns the LLM tier on; the judges use theirs (limit 16).
        suite = load_suite(toy_suite(text), judge_model=model, concurrency=32)
        progress = Recorder()
        result = await SuiteRunner(suite, RunOptions(concurrency=32, workers=2), store=store, progress=progress).run()

        assert result.status == "completed" and result.ok and len(result.records) == 48
        # Without the shares, each worker's 16 cases in flight would use the model's 16 connections: 32.
        assert stub.connections <= 16 and stub.max_in_flight <= 16
        # Each worker's spend reaches the parent: one judge call per case.
        assert result.spend.calls == len(stub.requests) == 48
        assert progress.last_spend.calls == 48


async def test_stop_reaches_the_workers_and_resume_judges_the_rest_exactly_once(
    toy_suite: Callable[[str], Path], tmp_path: Path
) -> None:
    slow = MIXED.replace("'hello", "'slow hello").replace("'What are my listings?", "'slow listings")
    suite = load_suite(toy_suite(slow))
    with open_sqlite(tmp_path, "runs.db") as store:
        progress = Recorder(stop_after=4)
        runner = SuiteRunner(suite, RunOptions(concurrency=2, workers=2), store=store, progress=progress)
        progress.runner = runner
        first = await runner.run()

        recorded = store.results.recorded(first.run_id)
        assert first.status == "interrupted" and not first.worker_errors
        assert store.runs.get(first.run_id).status == "interrupted"
        assert 4 <= len(recorded) < 20  # what finished was written by the workers; the rest was abandoned

        second = await SuiteRunner(suite, RunOptions(concurrency=4, workers=2), store=store).run(resume=first.run_id)

        assert second.status == "completed" and second.resumed == len(recorded)
        assert [r.case for r in second.records] == [c.name for c in suite.cases]
        assert store.runs.get(second.run_id).recorded == 20  # every case written exactly once


async def test_a_killed_worker_is_reported_and_its_cases_are_left_for_resume(
    toy_suite: Callable[[str], Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dying = MIXED.replace("prompt: 'please crash (3)'", "prompt: 'please die (3)'")
    suite = load_suite(toy_suite(dying))
    monkeypatch.setenv("TOY_AGENT_MAY_DIE", "1")
    with open_sqlite(tmp_path, "runs.db") as store:
        first = await SuiteRunner(suite, RunOptions(concurrency=2, workers=2), store=store).run()

        # Not "interrupted" (nobody stopped it): the run failed, and --resume finishes it.
        assert first.status == "failed" and not first.ok
        assert store.runs.get(first.run_id).status == "failed"
        assert len(first.worker_errors) == 1
        assert "was killed by signal 9" in first.worker_errors[0]
        assert "resume the run" in first.worker_errors[0]
        assert "case-03" not in store.results.recorded(first.run_id)
        # The other worker ran all of its cases.
        assert {f"case-{i:02d}" for i in range(0, 20, 2)} <= store.results.recorded(first.run_id)

        monkeypatch.delenv("TOY_AGENT_MAY_DIE")
        second = await SuiteRunner(suite, RunOptions(concurrency=2), store=store).run(resume=first.run_id)
        assert second.status == "completed" and len(second.records) == 20
        assert store.runs.get(second.run_id).recorded == 20


def test_workers_need_a_store_and_the_suites_own_agent(toy_suite: Callable[[str], Path]) -> None:
    suite = load_suite(toy_suite(MIXED))
    with pytest.raises(ValueError, match="needs a store"):
        asyncio.run(SuiteRunner(suite, RunOptions(workers=2)).run())
    with pytest.raises(ValueError, match="workers must be a whole number"):
        RunOptions(workers=0)
    with open_store("sqlite://") as store, pytest.raises(ValueError, match="more than --concurrency 2"):
        asyncio.run(SuiteRunner(suite, RunOptions(concurrency=2, workers=3), store=store).run())


def test_workers_refuse_a_target_they_cannot_rebuild(toy_suite: Callable[[str], Path], tmp_path: Path) -> None:
    suite = load_suite(toy_suite(MIXED))
    with open_sqlite(tmp_path, "runs.db") as store, pytest.raises(ValueError, match="agent spec"):
        asyncio.run(SuiteRunner(suite, RunOptions(workers=2), store=store, target=object()).run())  # type: ignore[arg-type]


async def test_a_worker_that_fails_before_its_cases_says_why(
    toy_suite: Callable[[str], Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(self: SuiteRunner, run_id: str, cases: object) -> str:
        raise RuntimeError("no database here")

    monkeypatch.setattr(SuiteRunner, "run_share", broken)  # only workers run their share
    suite = load_suite(toy_suite(MIXED))
    with open_sqlite(tmp_path, "runs.db") as store:
        result = await SuiteRunner(suite, RunOptions(concurrency=2, workers=2), store=store).run()

    assert result.status == "failed" and not result.records
    assert len(result.worker_errors) == 2
    assert all("failed: RuntimeError: no database here" in error for error in result.worker_errors)


def test_a_stop_that_reaches_a_worker_before_its_runner_is_kept_not_fatal() -> None:
    def main(connection: Connection) -> None:
        os.kill(os.getpid(), signal.SIGTERM)  # the parent's stop, before the runner's handlers exist
        connection.send_bytes(b"noted" if stopped_early() else b"missed")

    worker = start_worker(0, main)
    assert worker.connection.poll(10) and worker.connection.recv_bytes() == b"noted"
    worker.process.join(10)
    assert worker.process.exitcode == 0  # SIGTERM's default would have killed it
