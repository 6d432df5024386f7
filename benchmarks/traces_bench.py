"""Traces in and out: how fast exports are read, how many traces the receiver takes, what the exporter costs.

Targets (issue 31): reading a 100 MB OTLP/JSON export in flat memory (under 300 MB) at
20 MB/s or more on one core; the receiver taking 1,000 small traces a second on one core;
the exporter adding under 5% to a run's CPU.

1. read: writes an OTLP/JSON export of agent traces (one export request a line, 50 traces a
   request, four spans a trace with messages and a tool call, as the Collector's file exporter
   writes them) of ``--mb`` megabytes, then reads it into Contexts in a child process and
   prints MB/s of CPU (the child's process time: what one core takes) and of wall time,
   traces/s and the child's peak RSS.
2. receive: starts ``jurybox serve --otlp`` as it runs (uvicorn, one process, 127.0.0.1, a
   SQLite store, a deterministic judge, the worker polling but settling for an hour so it judges
   nothing meanwhile) and posts ``--requests`` protobuf bodies of one trace each to ``/v1/traces``
   from another process over ``--connections`` connections at once (aiohttp); prints traces/s and
   the server's CPU per trace (a request is answered once its trace is committed to the store's
   queue, so concurrent requests share a transaction).
3. export: judges ``--cases`` Contexts with two deterministic judges, then sends their records
   through the OTLP exporter (its HTTP client replaced by one that takes the bytes: the spans
   are built, batched and encoded for the wire) and prints the exporter's CPU per case beside
   the judging's, and its share of both.

    .venv/bin/python benchmarks/traces_bench.py --mb 100 --requests 2000 --cases 10000
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def _value(value: Any) -> dict[str, Any]:
    if isinstance(value, int):
        return {"intValue": str(value)}
    return {"stringValue": str(value)}


def _span(trace: str, span: str, parent: str | None, name: str, start: int, attrs: dict[str, Any]) -> dict[str, Any]:
    data = {
        "traceId": trace,
        "spanId": span,
        "name": name,
        "kind": 1,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 1_000_000),
        "attributes": [{"key": k, "value": _value(v)} for k, v in attrs.items()],
        "status": {},
    }
    if parent:
        data["parentSpanId"] = parent
    return data


def agent_trace(number: int) -> list[dict[str, Any]]:
    trace = f"{number:032x}"
    root, chat, tool, chat2 = (f"{number * 4 + i + 1:016x}" for i in range(4))
    question = f"Find me a hotel in city {number} for two nights, close to the old town and the river."
    user = json.dumps([{"role": "user", "parts": [{"type": "text", "content": question}]}])
    answer = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": f"Casa {number} costs 95 EUR."}]}])
    start = 1_700_000_000_000_000_000 + number * 10_000_000
    return [
        _span(
            trace,
            chat,
            root,
            "chat gpt-4o-mini",
            start + 1,
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "gpt-4o-mini",
                "gen_ai.usage.input_tokens": 120,
                "gen_ai.usage.output_tokens": 20,
                "gen_ai.input.messages": user,
            },
        ),
        _span(
            trace,
            tool,
            root,
            "execute_tool search_hotels",
            start + 2,
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "search_hotels",
                "gen_ai.tool.call.arguments": json.dumps({"city": f"city {number}", "nights": 2}),
                "gen_ai.tool.call.result": json.dumps([{"name": f"Casa {number}", "price": 95}]),
            },
        ),
        _span(
            trace,
            chat2,
            root,
            "chat gpt-4o-mini",
            start + 3,
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "gpt-4o-mini",
                "gen_ai.usage.input_tokens": 160,
                "gen_ai.usage.output_tokens": 30,
                "gen_ai.input.messages": user,
                "gen_ai.output.messages": answer,
            },
        ),
        _span(
            trace,
            root,
            None,
            "invoke_agent travel",
            start,
            {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.input.messages": user,
                "gen_ai.output.messages": answer,
            },
        ),
    ]


def request_of(spans: list[dict[str, Any]]) -> dict[str, Any]:
    resource_attrs = [{"key": "service.name", "value": {"stringValue": "travel-agent"}}]
    return {"resourceSpans": [{"resource": {"attributes": resource_attrs}, "scopeSpans": [{"spans": spans}]}]}


def write_export(path: Path, megabytes: float, per_request: int = 50) -> int:
    traces = 0
    target = int(megabytes * 2**20)
    with path.open("w", encoding="utf-8") as handle:
        while handle.tell() < target:
            spans = [span for i in range(per_request) for span in agent_trace(traces + i)]
            handle.write(json.dumps(request_of(spans), separators=(",", ":")) + "\n")
            traces += per_request
    return traces


def read_child(path: str) -> None:
    """Run in a child process: read the export, print the figures as JSON."""
    from jurybox.traces import ReadStats, _fast_json, read_traces

    stats = ReadStats()
    wall = time.perf_counter()
    started = time.process_time()
    tools = sum(len(context.tool_calls) for context in read_traces(path, stats=stats))
    cpu = time.process_time() - started
    wall = time.perf_counter() - wall
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    figures = {"cpu": cpu, "wall": wall, "contexts": stats.contexts, "spans": stats.spans, "tools": tools}
    print(json.dumps({**figures, "peak_mb": peak, "orjson": _fast_json.ACCELERATED}))


def bench_read(megabytes: float) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "traces.jsonl"
        traces = write_export(path, megabytes)
        size = path.stat().st_size / 2**20
        done = subprocess.run(
            [sys.executable, __file__, "--read-child", str(path)], capture_output=True, text=True, check=True
        )
        figures = json.loads(done.stdout)
    cpu = figures["cpu"]
    parser = "orjson" if figures["orjson"] else "json (no orjson)"
    print(f"read: {size:.1f} MB, {traces:,} traces, {figures['spans']:,} spans -> {figures['contexts']:,} contexts")
    print(
        f"read: {size / cpu:.1f} MB/s of CPU (one core; {size / figures['wall']:.1f} MB/s wall), "
        f"{figures['contexts'] / cpu:,.0f} traces/s of CPU; peak RSS {figures['peak_mb']:.0f} MB; {parser}"
    )


def _protobuf_bodies(requests: int) -> list[bytes]:
    """One ``ExportTraceServiceRequest`` of one agent trace per request, as the SDK's exporter sends it."""
    import base64

    from google.protobuf.json_format import ParseDict
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    bodies = []
    for number in range(requests):
        data = request_of(agent_trace(number))
        for span in data["resourceSpans"][0]["scopeSpans"][0]["spans"]:
            for key in ("traceId", "spanId", "parentSpanId"):
                if key in span:
                    span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
        bodies.append(ParseDict(data, ExportTraceServiceRequest()).SerializeToString())
    return bodies


def _cpu_seconds(pid: int) -> float:
    """User + system CPU of a process so far (Linux), its threads included."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def serve_child(url: str, port: int) -> None:
    """Run in a child process: ``jurybox serve --otlp`` as its command builds it (uvicorn, one process),
    with a deterministic judge and a settle time longer than the benchmark, so that the worker polls
    the queue as it does in production but judges nothing while the receiver is measured."""
    import uvicorn

    from jurybox._cli.serve import bind
    from jurybox.judges import contains
    from jurybox.web import OtlpSettings, create_app

    app = create_app(url, otlp=OtlpSettings(judges=[contains("EUR")], settle_seconds=3600))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", server_header=False))
    server.run(sockets=[bind("127.0.0.1", port)])


def post_child(url: str, token: str, bodies_file: str, connections: int) -> None:
    """Run in a child process: post every body with ``connections`` at once, print the figures as JSON."""
    import asyncio

    import aiohttp

    data = Path(bodies_file).read_bytes()
    bodies, at = [], 0
    while at < len(data):
        size = int.from_bytes(data[at : at + 4], "big")
        bodies.append(data[at + 4 : at + 4 + size])
        at += 4 + size
    headers = {"Content-Type": "application/x-protobuf", "Authorization": f"Bearer {token}"}

    async def post_all() -> dict[int, int]:
        statuses: dict[int, int] = {}
        queue = list(reversed(bodies))
        limit = aiohttp.TCPConnector(limit=connections)
        async with aiohttp.ClientSession(connector=limit) as session:

            async def sender() -> None:
                while queue:
                    body = queue.pop()
                    async with session.post(url, data=body, headers=headers) as answer:
                        await answer.read()
                        statuses[answer.status] = statuses.get(answer.status, 0) + 1

            await asyncio.gather(*(sender() for _ in range(connections)))
        return statuses

    wall = time.perf_counter()
    statuses = asyncio.run(post_all())
    print(json.dumps({"wall": time.perf_counter() - wall, "statuses": statuses}))


def bench_receive(requests: int, connections: int = 32) -> None:
    """``jurybox serve --otlp`` as it runs (uvicorn, one process, 127.0.0.1), posted to from another process."""
    import socket
    import urllib.request

    from jurybox.store import open_store

    bodies = _protobuf_bodies(requests + 1)
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{folder}/store.db"
        with open_store(url) as store:
            token = store.users.add_user("collector", "ingest")
        bodies_file = Path(folder) / "bodies.bin"
        bodies_file.write_bytes(b"".join(len(body).to_bytes(4, "big") + body for body in bodies[1:]))
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        command = [sys.executable, __file__, "--serve-child", url, str(port)]
        server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        target = f"http://127.0.0.1:{port}/v1/traces"
        try:
            deadline = time.monotonic() + 60
            while True:  # the first post also opens the store and looks the token up
                try:
                    warm = urllib.request.Request(target, data=bodies[0], method="POST")
                    warm.add_header("Content-Type", "application/x-protobuf")
                    warm.add_header("Authorization", f"Bearer {token}")
                    urllib.request.urlopen(warm, timeout=5).read()
                    break
                except OSError:
                    if time.monotonic() > deadline or server.poll() is not None:
                        raise SystemExit("jurybox serve --otlp did not start") from None
                    time.sleep(0.2)
            cpu = _cpu_seconds(server.pid)
            done = subprocess.run(
                [sys.executable, __file__, "--post-child", target, token, str(bodies_file), str(connections)],
                capture_output=True,
                text=True,
                check=True,
            )
            cpu = _cpu_seconds(server.pid) - cpu
        finally:
            server.terminate()
            server.wait(timeout=30)
        with open_store(url) as store:
            queued = store.trace_queue.size()
    figures = json.loads(done.stdout)
    sent, wall = len(bodies) - 1, figures["wall"]
    print(
        f"receive: {sent:,} one-trace requests, {connections} connections: {sent / wall:,.0f} traces/s wall; "
        f"server CPU {cpu / sent * 1e6:,.0f} us/trace ({sent / cpu:,.0f} traces/s of one core); "
        f"answers {figures['statuses']}; {queued:,} queue rows"
    )


def bench_export(cases: int) -> None:
    from jurybox.judges import contains, tool_calls
    from jurybox.traces import ReadStats, judge_traces
    from jurybox.traces._exporter import OtlpExporter  # the module measured

    class Sent:  # the OTLP/HTTP client's place: takes the request's bytes, sends nothing
        success = True

        def __init__(self) -> None:
            self.bytes = 0

        def export(self, data: bytes) -> Sent:
            self.bytes += len(data)
            return self

        def shutdown(self) -> None:
            pass

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "traces.jsonl"
        with path.open("w") as handle:
            for start in range(0, cases, 50):
                spans = [s for i in range(start, min(cases, start + 50)) for s in agent_trace(i)]
                handle.write(json.dumps(request_of(spans)) + "\n")
        cpu = time.process_time()
        records = judge_traces(path, [tool_calls(["search_hotels"]), contains("EUR")], stats=ReadStats())
        judging = time.process_time() - cpu
    exporter = OtlpExporter("http://127.0.0.1:4318")  # the real path: records -> spans -> protobuf bytes
    sent = exporter._otlp._client = Sent()
    cpu = time.process_time()  # the process's CPU: the sender thread's encoding counts too
    exporter.export_records(records, run_name="bench")
    exporter.close()
    exporting = time.process_time() - cpu
    print(
        f"export: {len(records):,} cases, {sent.bytes / len(records):,.0f} wire bytes/case; "
        f"read+judge {judging / len(records) * 1e6:,.0f} us/case, exporter {exporting / len(records) * 1e6:,.0f} "
        f"us/case ({exporting / judging:.1%} of read+judge CPU, {exporting / (judging + exporting):.1%} of the whole)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=100.0)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--only", choices=["read", "receive", "export"], help="run one part")
    parser.add_argument("--read-child", help=argparse.SUPPRESS)
    parser.add_argument("--post-child", nargs=4, help=argparse.SUPPRESS)
    parser.add_argument("--serve-child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.read_child:
        read_child(args.read_child)
        return
    if args.serve_child:
        serve_child(args.serve_child[0], int(args.serve_child[1]))
        return
    if args.post_child:
        url, token, bodies, connections = args.post_child
        post_child(url, token, bodies, int(connections))
        return
    os.environ.setdefault("PYTHONHASHSEED", "0")
    if args.only in (None, "read"):
        bench_read(args.mb)
    if args.only in (None, "receive"):
        bench_receive(args.requests, args.connections)
    if args.only in (None, "export"):
        bench_export(args.cases)


if __name__ == "__main__":
    main()
