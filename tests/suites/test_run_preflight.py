"""``jurybox run`` checks every model server once before the first case, and stops at once when one fails."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from suite_helpers import grading_model
from typer.testing import CliRunner

from jurybox._cli.run import EXIT_USAGE
from jurybox.cli import app
from jurybox.runs import preflight_targets
from jurybox.stubs import StubServer
from jurybox.suites import load_suite

SUITE = """\
name: preflight-demo
agent: {{python: "echo_agent:respond"}}
judge_model: "{model}"
cases:
  - name: one
    prompt: hi
    judges: [{{contains: hi}}, {{correctness: {{reference: hi}}}}]
"""


@pytest.fixture
def make_suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[str], Path]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JURYBOX_JUDGE_MODEL", raising=False)
    monkeypatch.setenv("JURYBOX_CACHE", "off")
    (tmp_path / "echo_agent.py").write_text("def respond(message, session_id):\n    return message\n")

    def make(model: str) -> Path:
        path = tmp_path / "suite.yaml"
        path.write_text(SUITE.format(model=model))
        return path

    return make


def test_an_unreachable_judge_stops_the_run_within_two_seconds_naming_the_url(
    make_suite: Callable[[str], Path], closed_port: int
) -> None:
    url = f"http://127.0.0.1:{closed_port}/v1"
    suite = make_suite(f"openai:m@{url}")

    started = time.perf_counter()
    result = CliRunner().invoke(app, ["run", str(suite), "--no-store"])
    elapsed = time.perf_counter() - started

    assert result.exit_code == EXIT_USAGE, result.output
    assert elapsed < 2.0  # without the check: 5 attempts with backoff, per case
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert errors == [f"error: judge model openai:m: connection refused at {url}: is the server running?"]
    assert "Traceback" not in result.output and "ClientConnectorError" not in result.output


def test_the_command_itself_says_it_in_one_line_and_exit_code_2(
    make_suite: Callable[[str], Path], closed_port: int
) -> None:
    url = f"http://127.0.0.1:{closed_port}/v1"
    suite = make_suite(f"openai:m@{url}")
    done = subprocess.run(
        [sys.executable, "-m", "jurybox", "run", str(suite), "--no-store"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == EXIT_USAGE
    assert f"error: judge model openai:m: connection refused at {url}: is the server running?" in done.stderr
    assert done.stdout == ""  # no report: no case ran


def test_a_refused_key_stops_the_run_naming_the_variable(
    make_suite: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-valid")
    with StubServer("openai", reply="ok") as stub:
        stub.fail(401, times=1)
        suite = make_suite(f"openai:m@{stub.base_url}")
        result = CliRunner().invoke(app, ["run", str(suite), "--no-store"])
        url = stub.base_url
        judge_calls = [r for r in stub.requests if r.method == "POST"]
    assert result.exit_code == EXIT_USAGE
    assert f"error: judge model openai:m: 401 Unauthorized at {url}: check OPENAI_API_KEY" in result.output
    assert "sk-not-valid" not in result.output
    assert judge_calls == []


def test_no_preflight_skips_the_check_and_the_case_reports_one_line(
    make_suite: Callable[[str], Path], closed_port: int
) -> None:
    url = f"http://127.0.0.1:{closed_port}/v1"
    suite = make_suite(f"openai:m@{url}")
    result = CliRunner().invoke(
        app, ["run", str(suite), "--no-store", "--no-preflight", "--judge-retries", "0", "-f", "json", "-o", "-"]
    )
    assert result.exit_code == 1, result.output
    assert f"judge model openai:m failed: connection refused at {url}: is the server running?" in result.output


def test_the_header_shows_the_server_without_its_password(make_suite: Callable[[str], Path]) -> None:
    suite = make_suite("openai:gpt-4o-mini@http://me:hunter2@127.0.0.1:9/v1")
    result = CliRunner().invoke(app, ["run", str(suite), "--dry-run"])
    assert result.exit_code == 0, result.output
    flat = " ".join(result.output.split())
    assert "Judge model: openai:gpt-4o-mini at http://127.0.0.1:9/v1;" in flat
    assert "hunter2" not in result.output


def test_a_dry_run_with_an_unpriced_model_says_what_is_known(make_suite: Callable[[str], Path]) -> None:
    suite = make_suite("openai:my-finetune@http://127.0.0.1:9/v1")
    result = CliRunner().invoke(app, ["run", str(suite), "--dry-run"])
    flat = " ".join(result.output.split())
    assert "unknown price" not in flat
    assert "judge calls: 0-3; price unknown for openai:my-finetune: add it to [tool.jurybox.prices]" in flat


def test_models_without_a_server_and_offline_suites_are_not_checked(
    make_suite: Callable[[str], Path], tmp_path: Path
) -> None:
    suite_file = make_suite("openai:m@http://127.0.0.1:9/v1")
    assert [t.label for t in preflight_targets(load_suite(suite_file))] == ["judge model openai:m"]
    assert preflight_targets(load_suite(suite_file, judge_model=grading_model())) == []
    offline = tmp_path / "offline.yaml"
    offline.write_text(SUITE.replace('judge_model: "{model}"\n', "").format())
    assert preflight_targets(load_suite(offline)) == []


def test_an_openai_agent_endpoint_is_checked_too(tmp_path: Path, closed_port: int) -> None:
    path = tmp_path / "agent.yaml"
    url = f"http://127.0.0.1:{closed_port}/v1"
    path.write_text(
        f'name: a\nagent: {{openai: {{model: bot, base_url: "{url}"}}}}\n'
        "cases:\n  - name: one\n    prompt: hi\n    judges: [{contains: hi}]\n"
    )
    (target,) = preflight_targets(load_suite(path))
    assert target.label == "agent endpoint (model bot)" and target.check_url == f"{url}/models"
