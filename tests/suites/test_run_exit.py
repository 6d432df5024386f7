"""``jurybox run`` ends its process without tearing its heap down, yet as Python's own exit would.

Its threads that are not daemons are joined, every exit handler runs (an agent's, the
exporter's, Ray's), both streams are flushed, and the exit code is the command's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

AGENT = """
import atexit, pathlib, threading, time

here = pathlib.Path(__file__).parent
atexit.register(lambda: (here / "atexit-ran").write_text("yes"))


def _late() -> None:
    time.sleep(0.3)
    (here / "thread-finished").write_text("yes")


threading.Thread(target=_late).start()  # not a daemon: the exit waits for it


def respond(message: str, session_id: str) -> str:
    return "the answer is 42" if "good" in message else "no idea"
"""

SUITE = """
name: exits
agent: {python: "exit_agent:respond"}
cases:
  - {name: good, prompt: "good one", judges: [{contains: "42"}]}
  - {name: bad, prompt: "bad one", judges: [{contains: "42"}]}
"""


def _run(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]), "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "jurybox", "run", *args],
        check=False,  # the exit code is what is tested
        cwd=folder,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "exit_agent.py").write_text(AGENT, encoding="utf-8")
    (tmp_path / "suite.yaml").write_text(SUITE, encoding="utf-8")
    return tmp_path


def test_a_failing_run_exits_1_with_its_report_whole_and_every_exit_handler_run(folder: Path) -> None:
    done = _run(folder, "suite.yaml", "--no-store", "--no-progress", "-f", "console", "-f", "json", "-o", "out")
    assert done.returncode == 1, done.stderr
    assert "1/2 passed" in " ".join(done.stdout.split())  # the report's last line reached the pipe
    report = json.loads((folder / "out" / "exits.json").read_text(encoding="utf-8"))
    assert [(case["case"], case["status"]) for case in report["cases"]] == [("good", "pass"), ("bad", "fail")]
    assert (folder / "atexit-ran").read_text() == "yes"
    assert (folder / "thread-finished").read_text() == "yes"
    assert "Traceback" not in done.stderr


def test_a_usage_error_and_a_passing_run_keep_their_codes(folder: Path) -> None:
    assert _run(folder, "missing.yaml", "--no-store").returncode == 2
    (folder / "suite.yaml").write_text(SUITE.split("  - {name: bad", maxsplit=1)[0], encoding="utf-8")
    done = _run(folder, "suite.yaml", "--no-store", "--no-progress")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (folder / "atexit-ran").exists() and (folder / "thread-finished").exists()
