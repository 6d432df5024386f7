"""Store write throughput and streamed-run memory.

    .venv/bin/python benchmarks/store_write.py                 # SQLite and PostgreSQL
    .venv/bin/python benchmarks/store_write.py --backends sqlite --judgments 20000 --cases 20000

1. Writes ``--judgments`` judgment rows (cascade trees of 10 nodes) and prints
   rows per second for each backend, once with one ``store.results.record`` transaction
   per case and once with ``record_many`` batches of ``--batch`` cases (what the
   runner's writer commits when cases finish close together).
2. Streams a ``--cases``-case run into a SQLite store and prints the process's
   resident memory at 10%, 50% and 100% of the cases (and after reading the
   whole run back with ``store.results.stream``): flat numbers mean nothing accumulates.

PostgreSQL uses ``--pg-url`` (default the local test server) in a throw-away schema.
"""

from __future__ import annotations

import argparse
import resource
import secrets
import tempfile
import time
from pathlib import Path

from sqlalchemy import create_engine, text

from jurybox.core import Check, Context, Judgment
from jurybox.store import CaseRecord, open_store

NODES_PER_CASE = 10


def case_record(index: int) -> CaseRecord:
    """A runner-shaped record: a cascade root, three tiers and six judges (10 judgment rows)."""
    name = f"case-{index:06d}"
    usage = {"tokens": 150, "cost": 0.0002}
    deterministic = {
        "contains": Judgment.passed(True, "found it", judge="contains", checks=(Check("answer", True, "ok"),)),
        "valid_json": Judgment.passed(True, "parsed", judge="valid_json"),
        "tool_calls": Judgment.passed(1.0, "2 of 2 calls", judge="tool_calls", checks=(Check("search", True, ""),)),
    }
    llm = {
        "correctness": Judgment.passed(0.8, "grounded and correct", judge="correctness", metadata=usage),
        "relevance": Judgment.passed(0.9, "on topic", judge="relevance", metadata=usage),
    }
    tiers = {
        "deterministic": Judgment.passed(1.0, "no fail; escalating", judge="deterministic", children=deterministic),
        "similarity": Judgment.passed(
            0.7,
            "similar enough; escalating",
            judge="similarity",
            children={
                "similar": Judgment.passed(0.7, "ratio 0.70", judge="similar"),
            },
        ),
        "llm_judge": Judgment.passed(0.85, "all passed", judge="llm_judge", children=llm),
    }
    root = Judgment.passed(0.85, "llm_judge decided", judge="cascade", children=tiers, decided_by="llm_judge")
    context = Context(input=f"question {index}", output=f"answer {index} " * 20, duration=0.3, metadata={"tokens": 150})
    return CaseRecord(case=name, judgment=root, context=context, duration=0.3, tokens=450, cost=0.0004)


def rss_mib() -> float:
    """Current resident set size in MiB (Linux /proc; peak RSS elsewhere)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
        return pages * resource.getpagesize() / 2**20
    except OSError:
        return peak_rss_mib()


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def write_judgments(url: str, judgments: int, batch: int = 1) -> tuple[int, float]:
    """Write enough cases to produce ``judgments`` judgment rows, ``batch`` cases per transaction.

    Returns (rows, seconds).
    """
    cases = judgments // NODES_PER_CASE
    store = open_store(url)
    run_id = store.runs.begin("bench-write", cases={f"case-{i:06d}": {"i": i} for i in range(cases)})
    start = time.perf_counter()
    for first in range(0, cases, batch):
        records = [case_record(index) for index in range(first, min(first + batch, cases))]
        if batch == 1:
            store.results.record(run_id, records[0])
        else:
            store.results.record_many(run_id, records)
    elapsed = time.perf_counter() - start
    store.finish_run(run_id)
    store.close()
    return cases * NODES_PER_CASE, elapsed


def streamed_run(url: str, cases: int) -> None:
    """Record a big run case by case, printing RSS as it goes, then read it all back streamed."""
    store = open_store(url)
    run_id = store.runs.begin("bench-stream", cases={f"case-{i:06d}": {"i": i} for i in range(cases)})
    marks = {max(1, cases // 10), max(1, cases // 2), cases}
    # runs.begin holds the run's plan (every case definition) for one transaction; the peak here is that plan.
    print(f"  after runs.begin: RSS {rss_mib():.1f} MiB (peak so far {peak_rss_mib():.1f} MiB)")
    start = time.perf_counter()
    for index in range(cases):
        store.results.record(run_id, case_record(index))
        if index + 1 in marks:
            rate = (index + 1) / (time.perf_counter() - start)
            print(f"  {index + 1:>7,} cases recorded: RSS {rss_mib():.1f} MiB ({rate:,.0f} cases/s)", flush=True)
    store.finish_run(run_id)
    read = sum(1 for _ in store.results.stream(run_id))
    print(f"  read back {read:,} records with results.stream: RSS {rss_mib():.1f} MiB")
    print(f"  peak RSS of the process: {peak_rss_mib():.1f} MiB")
    store.close()


def write_backends(args: argparse.Namespace, folder: str, batch: int) -> None:
    """Print the write rate of each backend for one batch size."""
    for backend in args.backends.split(","):
        if backend == "sqlite":
            rows, seconds = write_judgments(f"sqlite:///{folder}/write-{batch}.db", args.judgments, batch)
        elif backend == "postgresql":
            admin = create_engine(args.pg_url, isolation_level="AUTOCOMMIT")
            schema = f"jbx_bench_{secrets.token_hex(4)}"
            with admin.connect() as connection:
                connection.execute(text(f'CREATE SCHEMA "{schema}"'))
            try:
                rows, seconds = write_judgments(
                    f"{args.pg_url}?options=-csearch_path%3D{schema}", args.judgments, batch
                )
            finally:
                with admin.connect() as connection:
                    connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
                admin.dispose()
        else:
            raise SystemExit(f"unknown backend {backend!r}: use sqlite and/or postgresql")
        print(
            f"  {backend:<10} {rows:,} judgment rows in {seconds:.1f} s: {rows / seconds:,.0f} rows/s "
            f"({rows / NODES_PER_CASE / seconds:,.0f} cases/s)",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--judgments", type=int, default=100_000, help="judgment rows written per backend")
    parser.add_argument("--cases", type=int, default=100_000, help="cases of the streamed run (0: skip it)")
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--pg-url", default="postgresql+psycopg://postgres@127.0.0.1:5432/test")
    parser.add_argument("--batch", type=int, default=16, help="cases per record_many transaction (second pass)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as folder:
        for batch in dict.fromkeys((1, max(1, args.batch))):
            per = "one transaction per case" if batch == 1 else f"{batch} cases per transaction"
            print(f"Writing {args.judgments:,} judgments ({NODES_PER_CASE} per case, {per})")
            write_backends(args, folder, batch)
        if args.cases > 0:
            print(f"Streaming a {args.cases:,}-case run into SQLite")
            streamed_run(f"sqlite:///{folder}/stream.db", args.cases)


if __name__ == "__main__":
    main()
