"""``jurybox run`` with a judge fleet: the suite's mapping form, --judge-endpoint, per-endpoint counts in reports."""

from __future__ import annotations

import io
import json
import os
import secrets
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console
from suite_helpers import TOY_HEADER, stub_reply
from typer.testing import CliRunner

from jurybox._cli.run import EXIT_OK, RunRequest, execute
from jurybox.cli import app
from jurybox.models import CACHE_URL_ENV, FleetModel, open_cache
from jurybox.stubs import StubServer
from jurybox.suites import load_suite

CASES = "".join(f"  - name: c{i}\n    prompt: listings\n    criteria: lists the properties ({i})\n" for i in range(6))


@pytest.fixture
def quiet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JURYBOX_JUDGE_MODEL", raising=False)
    monkeypatch.setenv("JURYBOX_CACHE", "off")
    return tmp_path


def test_a_suite_judged_by_a_fleet_reports_calls_per_endpoint(toy_suite: Callable[..., Path], quiet: Path) -> None:
    with StubServer("openai", stub_reply) as first, StubServer("openai", stub_reply) as second:
        urls = [first.base_url, second.base_url]
        fleet = f"judge_model: {{model: judge, endpoints: [{urls[0]}, {urls[1]}]}}\n"
        suite = toy_suite(TOY_HEADER + fleet + "cases:\n" + CASES)
        assert isinstance(load_suite(suite, check_agent=False).model.model, FleetModel)
        out, err = io.StringIO(), io.StringIO()
        request = RunRequest(suites=(suite,), formats=("console", "json"), output=str(quiet), no_store=True)
        code = execute(request, console=Console(file=out, width=250), status=Console(file=err, width=250))
        served = [sum(r.method == "POST" for r in stub.requests) for stub in (first, second)]

    assert code == EXIT_OK, out.getvalue() + err.getvalue()
    data = json.loads((quiet / "toy.json").read_text())
    calls = data["totals"]["calls"]
    per_endpoint = {url: calls[f"judge@{url}"] for url in urls}
    assert per_endpoint == {url: {"calls": count, "errors": 0} for url, count in zip(urls, served, strict=True)}
    assert sum(served) == data["totals"]["judge_calls"] and min(served) > 0  # both took a share
    assert data["judge_model"] == "openai:judge"
    assert f"judge endpoints: {min(urls)} " in out.getvalue()


def test_a_bad_fleet_in_a_suite_names_the_file_line_and_field(toy_suite: Callable[..., Path], quiet: Path) -> None:
    suite = toy_suite(TOY_HEADER + "judge_model: {model: judge, endpoint: [http://a/v1]}\ncases:\n" + CASES)
    err = io.StringIO()
    code = execute(RunRequest(suites=(suite,), no_store=True), status=Console(file=err, width=250))
    assert code == 2
    assert "judge_model" in err.getvalue() and "unknown field 'endpoint'" in err.getvalue()


def test_judge_endpoint_options_make_a_fleet_and_need_a_model(toy_suite: Callable[..., Path], quiet: Path) -> None:
    suite = toy_suite(TOY_HEADER + "cases:\n" + CASES)
    runner = CliRunner()
    missing = runner.invoke(app, ["run", str(suite), "--judge-endpoint", "http://127.0.0.1:9/v1", "--dry-run"])
    assert missing.exit_code == 2
    assert "--judge-endpoint needs --judge-model" in missing.output
    planned = runner.invoke(
        app,
        [
            "run", str(suite), "--dry-run", "--judge-model", "judge",
            "--judge-endpoint", "http://127.0.0.1:9/v1", "--judge-endpoint", "http://127.0.0.1:10/v1",
        ],
    )  # fmt: skip
    assert planned.exit_code == 0, planned.output
    assert "llm_judge" in planned.output


def _redis_or_skip() -> str:
    redis = pytest.importorskip("redis")
    url = "redis://127.0.0.1:6379/0"
    try:
        redis.Redis.from_url(url, socket_connect_timeout=2).ping()
    except redis.RedisError as error:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"Redis at {url} is unreachable: {error}")
        pytest.skip(f"Redis at {url} is unreachable: {error}")
    return f"{url}?prefix=jbx_run_{os.getpid()}_{secrets.token_hex(3)}:"


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def test_a_repeated_run_with_a_shared_cache_makes_no_judge_call(
    backend: str, toy_suite: Callable[..., Path], quiet: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = str(quiet / "shared.sqlite3") if backend == "sqlite" else _redis_or_skip()
    monkeypatch.delenv("JURYBOX_CACHE")
    monkeypatch.setenv(CACHE_URL_ENV, "unused")  # restored after the test: --cache sets it for the run's processes
    suite = toy_suite(TOY_HEADER + "cases:\n" + CASES)
    with StubServer("openai", stub_reply) as stub:
        command = ["run", str(suite), "--no-store", "--judge-model", f"openai:judge@{stub.base_url}", "--cache", cache]
        first = CliRunner().invoke(app, command)
        after_first = sum(r.method == "POST" for r in stub.requests)
        second = CliRunner().invoke(app, command)
        after_second = sum(r.method == "POST" for r in stub.requests)
    assert first.exit_code == EXIT_OK and second.exit_code == EXIT_OK, first.output + second.output
    assert after_first >= 6 and after_second == after_first  # the second run was answered from the cache
    if backend == "redis":
        assert open_cache(cache).clear() >= 1


def test_an_unreachable_cache_is_a_usage_error_before_anything_runs(
    toy_suite: Callable[..., Path], quiet: Path
) -> None:
    suite = toy_suite(TOY_HEADER + "cases:\n" + CASES)
    result = CliRunner().invoke(app, ["run", str(suite), "--no-store", "--cache", "redis://127.0.0.1:9/0"])
    assert result.exit_code == 2
    assert "cannot use the response cache at redis://127.0.0.1:9/0" in result.output
