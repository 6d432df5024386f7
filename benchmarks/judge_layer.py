"""Benchmark: the LLM judge layer's CPU cost per judged call, and the response cache on a repeated run.

Runs N judged calls of the built-in ``correctness`` judge against the OpenAI stub
server (``python -m jurybox.stubs openai``) running in its own process, so this
process's CPU time (``time.process_time()``) is the judge layer plus the model
client and never the server. It prints:

* cold run: N distinct cases, every one a real HTTP call to the stub;
* repeated run: the same N cases again; the cache hit rate must be 100% and the
  stub must receive zero further requests;
* judge layer alone: the same N cases with an in-process model that answers
  instantly, i.e. template rendering, verdict parsing and bookkeeping only.

Usage:
    .venv/bin/python benchmarks/judge_layer.py [--cases 500] [--concurrency 16] [--http-transport httpx]

Targets: 100% cache hits with 0 model calls on the repeated run; under 1 ms of
judge-layer CPU per judged call.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from jurybox.core import Context, Judgment, Status
from jurybox.llm import correctness
from jurybox.models import FakeModel, get_model

VERDICT = json.dumps({"score": 0.9, "reasoning": "matches the reference", "issues": [], "strengths": ["exact"]})


def _cases(count: int) -> list[Context]:
    return [
        Context(
            input=f"Question {i}: what is the capital of country number {i}?",
            output=f"The capital of country {i} is City{i}. " * 8,
            expected=f"City{i}",
        )
        for i in range(count)
    ]


async def _judge_all(judge: Any, cases: Sequence[Context], concurrency: int) -> list[Judgment]:
    gate = asyncio.Semaphore(concurrency)

    async def one(context: Context) -> Judgment:
        async with gate:
            result: Judgment = await judge(context)
            return result

    return await asyncio.gather(*(one(c) for c in cases))


def _timed(judge: Any, cases: Sequence[Context], concurrency: int) -> tuple[list[Judgment], float, float]:
    async def run() -> tuple[list[Judgment], float, float]:
        cpu, wall = time.process_time(), time.perf_counter()
        judgments = await _judge_all(judge, cases, concurrency)
        return judgments, time.process_time() - cpu, time.perf_counter() - wall

    return asyncio.run(run())


def _start_stub() -> tuple[subprocess.Popen[str], str]:
    command = [sys.executable, "-m", "jurybox.stubs", "openai", "--reply", VERDICT, "--stats"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    if not url:
        process.kill()
        raise SystemExit(f"the stub server did not start: {process.stderr.read() if process.stderr else ''}")
    return process, url


def _stop_stub(process: subprocess.Popen[str]) -> dict[str, Any]:
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=10)
    for line in reversed(err.splitlines()):
        if line.startswith("{"):
            stats: dict[str, Any] = json.loads(line)
            return stats
    raise SystemExit(f"the stub server printed no stats: {err}")


def _check(judgments: Sequence[Judgment]) -> None:
    bad = [j for j in judgments if j.status is not Status.PASS]
    if bad:
        raise SystemExit(f"{len(bad)} judgment(s) did not pass; first: {bad[0].status.value}: {bad[0].reasoning}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument(
        "--http-transport",
        choices=("auto", "aiohttp", "httpx"),
        default="auto",
        help="the openai SDK's HTTP transport (auto: aiohttp when installed, else httpx)",
    )
    args = parser.parse_args()
    os.environ.pop("JURYBOX_NO_CACHE", None)
    cases = _cases(args.cases)

    stub, url = _start_stub()
    try:
        with tempfile.TemporaryDirectory() as folder:
            model = get_model(
                "openai:gpt-4o-mini",
                base_url=url,
                api_key="benchmark",
                cache_path=Path(folder) / "responses.sqlite3",
                concurrency=args.concurrency,
                http_transport=args.http_transport,
            )
            judge = correctness(model=model)
            # Warm up imports and the connection pool outside the timed runs (a case not in the set).
            _timed(correctness(model=model), [Context(input="warm-up", output="warm-up", expected="warm-up")], 1)
            cold, cold_cpu, cold_wall = _timed(judge, cases, args.concurrency)
            warm, warm_cpu, warm_wall = _timed(judge, cases, args.concurrency)
    finally:
        stats = _stop_stub(stub)
    _check(cold)
    _check(warm)

    layer_judge = correctness(model=FakeModel(VERDICT))
    _timed(layer_judge, cases[:10], 1)
    layer, layer_cpu, _ = _timed(layer_judge, cases, args.concurrency)
    _check(layer)

    n = len(cases)
    cold_calls = sum(1 for j in cold if not j.metadata.get("cached"))
    hits = sum(1 for j in warm if j.metadata.get("cached"))
    repeat_calls = stats["requests"] - 1 - cold_calls  # minus the warm-up and the cold run's requests
    transport = getattr(model, "http_transport", args.http_transport)
    print(f"cases: {n}, concurrency: {args.concurrency}, stub: {url} (separate process), transport: {transport}")
    print(f"cold run   : {n} judged calls, {cold_calls} HTTP requests to the stub")
    print(f"             CPU {cold_cpu * 1000 / n:.3f} ms/call (judge + model client + HTTP), wall {cold_wall:.2f} s")
    print(f"repeat run : cache hit rate {hits / n:.1%}, model calls {repeat_calls}")
    print(f"             CPU {warm_cpu * 1000 / n:.3f} ms/call (judge layer + cache lookup), wall {warm_wall:.2f} s")
    print(f"judge layer: CPU {layer_cpu * 1000 / n:.3f} ms/call (template + parse + bookkeeping, instant model)")
    ok = hits == n and repeat_calls == 0
    print("cache target (100% hits, 0 calls):", "met" if ok else "NOT met")
    if not ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
