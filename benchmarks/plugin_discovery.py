"""What reading the ``jurybox`` entry points costs, and what a run pays for it (nothing, unless a name is missing).

Each figure comes from a fresh interpreter, so imports are cold as they are for a
``jurybox`` command:

- ``entry points``: ``importlib.metadata.entry_points(group="jurybox")`` alone (scans
  every installed distribution's metadata);
- ``discover``: the process-wide registry reading and loading them, with the CLI's
  packages already imported (what a run pays on its first unknown name);
- ``discover, cold``: the same before anything of jurybox but ``core`` is imported
  (the executors package is imported by its entry point);
- ``import jurybox._cli.run``: for scale.

    .venv/bin/python benchmarks/plugin_discovery.py --repeat 5
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys

PROBES = {
    "entry points": (
        "",
        "from importlib import metadata; found = list(metadata.entry_points(group='jurybox'))",
    ),
    "discover": (
        "import jurybox._cli.run",
        "from jurybox.core import PluginRegistry; PluginRegistry.default().discover()",
    ),
    "discover, cold": (
        "import jurybox.core",
        "from jurybox.core import PluginRegistry; PluginRegistry.default().discover()",
    ),
    "import jurybox._cli.run": ("", "import jurybox._cli.run"),
}

TIMER = """
import time
{setup}
started = time.perf_counter()
{probe}
print(time.perf_counter() - started)
"""


def measure(setup: str, probe: str) -> float:
    done = subprocess.run(
        [sys.executable, "-c", TIMER.format(setup=setup, probe=probe)],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="fresh interpreters per figure (median reported)")
    args = parser.parse_args()
    from importlib import metadata

    found = list(metadata.entry_points(group="jurybox"))
    distributions = len(list(metadata.distributions()))
    print(f"{distributions} installed distributions; jurybox entry points: {', '.join(e.value for e in found)}")
    for label, (setup, probe) in PROBES.items():
        times = [measure(setup, probe) for _ in range(args.repeat)]
        print(f"{label:26s} median {statistics.median(times) * 1000:8.1f} ms  (min {min(times) * 1000:.1f} ms)")


if __name__ == "__main__":
    main()
