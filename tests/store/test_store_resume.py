"""Resume without loss: a writer killed with SIGKILL at random points, then resumed, records every case once."""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from sqlalchemy import func, select
from store_testkit import make_record, nodes_per_record

from jurybox.store import open_store
from jurybox.store._schema import judgments_table, results_table

DRIVER = Path(__file__).with_name("resume_driver.py")
CASES = 20
KILLS_PER_SEED = 3


def _start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(DRIVER), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=DRIVER.parent,
    )


def _kill_at_random_point(url: str, suite: str, rng: random.Random) -> str:
    """Start the driver and SIGKILL it at a random point; returns the kill point for messages."""
    process = _start(url, suite, str(CASES))
    assert process.stdout is not None
    lines_wanted = rng.randint(-1, CASES)
    delay = rng.choice([0.0, rng.uniform(0.0, 0.003), rng.uniform(0.0, 0.03)])
    if lines_wanted < 0:
        time.sleep(rng.uniform(0.0, 0.8))  # during start-up, migration or begin_run
    else:
        seen = 0
        while seen < lines_wanted + 1:  # the "run ..." line, then one per case
            if not process.stdout.readline():
                break
            seen += 1
        time.sleep(delay)
    with contextlib.suppress(ProcessLookupError):
        os.kill(process.pid, signal.SIGKILL)
    process.communicate(timeout=60)
    return f"after {lines_wanted} line(s) + {delay * 1000:.1f} ms"


def test_killed_runs_resume_with_every_case_recorded_exactly_once(store_url: str) -> None:
    # Two seeds on SQLite, one on PostgreSQL (which rolls back a dropped connection's transaction itself).
    for seed in [11] if store_url.startswith("postgresql") else [11, 23]:
        _kill_resume_and_check(store_url, seed)


def _kill_resume_and_check(store_url: str, seed: int) -> None:
    rng = random.Random(seed)
    suite = f"kill-{seed}"
    kill_points = [_kill_at_random_point(store_url, suite, rng) for _ in range(KILLS_PER_SEED)]

    final = _start(store_url, suite, str(CASES))
    out, err = final.communicate(timeout=120)
    assert final.returncode == 0, f"resume failed after kills {kill_points}: {err}"
    assert out.strip().endswith("finished")

    with open_store(store_url) as store:
        runs = store.runs.newest(suite)
        assert len(runs) == 1, f"a resume began a second run (kills {kill_points})"
        run = runs[0]
        assert (run.status, run.planned, run.recorded) == ("completed", CASES, CASES)
        records = store.results.read_all(run.id)
        assert [r.case for r in records] == [f"case-{i:04d}" for i in range(CASES)]
        expected = {r.case: make_record(r.case, llm=int(r.case[-1]) % 3 != 0, output="x" * 4000) for r in records}
        assert all(r == expected[r.case] for r in records)
        with store.engine.connect() as connection:
            results = connection.execute(
                select(func.count(), func.count(func.distinct(results_table.c.case_name))).where(
                    results_table.c.run_id == run.id
                )
            ).one()
            judgments = connection.execute(
                select(func.count()).select_from(judgments_table).where(judgments_table.c.run_id == run.id)
            ).scalar_one()
    assert tuple(results) == (CASES, CASES)
    assert judgments == sum(nodes_per_record(r) for r in expected.values())  # no half-written case


def test_two_processes_writing_one_store_at_once_both_finish(store_url: str) -> None:
    with open_store(store_url):
        pass  # migrate first so both writers race on results, not on the schema
    writers = [_start(store_url, f"parallel-{i}", str(CASES), "--new") for i in range(2)]
    outputs = [w.communicate(timeout=120) for w in writers]
    for writer, (_, err) in zip(writers, outputs, strict=True):
        assert writer.returncode == 0, err
    with open_store(store_url) as store:
        for i in range(2):
            (run,) = store.runs.newest(f"parallel-{i}")
            assert (run.status, run.recorded) == ("completed", CASES)


def test_two_processes_resuming_the_same_run_record_each_case_once(store_url: str) -> None:
    with open_store(store_url) as store:
        run_id = store.runs.begin("shared", cases={f"case-{i:04d}": {"prompt": f"question {i}"} for i in range(CASES)})
    writers = [_start(store_url, "shared", str(CASES), "--run", run_id) for _ in range(2)]
    outputs = [w.communicate(timeout=120) for w in writers]
    for writer, (_, err) in zip(writers, outputs, strict=True):
        assert writer.returncode == 0, err
    recorded = sum(line.startswith("recorded") for out, _ in outputs for line in out.splitlines())
    assert recorded == CASES  # every other attempt saw the case already written
    with open_store(store_url) as store:
        info = store.runs.get(run_id)
        assert (info.status, info.recorded) == ("completed", CASES)
        with store.engine.connect() as connection:
            rows = connection.execute(
                select(func.count()).select_from(results_table).where(results_table.c.run_id == run_id)
            ).scalar_one()
        assert rows == CASES
