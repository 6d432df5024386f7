"""``jurybox run`` says how many judge calls came from the cache; ``--no-cache`` and ``--refresh-cache``.

A run whose judge server is down but whose every judge reply is cached passes (the check
before the run finds the cache holds replies), and says how many calls the cache answered;
a call it cannot answer is an ERROR at once.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jurybox.cli import app
from jurybox.stubs import StubServer

SUITE = """\
name: cache-demo
agent: {{python: "echo_agent:respond"}}
judge_model: "openai:m@{url}"
cases:
  - name: one
    prompt: "Paris is the capital of France."
    judges: [{{correctness: {{reference: "Paris"}}}}]
  - name: two
    prompt: "Rome is the capital of Italy."
    judges: [{{correctness: {{reference: "Rome"}}}}]
"""
VERDICT = '{"score": 0.9, "reasoning": "matches the reference"}'
runner = CliRunner()


@pytest.fixture(autouse=True)
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name in ("JURYBOX_JUDGE_MODEL", "JURYBOX_CACHE", "JURYBOX_CACHE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("JURYBOX_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    (tmp_path / "echo_agent.py").write_text("def respond(message, session_id):\n    return message\n")
    return tmp_path


def run(suite: Path, *options: str) -> tuple[int, str]:
    # --run sets the cache switch in the environment for its worker processes: keep it to this call.
    before = os.environ.get("JURYBOX_CACHE")
    try:
        result = runner.invoke(
            app, ["run", str(suite), "--no-store", "--no-progress", *options], env={"COLUMNS": "200"}
        )
    finally:
        if before is None:
            os.environ.pop("JURYBOX_CACHE", None)
        else:
            os.environ["JURYBOX_CACHE"] = before
    return result.exit_code, " ".join(result.output.replace("│", " ").split())


def posts(stub: StubServer) -> int:
    return sum(1 for request in stub.requests if request.method == "POST")


def test_cache_hits_are_counted_and_the_flags_decide_what_is_asked(folder: Path) -> None:
    with StubServer("openai", reply=VERDICT) as stub:
        suite = folder / "suite.yaml"
        suite.write_text(SUITE.format(url=stub.base_url))
        code, out = run(suite)
        assert code == 0, out
        assert posts(stub) == 2 and "judge calls 2 (0 from cache)" in out
        code, out = run(suite)
        assert code == 0 and posts(stub) == 2, out
        assert "judge calls 2 (2 from cache)" in out
        assert "every judge call (2) was answered from the response cache" in out
        code, out = run(suite, "--no-cache")
        assert code == 0 and posts(stub) == 4, out
        assert "judge calls 2 (0 from cache)" in out
        code, out = run(suite, "--refresh-cache")
        assert code == 0 and posts(stub) == 6, out
        assert "judge calls 2 (0 from cache)" in out
        url = stub.base_url
    # The server is gone: the check before the run finds the cache holds replies, and the run goes on from it.
    code, out = run(suite)
    assert code == 0, out
    assert f"note: judge server {url} unreachable (connection refused): running on the response cache" in out
    assert "judge calls 2 (2 from cache)" in out and "the judge model was not asked" in out
    assert (
        f"judge server {url} unreachable (connection refused); 2 of 2 judge call(s) answered from the response cache"
        in out
    )
    code, out = run(suite, "--no-preflight")
    assert code == 0, out
    assert "judge calls 2 (2 from cache)" in out


def test_a_call_the_cache_cannot_answer_with_the_server_down_is_an_error_at_once(folder: Path) -> None:
    suite = folder / "suite.yaml"
    with StubServer("openai", reply=VERDICT) as stub:
        suite.write_text(SUITE.format(url=stub.base_url))
        assert run(suite)[0] == 0
        url = stub.base_url
    suite.write_text(
        SUITE.format(url=url)
        + '  - name: three\n    prompt: "Bern."\n    judges: [{correctness: {reference: "Bern"}}]\n'
    )
    started = time.perf_counter()
    code, out = run(suite, "-v")
    assert time.perf_counter() - started < 5  # no retries with back-off for the miss
    assert code == 1, out  # ERROR, never a pass
    assert f"connection refused at {url} (not in the response cache; checked once before the run)" in out
    assert "2 of 3 judge call(s) answered from the response cache" in out
    # Nothing the cache may answer: the run stops before the first case, as it always did.
    code, out = run(suite, "--no-cache")
    assert code == 2 and f"connection refused at {url}" in out, out
    assert "stood in for by the response cache only when the cache is on and holds replies" in out


def test_no_cache_and_refresh_cache_contradict(folder: Path) -> None:
    suite = folder / "suite.yaml"
    suite.write_text(SUITE.format(url="http://127.0.0.1:9/v1"))
    code, out = run(suite, "--no-cache", "--refresh-cache")
    assert code == 2
    assert out == "error: --no-cache and --refresh-cache contradict each other: give one"
