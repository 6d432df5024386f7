"""``jurybox run --executor ray`` at scale: throughput, memory and store rate against a stub judge.

Runs N cases (one LLM judge call each, the suite of ``runner_overhead.py``) on
``--actors`` Ray actors against a stub OpenAI server with a fixed latency, in a
separate process (``python -m jurybox.stubs openai``), with the judge cache off,
streaming results to a store (SQLite: the driver writes; PostgreSQL with
``--store postgresql://...``: the actors write). It prints:

* cases, actors, concurrency, latency;
* Ray start (a local Ray, started before the clock: a cluster is up already) and the run's wall
  (actors starting and loading the suite included);
* wall / ideal, ideal = cases x latency / concurrency;
* run / floor: wall / ideal over bare aiohttp posts' wall / ideal at the same latency and concurrency
  (``runner_overhead.measure_floor``; skip with ``--no-floor``);
* peak RSS of the driver and of each actor;
* store rows per second: results and all rows (results, rounds, judgments) over the run's wall.

Usage::

    .venv/bin/python benchmarks/ray_scale.py --cases 10000 --concurrency 256 --actors 2 --latency-ms 200
    .venv/bin/python benchmarks/ray_scale.py --cases 100000 --latency-ms 0 --no-floor   # memory, not latency
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import logging
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from runner_overhead import measure_floor, start_stub, stop_stub, write_suite


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--actors", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=256)
    parser.add_argument("--store", default="sqlite", help="sqlite (a file the driver writes) or a postgresql:// URL")
    parser.add_argument("--no-floor", action="store_true", help="skip the bare-HTTP floor measurement")
    parser.add_argument(
        "--cases-file",
        action="store_true",
        help="keep the cases in a JSON Lines cases_file (built as the run reaches them) instead of the suite file",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args()
    os.environ["JURYBOX_CACHE"] = "off"  # every case makes its judge call: the stub is the judge fleet
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    latency = args.latency_ms / 1000

    figures: dict[str, Any] = {
        "cases": args.cases,
        "actors": args.actors,
        "concurrency": args.concurrency,
        "latency_ms": args.latency_ms,
    }
    with tempfile.TemporaryDirectory(prefix="jurybox-ray-scale-") as tmp:
        folder = Path(tmp)
        stub, base_url = start_stub(latency)
        try:
            figures |= run_on_ray(args, folder, base_url, latency)
        finally:
            stub_stats = stop_stub(stub)
        figures["stub_requests"] = stub_stats.get("requests")
    if not args.no_floor:
        floor = measure_floor(args.cases, args.concurrency, latency)["aiohttp"]["wall_over_ideal"]
        figures["floor_wall_over_ideal"] = floor
        figures["run_over_floor"] = round(figures["wall_over_ideal"] / floor, 3)
    show(figures, as_json=args.json)


def run_on_ray(args: argparse.Namespace, folder: Path, base_url: str, latency: float) -> dict[str, Any]:
    import ray
    from sqlalchemy import func, select

    from jurybox.core import Status
    from jurybox.engine import RunOptions, SuiteRunner
    from jurybox.executors import RaySettings
    from jurybox.store import open_store
    from jurybox.suites import load_suite

    path = (
        write_streamed_suite(folder, args.cases, base_url)
        if args.cases_file
        else write_suite(folder, args.cases, base_url)
    )
    started = time.perf_counter()
    suite = load_suite(path, concurrency=args.concurrency)
    load_s = time.perf_counter() - started
    url = f"sqlite:///{folder / 'store.db'}" if args.store == "sqlite" else args.store
    store = open_store(url)
    actors_write = not url.startswith("sqlite")
    opener = functools.partial(open_store, url) if actors_write else None
    # As `jurybox run` does: the driver checked the cases file, so an actor builds only the lines it is sent.
    load = functools.partial(load_suite, path, concurrency=args.concurrency, check_cases_file=not args.cases_file)

    started = time.perf_counter()
    ray.init(num_cpus=max(2, args.actors), include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
    ray_start = time.perf_counter() - started
    loaded_rss = peak_rss()  # the suite loaded and Ray's client started
    try:
        options = RunOptions(
            concurrency=args.concurrency,
            executor="ray",
            executor_settings=RaySettings(actors=args.actors, load_suite=load, open_store=opener),
        )
        clock = CaseClock()
        runner = SuiteRunner(suite, options, store=store, progress=clock)
        started = time.perf_counter()
        result = asyncio.run(runner.run())
        wall = time.perf_counter() - started
        actor_stats = runner._executor.actor_stats  # type: ignore[union-attr]
        with store.engine.connect() as connection:
            rows = {
                name: connection.execute(select(func.count()).select_from(store_table(name))).scalar_one()
                for name in ("results", "round_results", "judgments")
            }
    finally:
        ray.shutdown()
        store.close()
    ideal = args.cases * latency / args.concurrency
    return {
        "status": result.status,
        "passed": result.count(Status.PASS),
        "judge_calls": result.spend.calls,
        "store": "postgresql (actors write)" if actors_write else "sqlite (driver writes)",
        "cases_in": "a cases_file (streamed)" if args.cases_file else "the suite file (loaded whole)",
        "suite_load_s": round(load_s, 2),
        "ray_start_s": round(ray_start, 2),
        "wall_s": round(wall, 2),
        "ideal_s": round(ideal, 2),
        "wall_over_ideal": round(wall / ideal, 3) if ideal else None,
        # Actors starting (a process each, jurybox imported, the suite loaded) and the first judge call.
        "first_case_s": round(clock.first - started, 2),
        "last_case_s": round(clock.last - started, 2),
        # Peak RSS, and what the run added to it once the suite was loaded (the loaded suite grows with the cases).
        "driver_peak_rss_mb": round(peak_rss() / 2**20, 1),
        "driver_run_added_mb": round((peak_rss() - loaded_rss) / 2**20, 1),
        "actor_peak_rss_mb": [round(s.peak_rss / 2**20, 1) for s in actor_stats],
        "actor_run_added_mb": [round((s.peak_rss - s.loaded_rss) / 2**20, 1) for s in actor_stats],
        "actor_cases": [s.cases for s in actor_stats],
        "results_per_s": round(rows["results"] / wall, 1),
        "store_rows_per_s": round(sum(rows.values()) / wall, 1),
        "store_rows": rows,
    }


def write_streamed_suite(folder: Path, cases: int, base_url: str) -> Path:
    """``write_suite``'s cases, one JSON line each in ``cases.jsonl`` (written in blocks: a million fit in no list)."""
    write_suite(folder, 1, base_url)  # the agent and the header
    header = (folder / "suite.yaml").read_text(encoding="utf-8").split("cases:\n")[0]
    (folder / "suite.yaml").write_text(header + "cases_file: cases.jsonl\n", encoding="utf-8")
    with (folder / "cases.jsonl").open("w", encoding="utf-8") as out:
        for start in range(0, cases, 10_000):
            out.writelines(
                json.dumps(
                    {
                        "name": f"case-{index:07d}",
                        "prompt": f"question {index}",
                        "judges": [{"correctness": {"reference": f"The answer to question {index} is 42."}}],
                    }
                )
                + "\n"
                for index in range(start, min(cases, start + 10_000))
            )
    return folder / "suite.yaml"


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


def store_table(name: str) -> Any:
    from sqlalchemy import table

    return table(name)


def peak_rss() -> int:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def show(figures: dict[str, Any], *, as_json: bool) -> None:
    if as_json:
        print(json.dumps(figures))
        return
    width = max(len(key) for key in figures)
    for key, value in figures.items():
        print(f"{key:<{width}}  {value}")


if __name__ == "__main__":
    main()
