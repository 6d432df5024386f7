"""The main job on a fresh clone: its first run's time (install included) and its venv's size.

Clones this repository's committed HEAD into a temporary folder, runs ``bash scripts/main.sh``
there as a new user would (it makes .venv, installs the base, the pinned CPU torch and the
embedding model, and runs the example suite), then runs it again (nothing to install), and
prints wall and CPU seconds of each run (CPU: user + system of every process the script
started, the figure that does not depend on what else the machine is doing) and the size
of .venv. Goal (issue 33): the first run under 60 s.

Usage::

    .venv/bin/python benchmarks/main_job.py            # commit first: the clone has HEAD only
    .venv/bin/python benchmarks/main_job.py --keep     # leave the clone (its path is printed)
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def folder_mb(folder: Path) -> float:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file() and not path.is_symlink()) / 1e6


def timed(command: list[str], cwd: Path) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user + system of the command's processes) and the exit code."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        print(done.stderr[-2000:])
    return wall, cpu, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", action="store_true", help="leave the clone in place")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="jurybox-main-"))
    clone = work / "jurybox"
    try:
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        env_note = "" if os.cpu_count() is None else f" ({os.cpu_count()} cores, load {os.getloadavg()[0]:.1f})"
        print(f"fresh clone of {ROOT} at {clone}{env_note}", flush=True)
        wall, cpu, code = timed(["bash", "scripts/main.sh"], clone)
        print(f"first run (venv + install + suite): {wall:.1f} s wall, {cpu:.1f} s CPU, exit {code}", flush=True)
        wall, cpu, code = timed(["bash", "scripts/main.sh"], clone)
        print(f"second run (suite only):            {wall:.1f} s wall, {cpu:.1f} s CPU, exit {code}", flush=True)
        print(f"main job's .venv: {folder_mb(clone / '.venv'):.0f} MB")
    finally:
        if args.keep:
            print(f"kept: {clone}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
