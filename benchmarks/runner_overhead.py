"""How much the suite runner adds on top of the judge model's latency.

Runs N cases (one LLM judge call each: ``correctness``) through the same code
as ``jurybox run`` (the calls ``jurybox._cli.run.execute`` makes: the run service's
prepare and run, build_report, write_reports; each phase timed) against a stub OpenAI server
with a fixed latency, started in a separate process
(``python -m jurybox.stubs openai --latency 0.2``), and prints:

* wall / ideal, where ideal = judge calls x latency / concurrency;
* CPU ms per judge call (this process's user+system CPU over the run / calls);
* peak RSS of this process;
* TCP connections the stub accepted, and judge calls per case;
* the floor: bare HTTP posts against a second stub with the same latency and concurrency (no runner,
  no judge, no SDK), measured in a child process with httpx2 (the OpenAI SDK's default client) and with
  aiohttp (the SDK's transport when aiohttp is installed, as here);
* wall / floor: the run's wall / ideal over the aiohttp floor's, what jurybox adds on this machine;
* wall / achievable, where achievable = ceil(calls / concurrency) x latency: the busiest worker's calls
  one after another (at 200 cases and concurrency 16 that is 13 calls, so even a free runner is 1.04x ideal).

``--in-process-model`` swaps the OpenAI client and stub for a model that only
sleeps, which isolates the runner's and judges' own cost from the HTTP stack.

Targets: <= 1.05x at concurrency 16 (200 cases), <= 1.10x at concurrency 256
(10,000 cases), <= 1 ms CPU per call, <= 100 MB peak RSS, connections <=
concurrency, 1 call per case.

Usage::

    .venv/bin/python benchmarks/runner_overhead.py                      # 200 cases, concurrency 16
    .venv/bin/python benchmarks/runner_overhead.py --cases 10000 --concurrency 256
    .venv/bin/python benchmarks/runner_overhead.py --store sqlite       # also stream results to a SQLite store
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

VERDICT = json.dumps({"score": 1.0, "reasoning": "matches the reference", "issues": [], "strengths": ["exact"]})

AGENT = """
async def respond(message: str, session_id: str) -> str:
    return "The answer to " + message + " is 42."
"""


def write_suite(folder: Path, cases: int, base_url: str) -> Path:
    """A suite of ``cases`` single-prompt cases, each judged by one LLM judge (one model call)."""
    (folder / "bench_agent.py").write_text(AGENT, encoding="utf-8")
    lines = [
        "name: runner-overhead",
        'agent: {python: "bench_agent:respond"}',
        f"judge_model: openai:gpt-4o-mini@{base_url}",
        "defaults: {retries: 0}",
        "cases:",
    ]
    for index in range(cases):
        lines.append(f"  - name: case-{index:05d}")
        lines.append(f'    prompt: "question {index}"')
        lines.append(f'    judges: [{{correctness: {{reference: "The answer to question {index} is 42."}}}}]')
    path = folder / "suite.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


class SleepingModel:
    """A judge model that answers after ``latency`` seconds without any network."""

    name = "sleeping:verdict"

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.connections = 0

    async def complete(self, request: Any) -> Any:
        import asyncio

        from jurybox.models import ModelResponse, Usage

        await asyncio.sleep(self.latency)
        return ModelResponse(VERDICT, model=self.name, usage=Usage(400, 40), latency=self.latency)


def start_stub(latency: float) -> tuple[subprocess.Popen[str], str]:
    command = [
        sys.executable,
        "-m",
        "jurybox.stubs",
        "openai",
        "--latency",
        str(latency),
        "--reply",
        VERDICT,
        "--stats",
    ]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    if not url.startswith("http"):
        process.kill()
        raise SystemExit(f"the stub server did not start: {process.stderr.read() if process.stderr else ''}")
    return process, url


def measure_floor(cases: int, concurrency: int, latency: float) -> dict[str, dict[str, float]]:
    """What this machine and the stub allow at best: bare HTTP posts, no judge, no runner, no SDK.

    Measured in a child process (so its imports and buffers do not count towards this run's peak
    RSS), once with httpx2 (the OpenAI SDK's default client) and once with aiohttp (the SDK's
    transport here when it is installed), each with ``concurrency`` workers like the runner.
    """
    floors = {}
    for client in ("httpx2", "aiohttp"):
        command = [sys.executable, __file__, "--floor-only", client, "--cases", str(cases)]
        command += ["--concurrency", str(concurrency), "--latency", str(latency)]
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        floors[client] = json.loads(done.stdout)
    return floors


def floor_only(client_name: str, cases: int, concurrency: int, latency: float) -> dict[str, float]:
    """One floor measurement (the child process of ``measure_floor``)."""
    import asyncio

    stub, base_url = start_stub(latency)
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "x" * 2000}]}
    url = f"{base_url}/chat/completions"

    async def with_httpx2() -> float:
        import httpx2

        limits = httpx2.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        async with httpx2.AsyncClient(limits=limits, timeout=60) as client:

            async def post() -> None:
                (await client.post(url, json=body)).raise_for_status()

            return await timed_workers(post)

    async def with_aiohttp() -> float:
        import aiohttp

        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session:

            async def post() -> None:
                async with session.post(url, json=body) as response:
                    response.raise_for_status()
                    await response.read()

            return await timed_workers(post)

    async def timed_workers(post: Any) -> float:
        remaining = iter(range(cases))

        async def worker() -> None:
            for _ in remaining:
                await post()

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(min(concurrency, cases))))
        return time.perf_counter() - start

    try:
        cpu = time.process_time()
        wall = asyncio.run(with_httpx2() if client_name == "httpx2" else with_aiohttp())
        cpu = time.process_time() - cpu
    finally:
        stop_stub(stub)
    ideal = cases * latency / concurrency
    return {"wall_over_ideal": round(wall / ideal, 3), "cpu_ms_per_call": round(cpu * 1000 / cases, 3)}


def stop_stub(process: subprocess.Popen[str]) -> dict[str, int]:
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)
    for line in reversed(err.splitlines()):
        if line.startswith("{"):
            return dict(json.loads(line))
    return {}


peaks: dict[str, float] = {}


@contextlib.contextmanager
def _phase(phases: dict[str, tuple[float, float]], name: str) -> Iterator[None]:
    # CPU of this process and of the children reaped meanwhile: the --workers processes (the stub
    # server is reaped only after the last phase, the floor's and the store set-up's before the first).
    wall, cpu = time.perf_counter(), time.process_time() + _children_cpu()
    yield
    phases[name] = (time.perf_counter() - wall, time.process_time() + _children_cpu() - cpu)
    peaks[name] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument(
        "--store",
        choices=("sqlite", "none"),
        default="sqlite",
        help="stream results to a SQLite store, as `jurybox run` does by default (none: --no-store)",
    )
    parser.add_argument(
        "--in-process-model",
        action="store_true",
        help="judge with an in-process model that only sleeps `latency` (no HTTP client, no stub): "
        "isolates the runner and judges from the provider client's cost",
    )
    parser.add_argument(
        "--no-floor", action="store_true", help="skip the bare-HTTP floor measurement against a second stub"
    )
    parser.add_argument("--floor-only", choices=("httpx2", "aiohttp"), help=argparse.SUPPRESS)
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="worker processes, as `jurybox run --workers N` (needs --store sqlite); CPU figures include theirs",
    )
    parser.add_argument("--cache", action="store_true", help="keep the judge response cache on (default: off)")
    parser.add_argument("--profile", help="write a pyinstrument profile of the run to this file (.html, else text)")
    parser.add_argument(
        "--http-transport",
        choices=("auto", "direct", "aiohttp", "httpx"),
        default="auto",
        help="the OpenAI model's http_transport: auto (direct when aiohttp is installed), direct (our own "
        "aiohttp session), aiohttp (the openai SDK over aiohttp) or httpx (as without aiohttp)",
    )
    args = parser.parse_args()
    if args.floor_only:
        print(json.dumps(floor_only(args.floor_only, args.cases, args.concurrency, args.latency)))
        return

    # The pieces ``jurybox run`` (jurybox._cli.run.execute) calls, in the same order and with the same
    # collector settings, timed one by one.
    from rich.console import Console

    from jurybox._cli.run import build_report
    from jurybox.core import frozen_heap
    from jurybox.report import write_reports
    from jurybox.runs import RunRequest, prepare

    if not args.cache:
        os.environ["JURYBOX_CACHE"] = "off"
    from jurybox.models import _openai

    if args.http_transport == "httpx":
        _openai.aiohttp_installed = lambda: False  # type: ignore[assignment]  # as if aiohttp were not installed
    elif args.http_transport != "auto":  # the suite's judge model is built with the default http_transport
        _openai.OpenAIModel.__init__.__kwdefaults__["http_transport"] = args.http_transport
    transport = _openai.OpenAIModel("gpt-4o-mini", api_key="unused").http_transport
    skip_floor = args.no_floor or args.in_process_model
    floor = None if skip_floor else measure_floor(args.cases, args.concurrency, args.latency)
    phases: dict[str, tuple[float, float]] = {}
    stub, base_url = start_stub(args.latency)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            path = write_suite(folder, args.cases, base_url)
            store_url = f"sqlite:///{folder / 'store.db'}"
            if args.store == "sqlite":
                # The store exists already, as for every run after a project's first: creating it
                # (the Alembic migration, about 11 MB more peak RSS, once) happens in a child process.
                create = "import sys; from jurybox.store import open_store; open_store(sys.argv[1]).close()"
                subprocess.run([sys.executable, "-c", create, store_url], check=True)
            profiler = None
            if args.profile:
                from pyinstrument import Profiler

                profiler = Profiler(async_mode="enabled")
                profiler.start()
            with _phase(phases, "load"):
                model = SleepingModel(args.latency) if args.in_process_model else None
                request = RunRequest(
                    suites=(path,),
                    judge_model=model,
                    concurrency=args.concurrency,
                    workers=args.workers,
                    store=store_url,
                    no_store=args.store != "sqlite",
                )
                prepared = prepare(request, tune_gc=True)  # loads with the collector paused
            prepared.open()  # the store, opened before the run as ``jurybox run`` does
            with _phase(phases, "run"):
                [result] = prepared.run()  # on a frozen heap
            suite = prepared.suites[0].suite
            with _phase(phases, "report"), frozen_heap():
                report = build_report(result, suite)
                write_reports(report, ["json", "console"], folder, console=Console(file=io.StringIO()), console_rows=50)
            if profiler is not None:
                profiler.stop()
                html = args.profile.endswith(".html")
                text = profiler.output_html() if html else profiler.output_text(unicode=True, show_all=False)
                Path(args.profile).write_text(text, encoding="utf-8")
            prepared.close()
    finally:
        stats = stop_stub(stub)
    code = 0 if result.ok else 1
    calls = report.totals.judge_calls
    cases = report.totals.cases
    ideal = calls * args.latency / args.concurrency
    # What the workers can do at best: the busiest makes ceil(calls / concurrency) calls one after another.
    achievable = math.ceil(calls / args.concurrency) * args.latency if calls else 0.0
    wall = sum(w for w, _ in phases.values())
    cpu = sum(c for _, c in phases.values())
    run_wall, run_cpu = phases["run"]
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    figures = {
        "cases": cases,
        "concurrency": args.concurrency,
        "workers": args.workers,
        "latency_s": args.latency,
        "store": args.store,
        "exit_code": code,
        "ideal_s": round(ideal, 3),
        "run_wall_s": round(run_wall, 3),
        "run_wall_over_ideal": round(run_wall / ideal, 3) if ideal else None,
        "run_wall_over_achievable": round(run_wall / achievable, 3) if achievable else None,
        "run_cpu_ms_per_call": round(run_cpu * 1000 / calls, 3) if calls else None,
        "total_wall_s (load+run+report)": round(wall, 3),
        "total_wall_over_ideal": round(wall / ideal, 3) if ideal else None,
        "total_wall_over_achievable": round(wall / achievable, 3) if achievable else None,
        "total_cpu_ms_per_call": round(cpu * 1000 / calls, 3) if calls else None,
        "phases_wall_cpu_s": {name: [round(w, 3), round(c, 3)] for name, (w, c) in phases.items()},
        "peak_rss_mb": round(peak_mb, 1),
        "peak_rss_mb_after_phase": {name: round(mb, 1) for name, mb in peaks.items()},
        # Largest child reaped so far: a worker with --workers (else the floor's or the store set-up's process).
        "peak_rss_mb_largest_child": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1),
        "judge_model": "in-process (sleep)"
        if args.in_process_model
        else f"openai provider (http_transport={transport}) -> stub server",
        "floor_bare_http_same_stub": floor,
        # What the runner, judges and store add over the fastest bare client here, machine speed divided out.
        "run_wall_over_floor": round(run_wall / ideal / floor["aiohttp"]["wall_over_ideal"], 3)
        if floor and ideal
        else None,
        "tcp_connections": stats.get("connections"),
        "stub_requests": stats.get("requests"),
        "stub_max_in_flight": stats.get("max_in_flight"),
        "stub_cpu_ms_per_request": round(stats["cpu_s"] * 1000 / stats["requests"], 3)
        if stats.get("requests")
        else None,
        "calls_per_case": round(calls / cases, 3) if cases else None,
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
    }
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
