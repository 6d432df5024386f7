"""Model layer under load: many judge calls through a stub provider in its own process.

Usage:
    .venv/bin/python benchmarks/models_stub_load.py [--provider openai] [--calls 10000]
        [--concurrency 256] [--latency 0.2] [--cache-calls 1000]

Prints: wall time and calls/s, client and stub CPU per call (on a shared 2-core machine the
run is CPU-bound, so wall time is far above the latency-bound ideal), TCP
connections the stub accepted (must be <= concurrency), the most requests in flight at
the stub, and a repeated run through the response cache (hit rate and model calls).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from jurybox.models import ProviderModel, UsageTracker, get_model


def start_stub(provider: str, latency: float) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "jurybox.stubs", provider, "--latency", str(latency), "--reply", '{"score": 1}'],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def process_cpu(pid: int) -> float | None:
    """CPU seconds a process used (Linux /proc), or None elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def stub_stats(base_url: str) -> dict[str, int]:
    root = base_url.removesuffix("/v1")
    data: dict[str, int] = httpx.get(f"{root}/_stub/stats", timeout=10).json()
    return data


async def load(provider: str, base_url: str, calls: int, concurrency: int) -> tuple[float, float]:
    model = get_model(f"{provider}:bench", base_url=base_url, concurrency=concurrency, cache=False)
    prompts = [[{"role": "user", "content": f"Judge case {i}."}] for i in range(calls)]
    cpu, wall = time.process_time(), time.perf_counter()
    await asyncio.gather(*(model.generate(p) for p in prompts))
    return time.perf_counter() - wall, time.process_time() - cpu


async def run_all(model: ProviderModel, prompts: list[list[dict[str, str]]]) -> None:
    await asyncio.gather(*(model.generate(p) for p in prompts))


def cached(provider: str, base_url: str, calls: int, concurrency: int, folder: Path) -> tuple[UsageTracker, int]:
    """Fill the cache, then repeat the same calls; returns the repeat's usage and the requests the stub saw."""
    model = get_model(f"{provider}:bench", base_url=base_url, concurrency=concurrency, cache_path=folder / "c.sqlite3")
    prompts = [[{"role": "user", "content": f"Cached case {i}."}] for i in range(calls)]
    asyncio.run(run_all(model, prompts))
    before = stub_stats(base_url)["requests"]
    tracker = UsageTracker()
    with tracker:
        asyncio.run(run_all(model, prompts))
    return tracker, stub_stats(base_url)["requests"] - before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--provider", default="openai", choices=["openai", "anthropic", "ollama"])
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=256)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--cache-calls", type=int, default=1_000)
    args = parser.parse_args()
    process, base_url = start_stub(args.provider, args.latency)
    try:
        before = stub_stats(base_url)  # this look-up itself opens one connection, subtracted below
        stub_cpu = process_cpu(process.pid)
        wall, cpu = asyncio.run(load(args.provider, base_url, args.calls, args.concurrency))
        stub_used = None if stub_cpu is None else (process_cpu(process.pid) or 0.0) - stub_cpu
        stats = stub_stats(base_url)
        stats["connections"] -= before["connections"] + 1
        ideal = args.calls / args.concurrency * args.latency
        print(f"{args.provider}: {args.calls} calls, concurrency {args.concurrency}, stub latency {args.latency} s")
        print(f"  wall {wall:.2f} s (ideal {ideal:.2f} s), {args.calls / wall:.0f} calls/s")
        print(f"  client CPU {cpu:.2f} s = {cpu / args.calls * 1000:.3f} ms per call (model layer + SDK + HTTP)")
        if stub_used is not None:
            print(f"  stub CPU {stub_used:.2f} s = {stub_used / args.calls * 1000:.3f} ms per call (uvicorn + h11)")
        print(
            f"  stub: {stats['requests']} requests, {stats['connections']} TCP connections from the model, "
            f"max {stats['max_in_flight']} in flight"
        )
        with tempfile.TemporaryDirectory() as folder:
            tracker, sent = cached(args.provider, base_url, args.cache_calls, args.concurrency, Path(folder))
        total = tracker.total
        rate = total.cache_hits / max(1, total.calls)  # a cache hit is a call too
        print(
            f"  cache: repeated run of {args.cache_calls} calls -> hit rate {rate:.0%}, "
            f"{total.attempts} model requests, {sent} requests reached the stub"
        )
    finally:
        process.terminate()
        process.wait(timeout=10)


if __name__ == "__main__":
    main()
