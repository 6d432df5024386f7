"""A million cases in a ``cases_file``: how soon the first case starts, memory, throughput, and a store others can use.

Writes a suite of N cases in a JSON Lines cases file (default 1,000,000), loads it
(printed apart as ``suite_load_s``), and runs
it into a SQLite store (or ``--store postgresql+psycopg://...``) with the chosen
executor. Judges are deterministic (a ``contains`` check on a local Python agent's
reply) unless ``--judge stub``: one LLM judge call per case to the stub OpenAI server
(``python -m jurybox.stubs``, a separate process) at ``--latency-ms``. Meanwhile
another process plays the other commands a team runs against the same store: every
``--probe-every`` seconds a small run of its own (begin, one result, finish) and the
listing ``jurybox runs`` reads; it also notes when the big run's plan was stored whole.

By default the run is stopped ``--stop-after`` seconds after it starts (as Ctrl-C
does; a resume would finish it), so a million-case invocation takes a few minutes;
``--stop-after 0`` runs every case. It prints:

* ``suite_load_s``: loading the suite; by default (``--check background``, as ``jurybox run`` does) the
  cases file's first lines are checked then and the whole file in a forked child while the run goes
  (``check_done_s`` after the load started); ``--check now`` checks every line before the run;
* ``first_case_s``: from the run's start (the suite loaded) to the first finished case, and
  ``first_case_from_load_s`` from the start of the load;
* ``plan_whole_s``: when the whole plan was in the store (written in chunks as the run went);
* ``driver_peak_rss_mb`` and ``driver_run_added_mb`` (over the loaded suite); the workers' or
  actors' peak RSS with ``--executor processes`` or ``ray``;
* ``results_per_s``: results stored over the run's wall, and from the first case to the last;
* the other commands' writes: how many, how many while the plan was being written, their median
  and longest wait, and any that failed (a store locked past its busy timeout).

Usage::

    .venv/bin/python benchmarks/million_cases.py                           # 1,000,000 cases, 60 s of run
    .venv/bin/python benchmarks/million_cases.py --cases 100000 --stop-after 0
    .venv/bin/python benchmarks/million_cases.py --executor processes --workers 2
    .venv/bin/python benchmarks/million_cases.py --executor ray --actors 2 --judge stub --latency-ms 200
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
AGENT = "async def respond(message, session_id):\n    return 'The answer to ' + message + ' is 42.'\n"
SUITE = "million"
PROBE_SUITE = "million-probe"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=1_000_000)
    parser.add_argument("--executor", choices=["local", "processes", "ray"], default="local")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (--executor processes)")
    parser.add_argument("--actors", type=int, default=2, help="Ray actors (--executor ray)")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--judge", choices=["deterministic", "stub"], default="deterministic")
    parser.add_argument("--latency-ms", type=float, default=0.0, help="the stub judge's latency (--judge stub)")
    parser.add_argument(
        "--stop-after", type=float, default=60.0, help="stop the run after this many seconds (0: never)"
    )
    parser.add_argument("--store", default="sqlite", help="sqlite (a file in a temporary folder) or a database URL")
    parser.add_argument("--probe-every", type=float, default=0.25, help="seconds between the other commands' writes")
    parser.add_argument(
        "--check",
        choices=["background", "now"],
        default="background",
        help="check the cases file in a forked child while the run starts (as `jurybox run` does), or before it",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument("--probe", metavar="URL", help=argparse.SUPPRESS)  # the other commands' process
    args = parser.parse_args()
    if args.probe:
        probe(args.probe, args.probe_every)
        return
    os.environ["JURYBOX_CACHE"] = "off"
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    with tempfile.TemporaryDirectory(prefix="jurybox-million-") as tmp:
        figures = run(args, Path(tmp))
    show(figures, as_json=args.json)


def run(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    stub = None
    base_url = ""
    if args.judge == "stub":
        sys.path.insert(0, str(HERE))
        from runner_overhead import start_stub

        stub, base_url = start_stub(args.latency_ms / 1000)
    try:
        started = time.perf_counter()
        path = write_suite(folder, args.cases, base_url)
        write_s = time.perf_counter() - started
        return {"cases": args.cases, "cases_file_written_s": round(write_s, 1)} | measure(args, folder, path)
    finally:
        if stub is not None:
            from runner_overhead import stop_stub

            stop_stub(stub)


def write_suite(folder: Path, cases: int, base_url: str) -> Path:
    """The suite file (agent, judge model) and ``cases.jsonl``, written in blocks (a million fit in no list)."""
    (folder / "million_agent.py").write_text(AGENT, encoding="utf-8")
    header = [f"name: {SUITE}", "agent: {python: 'million_agent:respond'}", "defaults: {retries: 0}"]
    if base_url:
        header.append(f"judge_model: openai:gpt-4o-mini@{base_url}")
    (folder / "suite.yaml").write_text("\n".join([*header, "cases_file: cases.jsonl"]) + "\n", encoding="utf-8")
    with (folder / "cases.jsonl").open("w", encoding="utf-8") as out:
        for start in range(0, cases, 10_000):
            out.writelines(json.dumps(case(index, judged_by_model=bool(base_url))) + "\n"
                           for index in range(start, min(cases, start + 10_000)))  # fmt: skip
    return folder / "suite.yaml"


def case(index: int, *, judged_by_model: bool) -> dict[str, Any]:
    judge = (
        {"correctness": {"reference": f"The answer to question {index} is 42."}}
        if judged_by_model
        else {"contains": "42"}
    )
    return {"name": f"case-{index:07d}", "prompt": f"question {index}", "judges": [judge]}


def measure(args: argparse.Namespace, folder: Path, path: Path) -> dict[str, Any]:
    from jurybox.core import Status
    from jurybox.engine import SuiteRunner
    from jurybox.runs._check import watch_check
    from jurybox.store import open_store
    from jurybox.suites import load_suite

    sys.path.insert(0, str(folder))  # the agent module
    load_started = time.perf_counter()
    check = "background" if args.check == "background" and args.executor == "local" else True
    suite = load_suite(path, concurrency=args.concurrency, check_cases_file=check)
    load_s = time.perf_counter() - load_started
    url = f"sqlite:///{folder / 'store.db'}" if args.store == "sqlite" else args.store
    store = open_store(url)
    loaded_rss = peak_rss()
    options, ray_started = executor_options(args, path, url)
    other = subprocess.Popen(
        [sys.executable, __file__, "--probe", url, "--probe-every", str(args.probe_every)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    clock = CaseClock()
    runner = SuiteRunner(suite, options, store=store, progress=clock)

    checked_at: list[float] = []

    async def timed() -> Any:
        if args.stop_after > 0:
            asyncio.get_running_loop().call_later(args.stop_after, runner.stop)
        watching = watch_check(suite, runner)  # what `jurybox run` does: its problems would stop the run
        if watching is not None:
            watching.add_done_callback(lambda task: task.cancelled() or checked_at.append(time.perf_counter()))
        result = await runner.run()
        if watching is not None and result.status == "interrupted" and not watching.done():
            watching.cancel()  # as `jurybox run` does: a stopped run does not wait for the rest of the check
        elif watching is not None:
            problems = await watching
            assert not problems, problems
        return result

    try:
        started_at, started = time.time(), time.perf_counter()
        result = asyncio.run(timed())
        wall = time.perf_counter() - started
        workers_rss = children_rss()  # the workers were reaped; the other commands' process is still running
        actors = getattr(runner._executor, "actor_stats", None)
    finally:
        out, _ = other.communicate(input="stop\n", timeout=120)
        store.close()
        if ray_started:
            import ray

            ray.shutdown()
    others = json.loads(out.strip().splitlines()[-1])
    stored = len(result.records)  # counted by the store
    span = clock.last - clock.first
    figures: dict[str, Any] = {
        "executor": options.executor,
        "judge": f"stub LLM judge at {args.latency_ms:g} ms" if args.judge == "stub" else "deterministic (contains)",
        "concurrency": args.concurrency,
        "status": result.status,
        "results_stored": stored,
        "failed_or_errored": result.count(Status.FAIL) + result.count(Status.ERROR),
        "cases_file_check": check,
        "suite_load_s": round(load_s, 2),
        "first_case_s": round(clock.first - started, 2),
        "first_case_from_load_s": round(clock.first - load_started, 2),
        "check_done_s": round(checked_at[0] - load_started, 1) if checked_at else None,
        "plan_whole_s": round(others["plan_whole_at"] - started_at, 1) if others["plan_whole_at"] else None,
        "wall_s": round(wall, 1),
        "results_per_s": round(stored / wall, 1),
        "results_per_s_first_to_last": round(stored / span, 1) if span > 0 else None,
        "driver_peak_rss_mb": round(peak_rss() / 2**20, 1),
        "driver_run_added_mb": round((peak_rss() - loaded_rss) / 2**20, 1),
        "other_commands": others,
    }
    if options.executor == "processes":
        figures["largest_worker_peak_rss_mb"] = round(workers_rss / 2**20, 1)
    if actors:
        figures["actor_peak_rss_mb"] = [round(s.peak_rss / 2**20, 1) for s in actors]
        figures["actor_cases"] = [s.cases for s in actors]
    return figures


def executor_options(args: argparse.Namespace, path: Path, url: str) -> tuple[Any, bool]:
    from jurybox.engine import RunOptions

    if args.executor == "local":
        return RunOptions(concurrency=args.concurrency), False
    if args.executor == "processes":
        return RunOptions(concurrency=args.concurrency, workers=args.workers, executor="processes"), False
    import logging

    import ray

    from jurybox.executors import RaySettings
    from jurybox.store import open_store
    from jurybox.suites import load_suite

    ray.init(num_cpus=max(2, args.actors), include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
    opener = None if url.startswith("sqlite") else functools.partial(open_store, url)
    load = functools.partial(load_suite, path, concurrency=args.concurrency, check_cases_file=False)
    settings = RaySettings(actors=args.actors, load_suite=load, open_store=opener)
    return RunOptions(concurrency=args.concurrency, executor="ray", executor_settings=settings), True


class CaseClock:
    """A progress sink that notes when the first and the last case finished."""

    def __init__(self) -> None:
        self.first = 0.0
        self.last = 0.0

    def start(self, suite: str, total: int, done: int) -> None:
        return None

    def case_done(self, record: Any, spend: Any) -> None:
        self.last = time.perf_counter()
        self.first = self.first or self.last

    def stop(self) -> None:
        return None


def probe(url: str, every: float) -> None:
    """The other commands: a small run of their own and the runs listing, every ``every`` s, until stdin says stop."""
    import threading

    from jurybox.core import CaseRecord, Judgment, Status
    from jurybox.store import open_store

    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.readline(), stop.set()), daemon=True).start()
    waits: list[float] = []
    while_planning: list[float] = []
    failures: list[str] = []
    plan_whole_at: float | None = None
    with open_store(url, busy_timeout=30) as store:
        while not stop.wait(every):
            big = store.runs.latest(SUITE)
            if big is None:
                continue
            written, size, _ = store.runs.plan_progress(big.id)
            started = time.perf_counter()
            try:
                run_id = store.runs.begin(PROBE_SUITE, cases={"one": {"prompt": "hi"}})
                store.results.record(run_id, CaseRecord("one", Judgment(Status.PASS, reasoning="ok")))
                store.finish_run(run_id)
                store.runs.newest(limit=10)  # what `jurybox runs` reads
            except Exception as exc:  # a store locked past its busy timeout
                failures.append(f"{type(exc).__name__}: {exc}")
                continue
            waited = time.perf_counter() - started
            waits.append(waited)
            if written < size:
                while_planning.append(waited)
            elif plan_whole_at is None:
                plan_whole_at = time.time()
    summary = {
        "writes": len(waits),
        "writes_while_planning": len(while_planning),
        "median_wait_ms": round(statistics.median(waits) * 1000, 1) if waits else None,
        "longest_wait_ms": round(max(waits) * 1000, 1) if waits else None,
        "longest_wait_while_planning_ms": round(max(while_planning) * 1000, 1) if while_planning else None,
        "failed": failures[:3],
        "plan_whole_at": plan_whole_at,
    }
    print(json.dumps(summary), flush=True)


def peak_rss() -> int:
    """This process's peak resident set, in bytes (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def children_rss() -> int:
    """The largest peak resident set of the child processes waited for so far, in bytes."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024


def show(figures: dict[str, Any], *, as_json: bool) -> None:
    if as_json:
        print(json.dumps(figures))
        return
    for name, value in figures.items():
        if isinstance(value, dict):
            for key, inner in value.items():
                print(f"{name}.{key:<32} {inner}")
        else:
            print(f"{name:<40} {value}")


if __name__ == "__main__":
    main()
