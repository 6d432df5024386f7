"""The whole ``jurybox run`` process against a bare aiohttp client process, as a user times them.

For each size (cases @ concurrency), against one stub OpenAI server with a fixed latency
(``python -m jurybox.stubs openai --latency 0.2``), this runs in turn, ``--pairs`` times:

* ``python -m jurybox run suite.yaml --concurrency C --no-progress --store sqlite:///...``: one
  LLM judge call per case (``correctness``), the judge response cache off, results streamed to a
  SQLite store that a warm-up run created (so the figures are a later run's, not the first's);
* a bare client process: ``python bare_client.py``, aiohttp posting the same number of
  Chat Completions requests with the same concurrency (no suite, no judge, no store, no report).

and prints, per size, the median over the pairs of the wall-time ratio (jurybox / bare), the
CPU per case of the jurybox process (user + system, start-up and report included) and its peak
RSS. Then ``-X importtime`` of one jurybox run: the 10 top-level packages whose imports cost
most (their modules' own times summed), and ``run -v``'s start-up line.

With ``--otel``, each pair also runs jurybox with ``--otel-endpoint`` pointing at a sink in
this process (an OTLP/HTTP receiver that reads each request and answers 200), and prints what
exporting every run, case and judgment as spans added to the jurybox process's CPU (issue 31:
under 5% of a 10,000-case run's CPU), and the exporter's own CPU as the run reports it on its
``OTLP export:`` line (the threads' CPU while writing and sending spans: steadier than the
difference of two processes' CPU on a shared machine).

Goals (issue 36): within 1.25x the bare client at 200 @ 16 and 1.15x at 10,000 @ 256; CPU at
most 5 ms per case at 200 and 1.0 ms per case at 10,000. For those two sizes a ``budget`` line
follows: the goal's wall time, less jurybox's start-up (the median of ``--pairs`` more runs
with ``-v``) and less the bare client's own run (its wall less its start-up: the bare client
asked for no case), leaves so many microseconds a case for all jurybox does beyond the HTTP
calls; and what the runs took.

Usage::

    .venv/bin/python benchmarks/whole_process.py                      # 200 @ 16 and 10000 @ 256, 3 pairs
    .venv/bin/python benchmarks/whole_process.py --sizes 200x16 --pairs 5
    .venv/bin/python benchmarks/whole_process.py --against ../main/src   # also that tree's jurybox, interleaved

``--against SRC`` runs a second jurybox (another checkout's ``src`` folder, put first on
PYTHONPATH) in the same loop, each of its runs next to this tree's and the bare client's,
and prints its line too (with ``--otel``, its exporting runs' too): on a shared machine only
figures measured side by side compare.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

VERDICT = json.dumps({"score": 1.0, "reasoning": "matches the reference", "issues": [], "strengths": ["exact"]})

AGENT = """
async def respond(message: str, session_id: str) -> str:
    return "The answer to " + message + " is 42."
"""

BARE_CLIENT = """
import asyncio, sys

import aiohttp

URL, CASES, CONCURRENCY = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])


async def main() -> None:
    remaining = iter(range(CASES))
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=CONCURRENCY)) as session:

        async def worker() -> None:
            for index in remaining:
                body = {
                    "model": "gpt-4o-mini",
                    "messages": [{"role": "user", "content": f"question {index} " + "x" * 2000}],
                }
                async with session.post(URL, json=body) as response:
                    response.raise_for_status()
                    await response.read()

        await asyncio.gather(*(worker() for _ in range(min(CONCURRENCY, CASES))))


asyncio.run(main())
"""


@dataclass(frozen=True)
class Measured:
    wall: float
    cpu: float
    peak_mb: float
    exporter_cpu: float | None = None
    """With ``--otel-endpoint``: the CPU the run says its exporter spent (its ``OTLP export:`` line)."""
    startup: float | None = None
    """A jurybox run's start-up as its ``-v`` line says (process start to first case)."""


def child_env(src: str | None = None) -> dict[str, str]:
    """This environment, with bytecode caching on (a user's installed jurybox has its .pyc files).

    ``src``: a jurybox source folder put first on PYTHONPATH (``--against``).
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join(part for part in (src, env.get("PYTHONPATH", "")) if part)
    if env.get("PYTHONPATH"):  # the runs start in a temporary folder: PYTHONPATH=src must still find src/
        env["PYTHONPATH"] = os.pathsep.join(str(Path(part).resolve()) for part in env["PYTHONPATH"].split(os.pathsep))
    env.update(JURYBOX_CACHE="off", HF_HUB_OFFLINE="1", NO_COLOR="1", COLUMNS="120")
    return env


def measure(command: list[str], cwd: Path, env: dict[str, str]) -> Measured:
    """Run ``command`` to its end: wall time, CPU (user + system) and peak RSS of that process alone."""
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert process.stderr is not None
    err = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command[:4])} ... exited {process.returncode}:\n{err.decode()[-2000:]}")
    said = re.search(rb"OTLP export: .*?; ([\d.]+) s of CPU", err)
    exporter_cpu = float(said.group(1)) if said else None
    began = re.search(rb"^start-up ([\d.]+) s", err, re.MULTILINE)
    startup = float(began.group(1)) if began else None
    return Measured(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, exporter_cpu, startup)


class OtlpSink:
    """An OTLP/HTTP receiver on 127.0.0.1 that reads every request, keeps a count and answers 200."""

    def __init__(self) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        sink = self
        self.requests = self.bytes = 0

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                sink.requests += 1
                sink.bytes += len(body)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def measure(self, command: list[str], cwd: Path, env: dict[str, str]) -> tuple[Measured, int, int]:
        """``measure(command)``, and the requests and bytes the sink took while it ran."""
        requests, sent = self.requests, self.bytes
        measured = measure(command, cwd, env)
        return measured, self.requests - requests, self.bytes - sent

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def otel_line(pairs: list[tuple[Measured, Measured]], exported: list[tuple[Measured, int, int]], cases: int) -> str:
    """What exporting spans added to a jurybox run's CPU (medians), and what one exporting run sent the sink."""
    plain = statistics.median(o.cpu for o, _ in pairs)
    with_otel = statistics.median(m.cpu for m, _, _ in exported)
    added = (with_otel - plain) * 1e6 / cases
    _, requests, sent = exported[-1]
    line = (
        f"CPU {with_otel * 1000 / cases:.2f} ms/case, {added:+.0f} us/case ({(with_otel / plain - 1) * 100:+.1f}% "
        f"of the run); the sink took {requests} requests, {sent / 1e6:.1f} MB ({sent / cases / 1000:.2f} KB a case)"
    )
    # The process's CPU moves by several percent from one identical run to the next on a shared machine;
    # the exporter's own threads' CPU, which the run measures and prints, does not carry that noise.
    own = [m.exporter_cpu for m, _, _ in exported if m.exporter_cpu is not None]
    if own:
        mine = statistics.median(own)
        share = mine / plain * 100
        line += f"; the exporter's own CPU {mine * 1e6 / cases:.0f} us/case ({share:.1f}% of the plain run's)"
    return line


def write_suite(folder: Path, cases: int, base_url: str) -> Path:
    (folder / "bench_agent.py").write_text(AGENT, encoding="utf-8")
    lines = [
        "name: whole-process",
        'agent: {python: "bench_agent:respond"}',
        f"judge_model: openai:gpt-4o-mini@{base_url}",
        "defaults: {retries: 0}",
        "cases:",
    ]
    for index in range(cases):
        lines.append(f"  - name: case-{index:05d}")
        lines.append(f'    prompt: "question {index}"')
        lines.append(f'    judges: [{{correctness: {{reference: "The answer to question {index} is 42."}}}}]')
    path = folder / f"suite-{cases}.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def start_stub(latency: float) -> tuple[subprocess.Popen[str], str]:
    command = [sys.executable, "-m", "jurybox.stubs", "openai", "--latency", str(latency), "--reply", VERDICT]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    if not url.startswith("http"):
        process.kill()
        raise SystemExit(f"the stub server did not start: {process.stderr.read() if process.stderr else ''}")
    return process, url


def import_breakdown(
    command: list[str], cwd: Path, env: dict[str, str], top: int
) -> tuple[float, list[tuple[str, float]]]:
    """Total import time (s) and the ``top`` top-level packages by their modules' own import times."""
    done = subprocess.run(
        [command[0], "-X", "importtime", *command[1:]], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    by_package: dict[str, float] = {}
    for line in done.stderr.splitlines():
        found = re.match(r"import time:\s+(\d+) \|\s+\d+ \|\s*(\S+)", line)
        if found:
            package = found.group(2).split(".")[0]
            by_package[package] = by_package.get(package, 0.0) + int(found.group(1)) / 1e6
    ranked = sorted(by_package.items(), key=lambda item: -item[1])
    return sum(by_package.values()), ranked[:top]


def startup_line(command: list[str], cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run([*command, "-v"], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return next((line for line in done.stderr.splitlines() if line.startswith("start-up")), "(no start-up line)")


def size_line(pairs: list[tuple[Measured, Measured]], cases: int, concurrency: int, latency: float) -> str:
    """One size's figures: the median wall-time ratio, the jurybox process's CPU per case and peak RSS."""
    ratio = statistics.median(ours.wall / theirs.wall for ours, theirs in pairs)
    return (
        f"{ratio:.2f}x the bare client "
        f"(jurybox {statistics.median(o.wall for o, _ in pairs):.2f} s, "
        f"bare {statistics.median(t.wall for _, t in pairs):.2f} s, "
        f"ideal {cases * latency / concurrency:.2f} s); "
        f"CPU {statistics.median(o.cpu for o, _ in pairs) * 1000 / cases:.2f} ms/case "
        f"(bare {statistics.median(t.cpu for _, t in pairs) * 1000 / cases:.2f}); "
        f"peak RSS {max(o.peak_mb for o, _ in pairs):.0f} MB (bare {max(t.peak_mb for _, t in pairs):.0f})"
    )


GOALS = {(200, 16): 1.25, (10_000, 256): 1.15}
"""Issue 36's wall-time goals (jurybox over the bare client) for the sizes it names."""


def budget_line(
    pairs: list[tuple[Measured, Measured]], started: list[Measured], bare_start: float, cases: int, goal: float
) -> str:
    """What the goal leaves a case once start-up is paid, against what the runs took.

    The goal allows ``goal`` x the bare client's wall. Less jurybox's start-up (the median of the
    ``-v`` lines of ``started``, more runs of the same command: ``-v`` also lists passing cases, so
    the timed runs go without it), that is what its run and finish may take. The bare client's own
    run is its wall less its start-up (a run of no cases: the interpreter, aiohttp's import, a
    session opened and closed, the exit). The difference, a case, is the wall time the goal leaves
    for everything jurybox does beyond the HTTP calls (agent, prompt, verdict, store, report);
    "took" is the same for the runs measured, from the same median ratio as the size's line, so
    the two never disagree on whether the goal was met. Wall time, not CPU: loop work a reply
    partly hides in the wait for the next one (``benchmarks/run_floor.py``'s floor curve).
    """
    starts = [run.startup for run in started if run.startup is not None]
    if not starts:
        return "no start-up line (a jurybox without run -v's start-up line)"
    startup = statistics.median(starts)
    bare_wall = statistics.median(theirs.wall for _, theirs in pairs)
    ours_wall = statistics.median(ours.wall / theirs.wall for ours, theirs in pairs) * bare_wall
    bare_run = bare_wall - bare_start
    allowed = goal * bare_wall
    left = (allowed - startup - bare_run) / cases * 1e6
    took = (ours_wall - startup - bare_run) / cases * 1e6
    return (
        f"budget at {goal:g}x: {allowed:.2f} s; jurybox's start-up {startup:.2f} s ({len(starts)} runs with -v), "
        f"the bare client's own run {bare_run:.2f} s (its start-up {bare_start:.2f} s): "
        f"the goal leaves {left:.0f} us a case beyond the HTTP calls; the runs took {took:.0f} us"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="200x16,10000x256", help="cases x concurrency, comma-separated")
    parser.add_argument("--pairs", type=int, default=3, help="jurybox and bare runs, alternating (median)")
    parser.add_argument("--latency", type=float, default=0.2, help="the stub's latency per call (s)")
    parser.add_argument("--top", type=int, default=10, help="packages in the import-time breakdown")
    parser.add_argument("--against", help="another jurybox src folder, measured in the same loop")
    parser.add_argument("--otel", action="store_true", help="also run with --otel-endpoint to a sink; print its cost")
    args = parser.parse_args()
    sizes = [tuple(int(part) for part in size.split("x")) for size in args.sizes.split(",")]
    env = child_env()
    other_env = child_env(str(Path(args.against).resolve())) if args.against else None
    where = subprocess.run(
        [sys.executable, "-c", "import jurybox; print(jurybox.__file__)"],
        check=True,
        env=env,
        capture_output=True,
        text=True,
    )
    print(f"jurybox from {where.stdout.strip()}; stub latency {args.latency:g} s; {args.pairs} pair(s) per size")
    stub, base_url = start_stub(args.latency)
    sink = OtlpSink() if args.otel else None
    rows = []
    exporting_rows: list[tuple[int, int, list[tuple[Measured, int, int]], list[tuple[Measured, int, int]]]] = []
    try:
        with tempfile.TemporaryDirectory(prefix="jurybox-whole-") as work:
            folder = Path(work)
            (folder / "bare_client.py").write_text(BARE_CLIENT, encoding="utf-8")
            # The bare client's own start-up and exit: the same process asked for no case.
            idle = [sys.executable, "bare_client.py", f"{base_url}/chat/completions", "0", "1"]
            measure(idle, folder, env)
            bare_start = statistics.median(measure(idle, folder, env).wall for _ in range(args.pairs))
            store = f"sqlite:///{folder / 'store.db'}"
            for cases, concurrency in sizes:
                suite = write_suite(folder, cases, base_url)
                jurybox = [sys.executable, "-m", "jurybox", "run", suite.name, "--concurrency", str(concurrency)]
                jurybox += ["--no-progress", "--store", store]
                bare = [sys.executable, "bare_client.py", f"{base_url}/chat/completions", str(cases), str(concurrency)]
                other = [*jurybox[:-1], f"sqlite:///{folder / 'other-store.db'}"]  # its own store: its own schema
                measure(jurybox, folder, env)  # warm-up: .pyc files written, the store created and migrated
                if other_env is not None:
                    measure(other, folder, other_env)
                exporting = [*jurybox, "--otel-endpoint", sink.url] if sink is not None else None
                other_exporting = [*other, "--otel-endpoint", sink.url] if sink is not None else None
                pairs, other_pairs = [], []
                exported: list[tuple[Measured, int, int]] = []
                other_exported: list[tuple[Measured, int, int]] = []
                for _ in range(args.pairs):
                    pairs.append((measure(jurybox, folder, env), measure(bare, folder, env)))
                    if other_env is not None:
                        other_pairs.append((measure(other, folder, other_env), pairs[-1][1]))
                    if exporting is not None and sink is not None:
                        exported.append(sink.measure(exporting, folder, env))
                    if other_exporting is not None and other_env is not None and sink is not None:
                        other_exported.append(sink.measure(other_exporting, folder, other_env))
                rows.append((cases, concurrency, pairs))
                exporting_rows.append((cases, concurrency, exported, other_exported))
                print(f"{cases} @ {concurrency}: {size_line(pairs, cases, concurrency, args.latency)}", flush=True)
                goal = GOALS.get((cases, concurrency))
                if goal is not None:
                    started = [measure([*jurybox, "-v"], folder, env) for _ in range(args.pairs)]
                    print(f"  {budget_line(pairs, started, bare_start, cases, goal)}", flush=True)
                if other_pairs:
                    print(f"  --against: {size_line(other_pairs, cases, concurrency, args.latency)}", flush=True)
                    if goal is not None and other_env is not None:
                        started = [measure([*other, "-v"], folder, other_env) for _ in range(args.pairs)]
                        print(f"  --against {budget_line(other_pairs, started, bare_start, cases, goal)}", flush=True)
                if exported:
                    print(f"  --otel-endpoint: {otel_line(pairs, exported, cases)}", flush=True)
                if other_exported:
                    print(f"  --against --otel-endpoint: {otel_line(other_pairs, other_exported, cases)}", flush=True)
            smallest = write_suite(folder, sizes[0][0], base_url)
            command = [sys.executable, "-m", "jurybox", "run", smallest.name, "--concurrency", str(sizes[0][1])]
            command += ["--no-progress", "--store", store]
            total, ranked = import_breakdown(command, folder, env, args.top)
            print(f"\nimports of `jurybox run` ({sizes[0][0]} cases): {total:.3f} s in all; top {args.top} packages:")
            for package, seconds in ranked:
                print(f"  {seconds * 1000:7.1f} ms  {package}")
            print(startup_line(command, folder, env))
    finally:
        if sink is not None:
            sink.close()
        stub.send_signal(signal.SIGINT)
        stub.wait(timeout=30)
    print("\npairs (jurybox wall/cpu s, bare wall/cpu s):")
    for cases, concurrency, pairs in rows:
        shown = "; ".join(f"{o.wall:.2f}/{o.cpu:.2f} vs {t.wall:.2f}/{t.cpu:.2f}" for o, t in pairs)
        print(f"  {cases} @ {concurrency}: {shown}")
    for cases, concurrency, exported, other_exported in exporting_rows:
        if exported:
            shown = ", ".join(f"{m.cpu:.2f}" for m, _, _ in exported)
            against = ", ".join(f"{m.cpu:.2f}" for m, _, _ in other_exported)
            line = f"  {cases} @ {concurrency} --otel-endpoint cpu s: {shown}"
            print(line + (f"; --against: {against}" if against else ""))


if __name__ == "__main__":
    main()
