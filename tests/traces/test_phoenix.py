"""Judgments sent to a real Arize Phoenix (started here on 127.0.0.1) and read back through its REST API.

Phoenix is a server of its own, with dependencies of its own: ``bash scripts/phoenix.sh`` installs
the pinned version into ``.phoenix/`` (``scripts/test.sh``, hence CI, does so and sets
``JURYBOX_PHOENIX``); point ``JURYBOX_PHOENIX`` at a ``phoenix`` command or put one on PATH to run
it by hand. Without one this test is skipped.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from otel_exports import genai_agent, openinference_agent, record, write_json_lines
from typer.testing import CliRunner

from jurybox.cli import app

PHOENIX = os.environ.get("JURYBOX_PHOENIX") or shutil.which("phoenix")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(PHOENIX is None, reason="no phoenix command (set JURYBOX_PHOENIX)"),
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _get(url: str) -> dict[str, object]:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return dict(json.loads(answer.read()))


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port, grpc = _free_port(), _free_port()
    folder = tmp_path_factory.mktemp("phoenix")
    env = {
        **os.environ,
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(grpc),
        "PHOENIX_WORKING_DIR": str(folder),
    }
    assert PHOENIX is not None
    server = subprocess.Popen([PHOENIX, "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                _get(f"{base}/v1/projects")
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    pytest.fail("phoenix did not start")
                time.sleep(1)
        yield base
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_phoenix_shows_each_judgment_with_its_evaluation_attributes(phoenix: str, tmp_path: Path) -> None:
    export = write_json_lines(tmp_path / "traces.jsonl", [record(genai_agent, openinference_agent)])
    judges = tmp_path / "judges.yaml"
    judges.write_text("judges:\n  - tool_calls: {expected: [search_hotels]}\n  - contains: {text: EUR}\n")
    result = CliRunner().invoke(app, ["judge-traces", str(export), "--judges", str(judges), "--otel-endpoint", phoenix])
    assert result.exit_code == 1, result.output
    deadline = time.monotonic() + 60
    spans: list[dict[str, object]] = []
    while time.monotonic() < deadline:
        try:
            spans = list(_get(f"{phoenix}/v1/projects/jurybox/spans?limit=200")["data"])  # type: ignore[call-overload]
        except OSError:
            spans = []
        if sum(str(s["name"]).startswith("jurybox case") for s in spans) == 2:
            break
        time.sleep(1)
    evaluations = [s for s in spans if s["span_kind"] == "EVALUATOR"]
    found = {
        (attributes["gen_ai.evaluation.name"], attributes["gen_ai.evaluation.score.label"])
        for attributes in (dict(s["attributes"]) for s in evaluations)  # type: ignore[call-overload]
    }
    assert ("contains('EUR')", "pass") in found and ("contains('EUR')", "fail") in found
    assert ("tool_calls[strict](search_hotels)", "fail") in found
    runs = [s for s in spans if str(s["name"]).startswith("jurybox run")]
    assert len(runs) == 1 and dict(runs[0]["attributes"])["jurybox.run.cases"] == 2  # type: ignore[call-overload]
