"""Where the whole ``jurybox run`` process spends its wall time, against what a bare client can reach.

``whole_process.py`` gives the ratio; this script says which part of the process makes it,
so the next change goes where the time is. Against one stub OpenAI server (200 ms latency),
at 10,000 cases and concurrency 256 by default, it runs:

* ``jurybox run`` into a SQLite store a warm-up run created, and splits its wall time into
  **start-up** (process start to the first case's start, as the store records it), the
  **run phase** (first case started to last case recorded) and the **finish** (the rest: the
  last writes, the run's totals and regression check, the report, the exit);
* the bare aiohttp client of ``whole_process.py``, also with N microseconds of busy work on its
  event loop after each reply, on top of its own work (about 0.2 ms a request): the **floor
  curve**. A process whose event loop works about 0.2 ms + N us per request cannot finish its
  requests sooner than that client, whatever the work is: each reply waits in the loop's queue
  behind the other replies' work, and past 1 / (requests a second) of work the loop is never idle.

It prints each part, the bare client's wall time for each N, and at most what the whole ratio
would be with jurybox's start-up and finish as measured and a run phase as short as the whole
bare client (its own start-up and exit included, so the true best case is a little lower).

Usage::

    .venv/bin/python benchmarks/run_floor.py                       # 10000 @ 256, burns 0..800 us
    .venv/bin/python benchmarks/run_floor.py --cases 2000 --concurrency 64 --runs 3
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from whole_process import BARE_CLIENT, child_env, start_stub, write_suite

BURN = """
# Busy-waiting on the clock: N us of the loop's time (CPU, unless the OS takes the core away).
import time as _time

_BURN = float(sys.argv[4]) / 1e6


def burn() -> None:
    end = _time.perf_counter() + _BURN
    while _time.perf_counter() < end:
        pass
"""


def burning_client() -> str:
    """The bare client with ``burn()`` after each reply (``argv[4]``: microseconds of CPU on its loop)."""
    text = BARE_CLIENT.replace("import aiohttp\n", "import aiohttp\n" + BURN, 1)
    marker = "                    await response.read()\n"
    if marker not in text:
        raise SystemExit("whole_process.BARE_CLIENT changed: update run_floor.burning_client")
    return text.replace(marker, marker + "                burn()\n", 1)


def timed(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, float]:
    """(wall seconds, start and end on the wall clock) of one process, its output dropped."""
    began_wall, began = time.time(), time.perf_counter()
    subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - began
    return wall, began_wall, began_wall + wall


def run_parts(store: Path, began: float, ended: float) -> tuple[float, float, float]:
    """(start-up, run phase, finish) of the newest run in ``store``, from its results' own times."""
    with sqlite3.connect(store) as connection:
        run_id = connection.execute("SELECT id FROM runs ORDER BY started_at DESC LIMIT 1").fetchone()[0]
        first, last = connection.execute(
            "SELECT min(started_at), max(recorded_at) FROM results WHERE run_id = ?", (run_id,)
        ).fetchone()
    first_case = _seconds(first)
    last_record = _seconds(last)
    return first_case - began, last_record - first_case, ended - last_record


def _seconds(stored: str) -> float:
    moment = datetime.fromisoformat(stored)
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=256)
    parser.add_argument("--latency", type=float, default=0.2, help="the stub's seconds per request")
    parser.add_argument("--runs", type=int, default=3, help="runs of each process; medians are printed")
    parser.add_argument("--burns", default="0,200,400,600,800", help="microseconds of loop CPU per request")
    args = parser.parse_args()
    burns = [int(value) for value in args.burns.split(",")]
    env = child_env()
    stub, base_url = start_stub(args.latency)
    try:
        with tempfile.TemporaryDirectory(prefix="jurybox-floor-") as work:
            folder = Path(work)
            (folder / "burning_client.py").write_text(burning_client(), encoding="utf-8")
            suite = write_suite(folder, args.cases, base_url)
            store = folder / "store.db"
            jurybox = [sys.executable, "-m", "jurybox", "run", suite.name, "--concurrency", str(args.concurrency)]
            jurybox += ["--no-progress", "--store", f"sqlite:///{store}"]
            url = f"{base_url}/chat/completions"
            bare = [sys.executable, "burning_client.py", url, str(args.cases), str(args.concurrency)]
            timed(jurybox, folder, env)  # warm-up: .pyc files, the store created and migrated
            parts: list[tuple[float, float, float, float]] = []
            floor: dict[int, list[float]] = {burn: [] for burn in burns}
            for _ in range(args.runs):
                wall, began, ended = timed(jurybox, folder, env)
                parts.append((wall, *run_parts(store, began, ended)))
                for burn in burns:
                    floor[burn].append(timed([*bare, str(burn)], folder, env)[0])
    finally:
        stub.terminate()
        stub.wait(timeout=10)
    wall, start_up, run_phase, finish = (statistics.median(column) for column in zip(*parts, strict=True))
    bare_wall = statistics.median(floor[burns[0]])
    print(f"{args.cases} cases @ {args.concurrency}, stub latency {args.latency:g} s, medians of {args.runs} run(s)")
    print(f"jurybox run: {wall:.2f} s = {wall / bare_wall:.2f}x the bare client ({bare_wall:.2f} s)")
    print(f"  start-up {start_up:.2f} s | run phase {run_phase:.2f} s | finish {finish:.2f} s")
    print("bare client with N us of busy work per reply on its loop, on top of its own (the floor curve):")
    for burn in burns:
        print(f"  {burn:5d} us: {statistics.median(floor[burn]):.2f} s")
    # The bare client's whole wall time (its start-up and exit included) stands for the shortest run phase.
    print(
        "at most, with this start-up and finish and a run phase as short as the whole bare client: "
        f"{(start_up + bare_wall + finish) / bare_wall:.2f}x"
    )


if __name__ == "__main__":
    main()
