"""The same judge work through DeepEval, Inspect AI, Ragas and jurybox, side by side: a table anyone can rerun.

Each tool judges the same N cases (a question, an answer, a reference: one LLM-judge
call each, an answer-correctness judgment) with its own judge API, against the same
stub OpenAI server (``python -m jurybox.stubs openai``, 127.0.0.1, a fixed latency)
at the same concurrency:

* DeepEval: ``evaluate(test_cases, [GEval(...)])`` with ``GPTModel(base_url=stub)``,
  ``AsyncConfig(max_concurrent=C)``; evaluation steps given, so one call per case;
* Inspect AI: ``eval(Task(..., scorer=model_graded_qa()))`` on the ``openai`` provider at
  ``model_base_url=stub``, ``max_connections=C``; the answers are set by a solver that
  calls no model, so the grader's is the only call;
* Ragas: ``evaluate(dataset, [AspectCritic(...)])`` with ``llm_factory("gpt-4o-mini",
  client=AsyncOpenAI(base_url=stub))``, ``RunConfig(max_workers=C)``; strictness 1, one call;
* jurybox API: ``aevaluate(correctness(...), Context(...))`` for each case, C at a time;
* jurybox CLI: ``jurybox run suite.yaml --concurrency C`` (an agent that returns the answer,
  the ``correctness`` judge, the default SQLite store, judge cache off).

Each peer is installed with pip from PyPI into its own virtual environment under the
cache directory (pinned versions, below), once; each run is a fresh process. The stub
answers each tool in the shape its judge parses as a verdict (``REPLIES``); a run counts
only scores that are that verdict, and any other outcome as an error.

Per tool it prints:

* ``wall / ideal``: the evaluation's wall time over ideal = cases / concurrency x latency
  (the time no tool can beat); ``process / ideal`` is the whole process (imports included);
* ``CPU ms / call``: the evaluation's CPU (user + system, all threads) per judge call the stub
  received; ``process CPU ms / call``: the whole process tree's;
* ``peak RSS``: the process tree's resident memory at its highest (sampled every 50 ms);
* judge calls the stub received, scores parsed, errors.

Usage::

    python benchmarks/peers.py                                   # 200 cases, concurrency 16, 200 ms
    python benchmarks/peers.py --only deepeval --only jurybox-api
    python benchmarks/peers.py --cases 1000 --concurrency 64 --latency-ms 100
    python benchmarks/peers.py --cache-dir /tmp/peers --markdown   # the table as docs/performance.md shows it
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "jurybox" / "peers"

PINS = {
    "deepeval": ("deepeval==4.3.1",),
    "inspect-ai": ("inspect-ai==0.3.285", "openai==3.57.0"),  # Inspect's openai provider needs the SDK, unpinned
    # Ragas 0.4.3 imports langchain_community.chat_models.vertexai, gone from langchain-community 0.4:
    # the last 0.3 line of LangChain it was released with.
    "ragas": (
        "ragas==0.4.3",
        "langchain-community==0.3.31",
        "langchain==0.3.30",
        "langchain-core==0.3.86",
        "langchain-openai==0.3.35",
    ),
}
"""What each peer's environment installs (pip resolves the rest; the run prints the versions that matter)."""
SHOWN_DEPENDENCIES = ("openai", "langchain-core", "langchain-openai", "instructor", "httpx", "pydantic")

REPLIES = {
    # GEval's ReasonScore: a 0-10 score (9: 0.9 after DeepEval's normalising) and a reason.
    "deepeval": json.dumps({"reason": "The answer states the reference's result.", "score": 9}),
    # model_graded_qa reads the last "GRADE: C|P|I" in the grader's reply.
    "inspect-ai": "The submission gives the same result as the criterion.\n\nGRADE: C",
    # AspectCritic's output model: a reason and a 0/1 verdict.
    "ragas": json.dumps({"reason": "The response matches the reference.", "verdict": 1}),
    # jurybox's correctness judge: a 0..1 score with its reasoning.
    "jurybox": json.dumps(
        {"score": 1.0, "reasoning": "matches the reference", "issues": [], "strengths": ["same result"]}
    ),
}

QUIET_ENV = {
    # Nothing leaves 127.0.0.1: each tool's telemetry and hub look-ups off.
    "DEEPEVAL_TELEMETRY_OPT_OUT": "YES",
    "DEEPEVAL_UPDATE_WARNING_OPT_IN": "NO",
    "DEEPEVAL_GRPC_LOGGING": "NO",
    "DEEPEVAL_DISABLE_DOTENV": "1",
    "CONFIDENT_TRACE_FLUSH": "NO",
    "RAGAS_DO_NOT_TRACK": "true",
    "RAGAS_APP_TOKEN": "",
    "INSPECT_TELEMETRY": "",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "ANONYMIZED_TELEMETRY": "False",
    "DO_NOT_TRACK": "1",
    "LANGCHAIN_TRACING_V2": "false",
    "OPENAI_API_KEY": "sk-stub-not-a-key",
    "JURYBOX_CACHE": "off",
}


def cases(count: int) -> list[dict[str, str]]:
    """The cases every tool judges: a question, the app's answer and the reference answer."""
    return [
        {"question": f"What is {i} + {i}?", "answer": f"{i} + {i} is {2 * i}.", "reference": f"{2 * i}"}
        for i in range(count)
    ]


# -- the workers: one small program per tool, run in that tool's environment -------------------------

WORKER_HEAD = """
import json, os, resource, sys, time

STARTED = time.perf_counter()
URL, COUNT, CONCURRENCY, EXPECTED = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
CASES = [
    {"question": f"What is {i} + {i}?", "answer": f"{i} + {i} is {2 * i}.", "reference": f"{2 * i}"}
    for i in range(COUNT)
]


def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def report(began, cpu_began, scores, errors, first_error=""):
    wall = time.perf_counter() - began
    print(json.dumps({
        "startup_s": began - STARTED, "eval_wall_s": wall, "eval_cpu_s": cpu() - cpu_began,
        "scores": scores, "errors": errors, "first_error": first_error[:300],
    }))
"""

WORKERS = {
    "deepeval": """
from deepeval import evaluate
from deepeval.evaluate import AsyncConfig, CacheConfig, DisplayConfig, ErrorConfig
from deepeval.metrics import GEval
from deepeval.models import GPTModel
from deepeval.test_case import LLMTestCase, LLMTestCaseParams

model = GPTModel(model="gpt-4o-mini", base_url=URL, api_key=os.environ["OPENAI_API_KEY"], temperature=0)
metric = GEval(
    name="Correctness",
    evaluation_steps=[
        "Check whether the actual output states the same result as the expected output.",
        "Penalise a result that contradicts the expected output.",
    ],
    evaluation_params=[LLMTestCaseParams.INPUT, LLMTestCaseParams.ACTUAL_OUTPUT, LLMTestCaseParams.EXPECTED_OUTPUT],
    model=model,
    async_mode=True,
)
tests = [LLMTestCase(input=c["question"], actual_output=c["answer"], expected_output=c["reference"]) for c in CASES]
began, cpu_began = time.perf_counter(), cpu()
result = evaluate(
    test_cases=tests,
    metrics=[metric],
    async_config=AsyncConfig(run_async=True, max_concurrent=CONCURRENCY, throttle_value=0),
    display_config=DisplayConfig(show_indicator=False, print_results=False, verbose_mode=False),
    cache_config=CacheConfig(write_cache=False, use_cache=False),
    error_config=ErrorConfig(ignore_errors=True),
)
data = [m for test in result.test_results for m in (test.metrics_data or [])]
good = [m for m in data if m.error is None and m.score is not None and abs(m.score - float(EXPECTED)) < 1e-9]
bad = [m for m in data if m not in good]
report(began, cpu_began, len(good), len(bad) + len(tests) - len(data), str(bad[0].error or bad[0].score) if bad else "")
""",
    "inspect-ai": '''
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput
from inspect_ai.scorer import model_graded_qa
from inspect_ai.solver import solver

ANSWERS = {i: c["answer"] for i, c in enumerate(CASES)}


@solver
def canned_answer():
    """The app's answer, as the other tools are given it: no model call."""

    async def solve(state, generate):
        state.output = ModelOutput.from_content(model="app", content=ANSWERS[state.sample_id])
        state.messages.append(state.output.message)
        return state

    return solve


task = Task(
    dataset=[Sample(id=i, input=c["question"], target=c["reference"]) for i, c in enumerate(CASES)],
    solver=canned_answer(),
    scorer=model_graded_qa(),
)
began, cpu_began = time.perf_counter(), cpu()
logs = eval(
    task,
    model="openai/gpt-4o-mini",
    model_base_url=URL,
    max_connections=CONCURRENCY,
    max_samples=CONCURRENCY,
    display="none",
    log_dir=os.environ["PEER_WORK_DIR"],
    log_format="json",
    fail_on_error=False,
    retry_on_error=0,
)
samples = logs[0].samples or []
values = [(s.scores or {}).get("model_graded_qa") for s in samples]
good = [v for v in values if v is not None and v.value == EXPECTED]
problems = [
    s.error.message if s.error else repr(v) for s, v in zip(samples, values) if v is None or v.value != EXPECTED
]
report(began, cpu_began, len(good), len(CASES) - len(good), problems[0] if problems else logs[0].status)
''',
    "ragas": """
from openai import AsyncOpenAI
from ragas import EvaluationDataset, RunConfig, evaluate
from ragas.llms import llm_factory
from ragas.metrics import AspectCritic

llm = llm_factory("gpt-4o-mini", client=AsyncOpenAI(base_url=URL, api_key=os.environ["OPENAI_API_KEY"], max_retries=0))
metric = AspectCritic(
    name="correctness",
    definition="Does the response give the same result as the reference answer?",
    strictness=1,
    llm=llm,
)
dataset = EvaluationDataset.from_list(
    [{"user_input": c["question"], "response": c["answer"], "reference": c["reference"]} for c in CASES]
)
began, cpu_began = time.perf_counter(), cpu()
result = evaluate(
    dataset,
    metrics=[metric],
    llm=llm,
    run_config=RunConfig(max_workers=CONCURRENCY, max_retries=0, timeout=60),
    show_progress=False,
    raise_exceptions=False,
)
values = [row.get("correctness") for row in result.scores]
good = [v for v in values if v is not None and v == v and float(v) == float(EXPECTED)]
report(began, cpu_began, len(good), len(CASES) - len(good), "" if len(good) == len(CASES) else repr(values[:3]))
""",
    "jurybox-api": """
import asyncio

from jurybox import Context, Status, aevaluate
from jurybox.llm import correctness
from jurybox.models import get_model

judge = correctness(model=get_model(f"openai:gpt-4o-mini@{URL}"))
contexts = [Context(input=c["question"], output=c["answer"], expected=c["reference"]) for c in CASES]


async def main():
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(context):
        async with gate:
            return await aevaluate(judge, context)

    return await asyncio.gather(*(one(c) for c in contexts))


began, cpu_began = time.perf_counter(), cpu()
judgments = asyncio.run(main())
good = [j for j in judgments if j.status is Status.PASS and j.score is not None and j.score.value == float(EXPECTED)]
bad = [j for j in judgments if j not in good]
report(began, cpu_began, len(good), len(bad), f"{bad[0].status}: {bad[0].reasoning}" if bad else "")
""",
}
EXPECTED_SCORES = {"deepeval": "0.9", "inspect-ai": "C", "ragas": "1", "jurybox-api": "1.0"}

CLI_AGENT = """
ANSWERS = {}


async def respond(message: str, session_id: str) -> str:
    i = int(message.split()[2])
    return f"{i} + {i} is {2 * i}."
"""


def write_cli_suite(folder: Path, count: int, url: str) -> Path:
    (folder / "peers_agent.py").write_text(CLI_AGENT, encoding="utf-8")
    lines = ["name: peers", 'agent: {python: "peers_agent:respond"}', f"judge_model: openai:gpt-4o-mini@{url}"]
    lines += ["defaults: {retries: 0}", "cases:"]
    for i, case in enumerate(cases(count)):
        lines.append(f"  - name: case-{i:05d}")
        lines.append(f'    prompt: "{case["question"]}"')
        lines.append(f'    judges: [{{correctness: {{reference: "{case["reference"]}"}}}}]')
    path = folder / "suite.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# -- environments -------------------------------------------------------------------------------------


def environment(peer: str, cache: Path) -> Path:
    """The peer's virtual environment (created and installed on the first run); returns its python."""
    pins = PINS[peer]
    folder = cache / pins[0].replace("==", "-")
    python = folder / "bin" / "python"
    marker = folder / ".installed"
    if marker.exists():
        return python
    print(f"installing {' '.join(pins)} into {folder} (once) ...", file=sys.stderr, flush=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(folder)], check=True)
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, *pins], check=True)
    # Compile and warm the imports once, so the measured run does not pay for writing .pyc files.
    module = {"inspect-ai": "inspect_ai"}.get(peer, peer)
    subprocess.run([str(python), "-c", f"import {module}"], check=True, env={**os.environ, **QUIET_ENV})
    marker.write_text(" ".join(pins) + "\n", encoding="utf-8")
    return python


def versions(python: Path, packages: tuple[str, ...]) -> dict[str, str]:
    script = (
        "import importlib.metadata as m, json, sys\n"
        "found = {}\n"
        "for name in sys.argv[1:]:\n"
        "    try:\n        found[name] = m.version(name)\n"
        "    except m.PackageNotFoundError:\n        pass\n"
        "print(json.dumps(found))\n"
    )
    done = subprocess.run([str(python), "-c", script, *packages], capture_output=True, text=True, check=True)
    return dict(json.loads(done.stdout))


# -- measuring one process tree -----------------------------------------------------------------------


@dataclass
class Measured:
    returncode: int
    wall_s: float
    cpu_s: float
    peak_rss: int
    stdout: str
    stderr: str


def _tree_rss(root: int) -> int:
    """Resident bytes of ``root`` and every process below it."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    page = os.sysconf("SC_PAGE_SIZE")
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", encoding="ascii") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(entry.name)
        children.setdefault(int(fields[1]), []).append(pid)
        rss[pid] = int(fields[21]) * page
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo.extend(children.get(pid, []))
    return total


def run_measured(command: list[str], env: dict[str, str], cwd: Path, timeout: float) -> Measured:
    """Run ``command``; its wall time, the CPU of it and its waited-for children, and its tree's peak RSS."""
    began = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(command, env=env, cwd=cwd, stdout=out, stderr=err)
        peak = 0
        stop = threading.Event()

        def sample() -> None:
            nonlocal peak
            while not stop.is_set():
                peak = max(peak, _tree_rss(process.pid))
                stop.wait(0.05)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        deadline = time.monotonic() + timeout
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                process.kill()
                _pid, status, usage = os.wait4(process.pid, 0)
                break
            time.sleep(0.01)
        wall = time.perf_counter() - began
        stop.set()
        sampler.join()
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Measured(
            process.returncode,
            wall,
            usage.ru_utime + usage.ru_stime,
            peak,
            out.read().decode(errors="replace"),
            err.read().decode(errors="replace"),
        )


# -- the stub -----------------------------------------------------------------------------------------


class Stub:
    """``python -m jurybox.stubs openai`` in its own process, answering every request with one reply."""

    def __init__(self, reply: str, latency: float) -> None:
        command = [sys.executable, "-m", "jurybox.stubs", "openai", "--latency", str(latency), "--reply", reply]
        env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        assert self.process.stdout is not None
        self.url = self.process.stdout.readline().strip()
        if not self.url.startswith("http"):
            self.close()
            raise SystemExit(f"the stub did not start: {self.process.stderr.read() if self.process.stderr else ''}")

    def stats(self) -> dict[str, int]:
        """Requests received so far, and the most in flight at once."""
        with urllib.request.urlopen(f"{self.url.removesuffix('/v1')}/_stub/stats", timeout=10) as answer:
            found = json.load(answer)
        return {"requests": int(found["requests"]), "max_in_flight": int(found["max_in_flight"])}

    def close(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


# -- one tool -----------------------------------------------------------------------------------------


@dataclass
class Row:
    tool: str
    version: str
    calls: int = 0
    in_flight: int = 0
    """The most judge calls the stub had in flight at once (the concurrency the tool reached)."""
    scores: int = 0
    errors: int = 0
    eval_wall_s: float = 0.0
    process_wall_s: float = 0.0
    eval_cpu_s: float = 0.0
    process_cpu_s: float = 0.0
    peak_rss: int = 0
    startup_s: float = 0.0
    load: float = 0.0
    """The machine's 1-minute load average as the run started (other work competing for the CPUs)."""
    problem: str = ""
    details: dict[str, Any] = field(default_factory=dict)


def run_tool(
    tool: str, args: argparse.Namespace, prepare: Callable[[Path, str], tuple[list[str], dict[str, str]]]
) -> Row:
    """Start a stub for ``tool``, run its worker as one measured process, read the stub's count."""
    latency = args.latency_ms / 1000
    reply = REPLIES["jurybox" if tool.startswith("jurybox") else tool]
    stub = Stub(reply, latency)
    try:
        with tempfile.TemporaryDirectory(prefix=f"peers-{tool}-") as folder:
            work = Path(folder)
            command, env = prepare(work, stub.url)
            env = {**env, **QUIET_ENV, "PEER_WORK_DIR": str(work / "logs"), "HOME": str(work)}
            before = stub.stats()["requests"]
            load = os.getloadavg()[0]
            measured = run_measured(command, env, work, args.timeout)
            after = stub.stats()
    finally:
        stub.close()
    row = Row(tool, "", calls=after["requests"] - before, process_wall_s=measured.wall_s, process_cpu_s=measured.cpu_s)
    row.in_flight, row.load = after["max_in_flight"], load
    row.peak_rss = measured.peak_rss
    if tool == "jurybox-cli":
        return _cli_row(row, measured, args.cases)
    lines = [line for line in measured.stdout.splitlines() if line.startswith("{")]
    if measured.returncode != 0 or not lines:
        row.problem = f"exit {measured.returncode}: " + (measured.stderr.strip().splitlines() or [""])[-1][:300]
        return row
    found = json.loads(lines[-1])
    row.scores, row.errors = found["scores"], found["errors"]
    row.eval_wall_s, row.eval_cpu_s, row.startup_s = found["eval_wall_s"], found["eval_cpu_s"], found["startup_s"]
    row.problem = found["first_error"] if row.errors else ""
    return row


def _cli_row(row: Row, measured: Measured, count: int) -> Row:
    """``jurybox run``'s own figures: the report's passed count, and the process as a whole."""
    said = measured.stdout + measured.stderr
    passed = next((line for line in said.splitlines() if "passed (" in line and "/" in line), "")
    try:
        row.scores = int(passed.split("PASSED", 1)[1].split("/", 1)[0]) if "PASSED" in passed else 0
    except ValueError:
        row.scores = 0
    row.errors = count - row.scores
    if measured.returncode != 0:
        row.problem = f"exit {measured.returncode}: " + (said.strip().splitlines() or [""])[-1][:300]
    # The CLI's evaluation is its whole process (load, run, report): that is what a user times.
    row.eval_wall_s, row.eval_cpu_s = measured.wall_s, measured.cpu_s
    return row


def peer_prepare(tool: str, python: Path, args: argparse.Namespace) -> Callable[[Path, str], Any]:
    def prepare(work: Path, url: str) -> tuple[list[str], dict[str, str]]:
        script = work / f"{tool}_worker.py"
        script.write_text(WORKER_HEAD + WORKERS[tool], encoding="utf-8")
        (work / "logs").mkdir()
        command = [str(python), str(script), url, str(args.cases), str(args.concurrency), EXPECTED_SCORES[tool]]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
        if tool == "jurybox-api":
            env["PYTHONPATH"] = str(REPO / "src")
        return command, env

    return prepare


def cli_prepare(args: argparse.Namespace) -> Callable[[Path, str], Any]:
    def prepare(work: Path, url: str) -> tuple[list[str], dict[str, str]]:
        suite = write_cli_suite(work, args.cases, url)
        command = [sys.executable, "-m", "jurybox", "run", str(suite), "--concurrency", str(args.concurrency)]
        command += ["--store", f"sqlite:///{work / 'runs.db'}", "--no-progress"]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
        env["PYTHONPATH"] = str(REPO / "src")
        return command, env

    return prepare


# -- the table ----------------------------------------------------------------------------------------

TOOLS = ("deepeval", "inspect-ai", "ragas", "jurybox-api", "jurybox-cli")


def table(rows: list[Row], args: argparse.Namespace) -> str:
    ideal = args.cases / args.concurrency * args.latency_ms / 1000
    head = (
        "| tool | version | judge calls | most in flight | scores parsed / errors | eval wall (s) | wall / ideal "
        "| process / ideal | CPU ms / call | process CPU ms / call | peak RSS (MB) | load |"
    )
    lines = [head, "|" + " --- |" * 12]
    for row in rows:
        if row.problem and not row.scores:
            lines.append(
                f"| {row.tool} | {row.version} | {row.calls} | {row.in_flight} | 0 / {row.errors} | | | | | | "
                f"| {row.load:.1f} |"
            )
            continue
        calls = max(row.calls, 1)
        lines.append(
            f"| {row.tool} | {row.version} | {row.calls} | {row.in_flight} | {row.scores} / {row.errors} "
            f"| {row.eval_wall_s:.2f} "
            f"| {row.eval_wall_s / ideal:.2f} | {row.process_wall_s / ideal:.2f} "
            f"| {row.eval_cpu_s * 1000 / calls:.2f} | {row.process_cpu_s * 1000 / calls:.2f} "
            f"| {row.peak_rss / 2**20:.0f} | {row.load:.1f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE, help=f"where the venvs go ({DEFAULT_CACHE})")
    parser.add_argument("--only", action="append", choices=TOOLS, help="run only these tools (repeatable)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds one tool's run may take")
    parser.add_argument("--markdown", action="store_true", help="print only the markdown table and versions")
    args = parser.parse_args()

    tools = args.only or list(TOOLS)
    args.cache_dir.mkdir(parents=True, exist_ok=True)
    rows: list[Row] = []
    for tool in tools:
        if tool in PINS:
            python = environment(tool, args.cache_dir)
            found = versions(python, (PINS[tool][0].split("==")[0], *SHOWN_DEPENDENCIES))
            prepare = peer_prepare(tool, python, args)
        else:
            found = versions(Path(sys.executable), ("openai", "httpx", "aiohttp", "pydantic"))
            prepare = cli_prepare(args) if tool == "jurybox-cli" else peer_prepare(tool, Path(sys.executable), args)
        print(f"running {tool} ...", file=sys.stderr, flush=True)
        row = run_tool(tool, args, prepare)
        name = PINS[tool][0].split("==")[0] if tool in PINS else None
        row.version = found.pop(name, "?") if name else _jurybox_version()
        row.details = found
        rows.append(row)
        print(json.dumps(row.__dict__), file=sys.stderr, flush=True)

    ideal = args.cases / args.concurrency * args.latency_ms / 1000
    print(
        f"{args.cases} cases, one judge call each, concurrency {args.concurrency}, stub latency "
        f"{args.latency_ms:g} ms: ideal {ideal:.2f} s; Python {sys.version.split()[0]}, {os.cpu_count()} CPUs\n"
    )
    print(table(rows, args))
    print()
    for row in rows:
        deps = ", ".join(f"{k} {v}" for k, v in row.details.items())
        print(f"- {row.tool} {row.version}: {deps}")
        if row.problem:
            print(f"  problem: {row.problem}")
    if not args.markdown:
        # `jurybox run` asks the judge server once before the run (GET /models, its preflight): one more request.
        short = [
            row.tool
            for row in rows
            if row.scores != args.cases or row.calls != args.cases + (row.tool == "jurybox-cli")
        ]
        print(f"\nevery tool parsed {args.cases} scores from {args.cases} judge calls" if not short else "")
        if short:
            print(f"not all {args.cases} cases were judged once by: {', '.join(short)}")


def _jurybox_version() -> str:
    done = subprocess.run(
        [sys.executable, "-c", "import jurybox; print(jurybox.__version__)"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
        check=False,
    )
    return done.stdout.strip() or "?"


if __name__ == "__main__":
    main()
