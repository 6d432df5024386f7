"""How fast the dashboard answers on a big store: 1,000 runs, two of them of 100,000 cases.

    .venv/bin/python benchmarks/web_pages.py                       # SQLite and PostgreSQL
    .venv/bin/python benchmarks/web_pages.py --backends sqlite     # SQLite only
    .venv/bin/python benchmarks/web_pages.py --big 20000           # a smaller big run, quicker
    .venv/bin/python benchmarks/web_pages.py --keep /tmp/webbench  # build once, measure again later
    .venv/bin/python benchmarks/web_pages.py --store postgresql+psycopg://postgres@127.0.0.1:5432/jbx_web_100k --keep .

With ``--keep DIR`` the SQLite store is ``DIR/bench-<big>.db`` and the PostgreSQL
one the database ``jbx_webbench_<big>``; both are kept and reused by the next
run with the same ``--keep`` (opening them migrates them to the current schema).
``--store URL`` measures that one store instead: a PostgreSQL database of that
name is created on the URL's server when missing (through its ``postgres``
database) and dropped at the end unless ``--keep`` is given; a store already
holding the benchmark's runs is reused, as with ``--keep``.

The store: suite ``bench`` with 998 runs of 20 cases and suite ``big`` with two
runs of 100,000 cases (a comparison of two 100,000-case runs needs two). Every
result has the verdict tree the runner writes for a two-tier cascade
(``deterministic`` then ``llm_judge``), so ``judgments`` holds three rows per
case, and each run's plan is in ``run_cases``. Rows are inserted in bulk: one
multi-row ``executemany`` per table and 10,000 rows, in one transaction per
run, straight into the documented tables (``store/_schema.py``), then each
run's totals are written as ``finish_run`` writes them. ``results.record`` would
take minutes for 220,000 cases; the rows are the same shape. Each run's summary
(``run_summaries``, schema 0013) is then written by the store's own ``write_summary``,
as ``finish_run`` does.

For each page the script prints the first (cold, right after the app starts)
request, the median of the next ``--repeat`` requests (server time measured
in-process through the ASGI app, so no network), the same two as this process's
CPU time (steadier than wall time on a shared machine), the HTML size, and the
server's RSS before and after 1,000 more requests spread over the pages. A page
is flagged over budget when its cold load takes 300 ms or more (search: 50 ms),
or the trends page weighs 150 KB or more.

Comparisons (schema 0014): as ``finish_run`` does, each completed run's comparison
with its baseline is computed and kept when the store is built (runs of
``KEEP_AT_FINISH`` cases or more: the two big ones), so "compare 100k vs
100k" (the second big run against the first, its baseline) reads the kept figures.
"compare, a new pair" is the two big runs the other way round, whose kept comparison
is dropped before each measurement: its page shows "counting" and "computing",
then fetches the counts with the cases ("new pair's changes") and the statistics
("new pair's stats"): htmx requests the page makes after it is shown, each of
which computes its part and keeps it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import secrets
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import create_engine, delete, insert, select, text, update
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import DBAPIError

from jurybox.store import open_store
from jurybox.store._schema import (
    cases_table,
    judgments_table,
    results_table,
    run_cases_table,
    runs_table,
    suites_table,
)
from jurybox.web import WebSettings, create_app

PG_ADMIN_URL = os.environ.get("JURYBOX_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
CHUNK = 10_000
AFTER_THE_PAGE = {"compare, new pair's changes", "compare, new pair's stats"}
"""Requests a page makes after it is shown (htmx), so not held to a page's budget."""
SMALL_RUNS = 998
SMALL_CASES = 20


def _judgment(passed: bool, score: float) -> str:
    status = "pass" if passed else "fail"
    det = {
        "status": "pass",
        "value": 1.0,
        "score": {"kind": "boolean", "value": True},
        "reasoning": "contains 'refund': found",
        "checks": [],
        "judge": "contains",
        "confidence": None,
        "degraded": False,
        "error": None,
        "children": {},
        "decided_by": None,
        "metadata": {},
    }
    llm = {
        "status": status,
        "value": score,
        "score": {"kind": "numeric", "value": score, "min": 0.0, "max": 1.0},
        "reasoning": "The answer covers the refund window."
        if passed
        else "The answer promises a refund after 30 days.",
        "checks": [],
        "judge": "correctness",
        "confidence": 0.8,
        "degraded": False,
        "error": None,
        "children": {},
        "decided_by": None,
        "metadata": {"cost": 0.0001, "tokens": 320},
    }
    root = {
        "status": status,
        "value": score,
        "score": {"kind": "numeric", "value": score, "min": 0.0, "max": 1.0},
        "reasoning": "llm_judge decided",
        "checks": [],
        "judge": "cascade",
        "confidence": None,
        "degraded": False,
        "error": None,
        "children": {"deterministic": det, "llm_judge": llm},
        "decided_by": "llm_judge",
        "metadata": {},
    }
    return json.dumps(root, separators=(",", ":"))


def _chunks(rows: list[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    for start in range(0, len(rows), CHUNK):
        yield rows[start : start + CHUNK]


def _add_run(
    engine: Engine, suite_id: int, case_ids: dict[str, int], started: datetime, pass_rate: float, seed: int
) -> str:
    """One finished run of ``case_ids``' cases, inserted in bulk; returns its id."""
    rng = random.Random(seed)
    run_id = f"{started:%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"
    names = list(case_ids)
    outcomes = []
    for name in names:
        passed = rng.random() < pass_rate
        score = round(rng.uniform(0.7, 1.0) if passed else rng.uniform(0.0, 0.6), 3)
        outcomes.append((name, passed, score, round(rng.lognormvariate(0.0, 0.6), 3)))
    texts = {(p, s): _judgment(p, s) for _, p, s, _ in outcomes}
    with engine.begin() as connection:
        connection.execute(
            insert(runs_table).values(
                id=run_id,
                suite_id=suite_id,
                status="running",
                git_commit="4f1c2e9",
                judge_model="openai:gpt-4o-mini",
                agent_version=None,
                config={"concurrency": 8},
                planned=len(names),
                started_at=started,
                finished_at=None,
                total=0,
                passed=0,
                failed=0,
                errored=0,
                abstained=0,
            )
        )
        plan = [{"run_id": run_id, "case_name": n, "case_id": case_ids[n], "position": i} for i, n in enumerate(names)]
        for part in _chunks(plan):
            connection.execute(insert(run_cases_table), part)
        results = [
            {
                "run_id": run_id,
                "case_name": name,
                "case_id": case_ids[name],
                "status": "pass" if passed else "fail",
                "score": score,
                "reasoning": "llm_judge decided",
                "decided_by": "llm_judge",
                "duration": duration,
                "tokens": 320,
                "cost": 0.0001,
                "judge_calls": 1,
                "error": None,
                "tags": ["bench", f"t{i % 7}"],
                "extra": {},
                "judgment": json.loads(texts[(passed, score)]),
                "context": None,
                "started_at": started,
                "recorded_at": started + timedelta(seconds=i / 100),
            }
            for i, (name, passed, score, duration) in enumerate(outcomes)
        ]
        for part in _chunks(results):
            connection.execute(insert(results_table), part)
        ids = dict(connection.execute(text("SELECT case_name, id FROM results WHERE run_id = :r"), {"r": run_id}).all())
        nodes = []
        for name, passed, score, _ in outcomes:
            rid = ids[name]
            status = "pass" if passed else "fail"
            nodes += [
                {
                    "run_id": run_id,
                    "result_id": rid,
                    "round_index": None,
                    "path": "",
                    "depth": 0,
                    "judge": "cascade",
                    "tier": None,
                    "status": status,
                    "score": score,
                    "reasoning": "llm_judge decided",
                    "checks": [],
                    "tokens": None,
                    "cost": None,
                    "confidence": None,
                    "degraded": False,
                },
                {
                    "run_id": run_id,
                    "result_id": rid,
                    "round_index": None,
                    "path": "deterministic",
                    "depth": 1,
                    "judge": "contains",
                    "tier": "deterministic",
                    "status": "pass",
                    "score": 1.0,
                    "reasoning": "found",
                    "checks": [],
                    "tokens": None,
                    "cost": None,
                    "confidence": None,
                    "degraded": False,
                },
                {
                    "run_id": run_id,
                    "result_id": rid,
                    "round_index": None,
                    "path": "llm_judge",
                    "depth": 1,
                    "judge": "correctness",
                    "tier": "llm_judge",
                    "status": status,
                    "score": score,
                    "reasoning": "graded",
                    "checks": [],
                    "tokens": 320,
                    "cost": 0.0001,
                    "confidence": 0.8,
                    "degraded": False,
                },
            ]
        for part in _chunks(nodes):
            connection.execute(insert(judgments_table), part)
        passed_count = sum(1 for _, p, _, _ in outcomes if p)
        connection.execute(
            update(runs_table)
            .where(runs_table.c.id == run_id)
            .values(
                status="completed",
                finished_at=started + timedelta(seconds=60),
                total=len(names),
                passed=passed_count,
                failed=len(names) - passed_count,
                errored=0,
                abstained=0,
                tokens=320 * len(names),
                cost=0.0001 * len(names),
                duration=sum(d for _, _, _, d in outcomes),
                unpriced_calls=0,
                cost_unknown=0,
            )
        )
    return run_id


def _add_cases(engine: Engine, suite: str, count: int) -> tuple[int, dict[str, int]]:
    now = datetime.now(UTC)
    with engine.begin() as connection:
        suite_id = connection.execute(
            insert(suites_table).values(name=suite, created_at=now, updated_at=now).returning(suites_table.c.id)
        ).scalar_one()
        rows = [
            {
                "suite_id": suite_id,
                "name": f"case-{i:06d}",
                "content_hash": f"{i:064d}",
                "position": i,
                "definition": {"prompt": f"question {i}"},
                "current": True,
                "created_at": now,
            }
            for i in range(count)
        ]
        for part in _chunks(rows):
            connection.execute(insert(cases_table), part)
        ids = dict(connection.execute(text("SELECT name, id FROM cases WHERE suite_id = :s"), {"s": suite_id}).all())
    return suite_id, ids


def build(url: str, big: int) -> tuple[list[str], list[str]]:
    """The benchmark store at ``url``; returns the ids of the small runs and of the two big ones."""
    open_store(url).close()  # creates the schema through the migrations
    engine = create_engine(url)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    suite_id, case_ids = _add_cases(engine, "bench", SMALL_CASES)
    small = []
    for i in range(SMALL_RUNS):
        rate = 0.9 if i % 50 else 0.6  # a dip now and then: regressions to mark on the trend
        small.append(_add_run(engine, suite_id, case_ids, start + timedelta(hours=i), rate, i))
    big_suite, big_ids = _add_cases(engine, "big", big)
    bigs = [
        _add_run(engine, big_suite, big_ids, start + timedelta(days=60), 0.92, 1),
        _add_run(engine, big_suite, big_ids, start + timedelta(days=61), 0.88, 2),
    ]
    engine.dispose()
    summarise(url)
    return small, bigs


def summarise(url: str) -> None:
    """Write the summary ``finish_run`` writes of every finished run that has none (a store kept from before 0013)."""
    try:
        from jurybox.store._run_summaries import write_summary
    except ImportError:  # a jurybox before schema 0013 (measuring the code before the change)
        write_summary = None
    engine = create_engine(url)
    with engine.begin() as connection:
        if write_summary is not None:
            from jurybox.store._schema import run_summaries_table

            missing = connection.execute(
                select(runs_table.c.id, runs_table.c.finished_at).where(
                    runs_table.c.finished_at.is_not(None),
                    runs_table.c.id.not_in(select(run_summaries_table.c.run_id)),
                )
            ).all()
            for run_id, finished_at in missing:
                write_summary(connection, run_id, finished_at)
            connection.execute(text("UPDATE runs SET unpriced_calls = 0, cost_unknown = 0 WHERE cost_unknown IS NULL"))
        if connection.dialect.name == "sqlite":
            connection.execute(text("ANALYZE"))  # the planner's statistics
    if engine.dialect.name == "postgresql":
        # What autovacuum does to a store some time after a bulk write: the planner's statistics, and the
        # visibility map without which an index-only scan still reads every row it finds.
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            connection.execute(text("VACUUM ANALYZE"))
    keep_comparisons(engine)
    engine.dispose()


def keep_comparisons(engine: Engine) -> None:
    """Keep each completed run's comparison with its baseline, as ``finish_run`` does (schema 0014), where missing."""
    try:
        from jurybox.store._schema import run_comparisons_table
        from jurybox.store._store import KEEP_AT_FINISH, keep_baseline_comparison
    except ImportError:  # a jurybox before schema 0014
        return
    with engine.connect() as connection:
        missing = connection.execute(
            select(runs_table.c.id)
            .where(
                runs_table.c.status == "completed",
                runs_table.c.total >= KEEP_AT_FINISH,
                runs_table.c.id.not_in(select(run_comparisons_table.c.run_b)),
            )
            .order_by(runs_table.c.started_at)
        ).scalars()
        run_ids = list(missing)
    for run_id in run_ids:
        keep_baseline_comparison(engine, run_id)


def forget_comparison(url: str, run_a: str, run_b: str) -> None:
    """Drop the kept comparison of B against A, so the next load computes it as a first look at a new pair does."""
    try:
        from jurybox.store._schema import run_comparisons_table as table
    except ImportError:  # a jurybox before schema 0014 keeps none
        return
    engine = create_engine(url)
    with engine.begin() as connection:
        connection.execute(delete(table).where(table.c.run_a == run_a, table.c.run_b == run_b))
    engine.dispose()


def _big_runs(url: str) -> list[str]:
    """The two big runs of a kept store, oldest first."""
    engine = create_engine(url)
    with engine.connect() as connection:
        found = connection.execute(
            select(runs_table.c.id)
            .join(suites_table, suites_table.c.id == runs_table.c.suite_id)
            .where(suites_table.c.name == "big")
            .order_by(runs_table.c.started_at)
        ).scalars()
        ids = list(found)
    engine.dispose()
    return ids


def _served() -> WebSettings:
    """The settings `jurybox serve` starts the app with (those this jurybox knows)."""
    known = getattr(WebSettings, "__dataclass_fields__", {})
    wanted = {"compile_templates": True, "freeze_startup": True}
    return WebSettings(**{name: value for name, value in wanted.items() if name in known})


def rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def measure(url: str, big_runs: list[str], repeat: int, sweep: int, big: int) -> list[dict[str, Any]]:
    a, b = big_runs
    pages = {
        "runs list": "/runs",
        "big run (100k cases)": f"/runs/{b}",
        "big run, failing, by score": f"/runs/{b}?status=fail&sort=score&order=desc",
        "big run, search": f"/runs/{b}?q=case-0999",
        "one case": f"/runs/{b}/case?name=case-{big // 2:06d}",  # a case in the middle, whatever --big is
        "compare 100k vs 100k": f"/compare?a={a}&b={b}",  # B against its baseline: kept when B finished
        "compare, a new pair": f"/compare?a={b}&b={a}",  # never compared before: counted now
        "compare, new pair's changes": f"/compare?a={b}&b={a}&now=1",  # what the page then fetches (htmx)...
        "compare, new pair's stats": f"/compare/paired?a={b}&b={a}",  # ...beside this
        "trends, 1000 runs": "/suites/bench/trends?runs=1000",
        "runs JSON": "/api/runs",
        "review queue": "/reviews",
        "review queue, big run": f"/reviews?run={b}",
        "review queue, failing, page 3": "/reviews?status=fail&offset=100",
    }
    rows = []
    forget_comparison(url, b, a)
    fetched = {
        "compare, new pair's changes": {"HX-Request": "true", "HX-Target": "changes"},
        "compare, new pair's stats": {"HX-Request": "true", "HX-Target": "paired"},
    }
    app = create_app(url, settings=_served())
    with TestClient(app) as client:
        for label, path in pages.items():
            # CPU time of this process too (the app runs in the client's thread): on a busy machine the
            # wall time counts other jobs' turns, the CPU time only this request's work (the database
            # server's, on PostgreSQL, is not in it).
            started, cpu = time.perf_counter(), time.process_time()
            headers = fetched.get(label)
            response = client.get(path, headers=headers)
            cold, cold_cpu = time.perf_counter() - started, time.process_time() - cpu
            assert response.status_code == 200, (path, response.text[:300])
            times, cpus = [], []
            for _ in range(repeat):
                started, cpu = time.perf_counter(), time.process_time()
                client.get(path, headers=headers)
                times.append(time.perf_counter() - started)
                cpus.append(time.process_time() - cpu)
            rows.append(
                {
                    "page": label,
                    "cold_ms": cold * 1000,
                    "median_ms": statistics.median(times) * 1000,
                    "cold_cpu_ms": cold_cpu * 1000,
                    "median_cpu_ms": statistics.median(cpus) * 1000 if cpus else 0.0,
                    "kb": len(response.content) / 1024,
                }
            )
        before = rss_mb()
        paths = list(pages.values())
        for i in range(sweep):
            client.get(paths[i % len(paths)])
        after = rss_mb()
    rows.append({"page": f"RSS over {sweep} requests", "before_mb": before, "after_mb": after})
    return rows


def _pg_kept(big: int) -> tuple[str, bool]:
    """A kept PostgreSQL database for ``--keep``: its URL and whether it exists already."""
    name = f"jbx_webbench_{big}"
    admin = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        found = connection.execute(text("SELECT 1 FROM pg_database WHERE datname = :n"), {"n": name}).first()
        if found is None:
            connection.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return PG_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}", found is not None


def _pg_url() -> tuple[str, Any]:
    admin = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    schema = f"jbx_bench_web_{os.getpid()}"
    with admin.connect() as connection:
        connection.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        connection.execute(text(f'CREATE SCHEMA "{schema}"'))

    def drop() -> None:
        with admin.connect() as connection:
            connection.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        admin.dispose()

    return f"{PG_ADMIN_URL}?options=-csearch_path%3D{schema}", drop


def _pg_database(url: str) -> tuple[bool, Any]:
    """Create ``url``'s PostgreSQL database when missing: whether it held the benchmark, and how to drop it."""
    target = make_url(url)
    name = target.database
    assert name, "--store needs a database name"
    admin = create_engine(target.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        found = connection.execute(text("SELECT 1 FROM pg_database WHERE datname = :n"), {"n": name}).first()
        if found is None:
            connection.execute(text(f'CREATE DATABASE "{name}"'))

    def drop() -> None:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()

    return found is not None and _holds_benchmark(url), drop


def _holds_benchmark(url: str) -> bool:
    try:
        return len(_big_runs(url)) == 2
    except DBAPIError:  # no tables yet
        return False


def _stores(args: argparse.Namespace) -> Iterator[tuple[str, str, bool, Any]]:
    """(backend, URL, whether it holds the benchmark's runs already, cleanup or None) of each store to measure."""
    if args.store:
        url = args.store
        if url.startswith("sqlite"):
            path = Path(make_url(url).database or "")
            exists = path.exists() and _holds_benchmark(url)
            cleanup = None if args.keep else lambda: path.unlink(missing_ok=True)
            yield "sqlite", url, exists, cleanup
        else:
            exists, drop = _pg_database(url)
            yield "postgresql", url, exists, None if args.keep else drop
        return
    for backend in args.backends:
        cleanup = None
        folder = str(args.keep) if args.keep else tempfile.mkdtemp(prefix="jbx-web-bench-")
        exists = False
        if backend == "sqlite":
            path = Path(folder) / (f"bench-{args.big}.db" if args.keep else "bench.db")
            path.parent.mkdir(parents=True, exist_ok=True)
            exists = path.exists()
            url = f"sqlite:///{path}"
        elif args.keep:
            url, exists = _pg_kept(args.big)
        else:
            url, cleanup = _pg_url()
        if not args.keep:
            # the SQLite store of 220,000 cases is about 450 MB
            cleanup = _both(cleanup, lambda folder=folder: shutil.rmtree(folder, ignore_errors=True))
        yield backend, url, exists, cleanup


def _both(first: Any, second: Any) -> Any:
    def run() -> None:
        if first is not None:
            first()
        second()

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backends", nargs="+", default=["sqlite", "postgresql"], choices=["sqlite", "postgresql"])
    parser.add_argument("--big", type=int, default=100_000, help="cases in each of the two big runs")
    parser.add_argument("--repeat", type=int, default=20, help="timed requests per page (after the cold one)")
    parser.add_argument("--sweep", type=int, default=1000, help="requests of the memory check")
    parser.add_argument("--keep", type=Path, help="keep the stores (SQLite in this folder) and reuse them")
    parser.add_argument("--store", help="measure this store only (a PostgreSQL database is created when missing)")
    args = parser.parse_args()
    for backend, url, exists, cleanup in _stores(args):
        started = time.perf_counter()
        if exists:
            open_store(url).close()  # migrates a store kept from an older schema
            summarise(url)
            bigs = _big_runs(url)
        else:
            _, bigs = build(url, args.big)
        print(
            f"\n== {backend}: store of {SMALL_RUNS + 2} runs ({2 * args.big:,} + {SMALL_RUNS * SMALL_CASES:,} cases) "
            f"built in {time.perf_counter() - started:.1f}s",
            flush=True,
        )
        try:
            rows = measure(url, bigs, args.repeat, args.sweep, args.big)
        finally:
            if cleanup:
                cleanup()
        print(f"{'page':32} {'cold ms':>9} {'median ms':>10} {'cold CPU':>9} {'med CPU':>8} {'HTML KB':>8}")
        for row in rows:
            if "median_ms" in row:
                search = "search" in row["page"]
                over = row["cold_ms"] >= (50 if search else 300) or ("trends" in row["page"] and row["kb"] >= 150)
                flag = "  <-- over budget" if over else ""
                if row["page"] in AFTER_THE_PAGE:
                    flag = "  (fetched after the page)"
                print(
                    f"{row['page']:32} {row['cold_ms']:9.1f} {row['median_ms']:10.1f} {row['cold_cpu_ms']:9.1f}"
                    f" {row['median_cpu_ms']:8.1f} {row['kb']:8.1f}{flag}"
                )
            else:
                print(f"{row['page']}: RSS {row['before_mb']:.1f} MB before, {row['after_mb']:.1f} MB after")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
