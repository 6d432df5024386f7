"""``jurybox serve --otlp`` as a real server: the SDK's own OTLP exporter sends to it, and a kill -9
after the 2xx loses nothing (the restarted server judges what the killed one had queued)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace.export import SpanExportResult
from otel_exports import genai_agent, openinference_agent, record

from jurybox.store import open_store

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _counts(base: str) -> dict[str, object]:
    with urllib.request.urlopen(f"{base}/api/otlp", timeout=5) as answer:
        return dict(json.loads(answer.read()))


@contextmanager
def serving(store_url: str, judges: Path, port: int) -> Iterator[subprocess.Popen[bytes]]:
    command = [sys.executable, "-m", "jurybox", "serve", "--store", store_url, "--port", str(port)]
    command += ["--otlp", "--otlp-judges", str(judges), "--otlp-suite", "travel"]
    server = subprocess.Popen(command, env=os.environ.copy(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                _counts(base)
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    pytest.fail("jurybox serve did not start")
                time.sleep(0.2)
        yield server
    finally:
        if server.poll() is None:
            server.terminate()
            server.wait(timeout=30)


def test_the_sdk_exporter_sends_and_a_kill_after_the_2xx_loses_nothing(tmp_path: Path) -> None:
    store_url = f"sqlite:///{tmp_path / 'store.db'}"
    with open_store(store_url) as store:
        token = store.users.add_user("collector", "ingest")
    judges = tmp_path / "judges.yaml"
    judges.write_text("judges:\n  - contains: {text: EUR}\n")
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    with serving(store_url, judges, port) as server:
        exporter = OTLPSpanExporter(endpoint=f"{base}/v1/traces", headers={"Authorization": f"Bearer {token}"})
        assert exporter.export(record(genai_agent, openinference_agent)) is SpanExportResult.SUCCESS
        exporter.shutdown()
        assert _counts(base)["queued"] == 2  # in the store before the 2xx; judged 5 s after the last part
        server.send_signal(signal.SIGKILL)
        server.wait(timeout=30)
    with serving(store_url, judges, port):
        deadline = time.monotonic() + 60
        while _counts(base)["queued"] and time.monotonic() < deadline:
            time.sleep(0.5)
        assert _counts(base)["queued"] == 0
    with open_store(store_url) as store:
        [run] = store.runs.newest("travel")
        assert sorted(r.status.value for r in store.results.read_all(run.id)) == ["fail", "pass"]
