"""Every input reader fed 40 MB and 10,000-deep files: peak memory, time, exit code (target: under 400 MB and 10 s).

For each reader and each of three inputs, a file is written and read in its
own process (so its peak resident memory, VmHWM, is its own, interpreter and
imports included):

- ``flat``: a 40 MB document holding one flat list of small scalars;
- ``mappings``: 40 MB of small mappings (one a line, for JSON Lines readers);
- ``deep``: a value nested 10,000 levels;
- ``long-text``: 40 MB in 4 KB strings (10,000 values): under the limits, so
  read, in memory a small multiple of the file.

A file over a reader's documented limit must be refused quickly, naming the
file (exit 2); none may print a traceback. Readers: ``jurybox run --dry-run``
on a suite, a seed file, ``jurybox calibrate`` on a labelled set (JSON Lines and
a YAML suite), recorded replies, ``jurybox check``, the ``[tool.jurybox]``
config, ``jurybox store import``, cassette replay (the pytest plugin and the
stub server), ``jurybox lint-cassettes``, a stub script, and a ``valid_json``
judge reading an answer.

    .venv/bin/python benchmarks/input_limits.py              # 40 MB files
    .venv/bin/python benchmarks/input_limits.py --mb 12 --only suite-dry-run

Prints one line per reader and input, then exits 1 if any missed the target.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

DEPTH = 10_000
TARGET_MB = 400
TARGET_S = 10.0
AGENT = "def respond(message, session_id):\n    return 'ok'\n"
JUDGE = "from jurybox import Judgment\n\ndef judge(ctx):\n    return Judgment.passed(1.0, 'ok')\n"


# ---------------------------------------------------------------- the inputs


def _fill(unit: str, size: int) -> str:
    return unit * max(1, size // len(unit))


LONG = "x" * 4096


def yaml_items(kind: str, size: int, indent: str = "  ") -> str:
    """A YAML block value (under a key ending in ``:\\n``): a flat list, small mappings, long text, 10,000 levels."""
    if kind == "long-text":
        return _fill(f"{indent}- {LONG}\n", size)
    if kind == "flat":
        return _fill(f"{indent}- 1\n", size)
    if kind == "mappings":
        return _fill(f"{indent}- {{a: 1, b: x}}\n", size)
    return f"{indent}" + "[" * DEPTH + "]" * DEPTH + "\n"


def json_value(kind: str, size: int) -> str:
    """One JSON value: a flat list, a list of small objects, long text, or 10,000 levels."""
    if kind == "long-text":
        return "[" + _fill(f'"{LONG}",', size)[:-1] + "]"
    if kind == "flat":
        return "[" + _fill("1,", size)[:-1] + "]"
    if kind == "mappings":
        return "[" + _fill('{"a":1,"b":"x"},', size)[:-1] + "]"
    return "[" * DEPTH + "]" * DEPTH


def jsonl(kind: str, size: int, record: str) -> str:
    """JSON Lines: one line holding a flat list or a deep value, or ``record`` repeated (small mappings, long text)."""
    if kind == "mappings":
        return _fill(record + "\n", size)
    if kind == "long-text":  # every short text made 4 KB, every id its own
        line = re.sub(r'"(x|a|PASS)"', f'"{LONG}"', record)
        return "".join(line.replace('"r"', f'"r{i}"') + "\n" for i in range(size // len(line)))
    return json_value(kind, size) + "\n"


def toml(kind: str, size: int) -> str:
    if kind == "long-text":
        return "[tool.jurybox]\nitems = [" + _fill(f"'{LONG}', ", size) + "]\n"
    if kind == "flat":
        return "[tool.jurybox]\nitems = [" + _fill("1, ", size) + "]\n"
    if kind == "mappings":
        return "[tool.jurybox]\nitems = [" + _fill("{a = 1, b = 'x'}, ", size) + "]\n"
    return "[tool.jurybox]\nitems = " + "[" * DEPTH + "]" * DEPTH + "\n"


SUITE_HEAD = (
    "name: bench\nagent: {python: 'bench_agent:respond'}\n"
    "cases:\n  - {name: c1, prompt: hi, judges: [{contains: ok}]}\n"
)
CASSETTE_HEAD = "version: 1\ninteractions: []\nmetadata:\n  items:\n"


def write_inputs(folder: Path, kind: str, size: int) -> dict[str, Path]:
    """The files of one input kind, by reader name."""
    (folder / "bench_agent.py").write_text(AGENT, encoding="utf-8")
    (folder / "bench_judge.py").write_text(JUDGE, encoding="utf-8")
    files = {
        "suite.yaml": SUITE_HEAD + "metadata:\n  items:\n" + yaml_items(kind, size),
        "seed.md": "---\nid: s1\ntype: fact\nitems:\n" + yaml_items(kind, size) + "---\nThe body.\n",
        "labels.jsonl": jsonl(kind, size, '{"id":"r","output":"x","label":"pass"}'),
        "recorded.jsonl": jsonl(kind, size, '{"id":"r","judge":"j","text":"PASS"}'),
        "runs.jsonl": jsonl(kind, size, '{"input":"q","output":"a"}'),
        "config/pyproject.toml": toml(kind, size),  # apart: the CLI commands read ./pyproject.toml
        "cassette.yaml": CASSETTE_HEAD + yaml_items(kind, size, "  "),
        "script.yaml": "replies:\n" + yaml_items(kind, size, ""),
        "answer.json": json_value(kind, size),
    }
    paths = {}
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
        paths[name] = path
    return paths


# ---------------------------------------------------------------- the readers (run in the child process)


def _cli(*args: str) -> int:
    from jurybox.cli import main

    sys.argv = ["jurybox", *args]
    try:
        main()
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 2)
    return 0


def _documented(call: Callable[[], object]) -> int:
    """0 when ``call`` reads the file, 2 when it refuses it with the reader's own error (printed)."""
    from jurybox.calibrate import CalibrationInputError
    from jurybox.inputs import InputError
    from jurybox.pytest_plugin import ConfigError
    from jurybox.stubs import ScriptError
    from jurybox.suites import SuiteError

    try:
        call()
    except (SuiteError, CalibrationInputError, ConfigError, ScriptError, InputError) as exc:
        print(f"error: {exc}"[:300])
        return 2
    return 0


def _replay(path: Path) -> None:
    from jurybox.pytest_plugin import CassetteSettings, use_cassette

    with use_cassette(path, record_mode="none", settings=CassetteSettings()):
        pass


def _answer(path: Path) -> None:
    from jurybox import Context, evaluate
    from jurybox.judges import valid_json

    judgment = evaluate(valid_json(), Context(input="q", output=path.read_text(encoding="utf-8")))
    print(judgment.status.value, judgment.reasoning[:200])


def run_reader(reader: str, folder: Path) -> int:
    from jurybox.pytest_plugin import build_settings
    from jurybox.stubs import load_cassette, load_script
    from jurybox.suites import load_seed

    os.chdir(folder)
    sys.path.insert(0, str(folder))
    store = f"sqlite:///{folder / 'store.db'}"
    config = folder / "config" / "pyproject.toml"
    readers: dict[str, Callable[[], int]] = {
        "suite-dry-run": lambda: _cli("run", "suite.yaml", "--dry-run", "--no-store"),
        "seed": lambda: _documented(lambda: load_seed(folder / "seed.md")),
        "calibrate-jsonl": lambda: _cli("calibrate", "labels.jsonl", "-j", "bench_judge:judge", "--store", store),
        "calibrate-suite": lambda: _cli("calibrate", "suite.yaml", "-j", "bench_judge:judge", "--store", store),
        "recorded": lambda: _documented(lambda: _load_recorded(folder / "recorded.jsonl")),
        "check": lambda: _cli("check", "runs.jsonl", "-j", "bench_judge:judge"),
        "pyproject": lambda: _documented(lambda: build_settings(pyproject=config, environ={})),
        "store-import": lambda: _cli("store", "import", "suite.yaml", "--store", store),
        "cassette-replay": lambda: _documented(lambda: _replay(folder / "cassette.yaml")),
        "stub-replay": lambda: _documented(lambda: load_cassette(folder / "cassette.yaml")),
        "lint-cassettes": lambda: _cli("lint-cassettes", "cassette.yaml"),
        "stub-script": lambda: _documented(lambda: load_script(folder / "script.yaml")),
        "answer-json": lambda: _documented(lambda: _answer(folder / "answer.json")),
    }
    return readers[reader]()


def _load_recorded(path: Path) -> None:
    from jurybox.calibrate import load_recorded

    load_recorded(path)


READERS = (
    "suite-dry-run",
    "seed",
    "calibrate-jsonl",
    "calibrate-suite",
    "recorded",
    "check",
    "pyproject",
    "store-import",
    "cassette-replay",
    "stub-replay",
    "lint-cassettes",
    "stub-script",
    "answer-json",
)


def child(reader: str, folder: Path) -> None:
    import jurybox.cli  # noqa: F401  (the command's own import time is not the reader's)

    started = time.perf_counter()
    code = run_reader(reader, folder)
    seconds = time.perf_counter() - started
    status = Path("/proc/self/status").read_text(encoding="utf-8")
    found = re.search(r"VmHWM:\s+(\d+)", status)
    peak_kb = int(found.group(1)) if found else -1
    print(json.dumps({"code": code, "seconds": round(seconds, 2), "peak_mb": round(peak_kb / 1024, 1)}))


# ---------------------------------------------------------------- the parent


def measure(reader: str, folder: Path, timeout: float) -> dict[str, object]:
    command = [sys.executable, __file__, "--child", reader, str(folder)]
    started = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"code": "timeout", "seconds": timeout, "peak_mb": None, "traceback": False, "said": ""}
    wall = time.perf_counter() - started
    output = done.stdout + done.stderr
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    try:
        figures = json.loads(last)
    except ValueError:
        figures = {"code": done.returncode, "seconds": round(wall, 2), "peak_mb": None}
    said = next((line for line in output.splitlines() if "error" in line.lower() or "refused" in line), "")
    return {**figures, "traceback": "Traceback" in output, "said": said.strip()[:110]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=40.0, help="size of the flat and mappings files, in MB")
    parser.add_argument("--only", action="append", choices=READERS, help="run only these readers (repeatable)")
    parser.add_argument(
        "--kinds", default="flat,mappings,deep,long-text", help="comma-separated: flat, mappings, deep, long-text"
    )
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds before a reader is stopped")
    parser.add_argument("--child", nargs=2, metavar=("READER", "FOLDER"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], Path(args.child[1]))
        return
    size = int(args.mb * 1024 * 1024)
    missed = 0
    print(f"{'reader':16} {'input':9} {'exit':>5} {'peak MB':>8} {'seconds':>8}  what it said")
    for kind in args.kinds.split(","):
        with tempfile.TemporaryDirectory(prefix=f"input-limits-{kind}-") as name:
            folder = Path(name)
            write_inputs(folder, kind, size)
            for reader in args.only or READERS:
                result = measure(reader, folder, args.timeout)
                peak, seconds, code = result["peak_mb"], result["seconds"], result["code"]
                ok = (
                    code in (0, 1, 2)
                    and not result["traceback"]
                    and isinstance(peak, float | int)
                    and peak < TARGET_MB
                    and isinstance(seconds, float | int)
                    and seconds < TARGET_S
                )
                missed += not ok
                flag = "" if ok else "  <-- MISSED" + (" (traceback)" if result["traceback"] else "")
                print(
                    f"{reader:16} {kind:9} {code!s:>5} {peak!s:>8} {seconds!s:>8}  {result['said']}{flag}", flush=True
                )
    print(f"{missed} reader(s) missed the target (under {TARGET_MB} MB and {TARGET_S:g} s, exit 0-2, no traceback)")
    sys.exit(1 if missed else 0)


if __name__ == "__main__":
    main()
