"""How long ``jurybox run`` took to start its first case, phase by phase, for ``run -v``.

The clock starts when the process did (``/proc/self/stat`` on Linux; elsewhere when
``jurybox.cli`` was imported, which leaves out the interpreter's own start-up).
"""

from __future__ import annotations

import os
import time

from jurybox.cli import STARTED

_marks: list[tuple[str, float]] = []


def process_started() -> float:
    """The process's start on the ``time.perf_counter`` clock (the CLI's import time when unknown)."""
    try:
        with open("/proc/self/stat", encoding="ascii") as stat:
            fields = stat.read().rpartition(")")[2].split()
        with open("/proc/uptime", encoding="ascii") as uptime:
            since_boot = float(uptime.read().split()[0])
        # Field 22 (starttime) in clock ticks since boot; fields[0] is field 3 (state).
        age = since_boot - int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return STARTED
    return min(STARTED, time.perf_counter() - max(0.0, age))


def mark(phase: str) -> None:
    """Record that ``phase`` (what was done since the previous mark) just ended."""
    _marks.append((phase, time.perf_counter()))


def summary() -> str:
    """The phases up to now: ``start-up 0.41 s: imports 0.30 s, suites read 0.07 s, servers checked 0.03 s, ...``."""
    began = previous = process_started()
    parts = []
    for phase, at in _marks:
        parts.append(f"{phase} {at - previous:.2f} s")
        previous = at
    total = time.perf_counter() - began
    return f"start-up {total:.2f} s: " + ", ".join(parts) if parts else f"start-up {total:.2f} s"
