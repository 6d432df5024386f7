"""Honest accounting under faults: requests, retries and failures counted for agent and judge; empty replies retried."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from rich.console import Console

from jurybox.models import MeteredModel, RetryPolicy, ServerError, get_model, start_case_spend
from jurybox.report import RunReport, render_console
from jurybox.stubs import StubServer
from jurybox.suites import load_suite, resolve_judge_model

VERDICT = json.dumps({"score": 0.9, "reasoning": "fine"})


async def _no_sleep(_seconds: float) -> None:
    return None


@pytest.mark.parametrize("provider", ["openai", "anthropic", "ollama"])
def test_an_empty_200_reply_is_retried_like_a_5xx(provider: str) -> None:
    with StubServer(provider, reply="ok") as stub:
        stub.fail(200, body="", times=1)
        key = {} if provider == "ollama" else {"api_key": "test"}
        model = get_model(
            f"{provider}:m", base_url=stub.base_url, cache=False, retry=RetryPolicy(sleep=_no_sleep), **key
        )
        response = asyncio.run(model.generate([{"role": "user", "content": "hi"}]))
        assert response.text == "ok"
        assert response.attempts == 2
        assert len(stub.requests) == 2


def test_the_meter_counts_every_request_retry_and_failure() -> None:
    async def calls(metered: MeteredModel, stub: StubServer) -> tuple[int, int]:
        spend = start_case_spend()
        stub.fail(503, times=2)
        await metered.generate([{"role": "user", "content": "a"}])  # two 503s, then a reply
        stub.fail(503, times=3)
        with pytest.raises(ServerError):
            await metered.generate([{"role": "user", "content": "b"}])  # 503 until the retries run out
        return spend.calls, spend.failures

    with StubServer("openai", reply=VERDICT) as stub:
        policy = RetryPolicy(max_retries=2, sleep=_no_sleep)
        metered = MeteredModel(get_model("openai:m", base_url=stub.base_url, api_key="t", cache=False, retry=policy))
        case_calls, case_failures = asyncio.run(calls(metered, stub))
        assert len(stub.requests) == 6
    total = metered.total
    assert (total.calls, total.attempts, total.retries, total.failures) == (2, 6, 4, 1)
    assert (case_calls, case_failures) == (2, 1)
    assert total.accounting() == {"calls": 2, "attempts": 6, "retries": 4, "failures": 1, "cache_hits": 0}


def test_judge_timeout_and_retries_come_from_the_suite_and_the_command_line(tmp_path: Path) -> None:
    (tmp_path / "toy.py").write_text("def agent(message, session_id):\n    return 'ok'\n", encoding="utf-8")
    suite = tmp_path / "s.yaml"
    suite.write_text(
        "name: s\nagent: {python: toy:agent, kind: function}\n"
        "judge_model: openai:m@http://127.0.0.1:9/v1\njudge_timeout: 7\njudge_retries: 1\n"
        "cases:\n  - name: a\n    prompt: hi\n    criteria: says hi\n",
        encoding="utf-8",
    )
    from_file = load_suite(suite, check_agent=False).model
    assert (from_file.timeout, from_file.retry.max_retries) == (7.0, 1)
    from_cli = load_suite(suite, check_agent=False, judge_timeout=2.5, judge_retries=0).model
    assert (from_cli.timeout, from_cli.retry.max_retries) == (2.5, 0)
    default = resolve_judge_model("openai:m@http://127.0.0.1:9/v1")
    assert default is not None and default is not from_file.model


def test_reports_show_attempts_retries_and_failures_per_kind(tmp_path: Path) -> None:
    from jurybox.core import CaseRecord, Judgment

    calls = {
        "agent": {"attempts": 3, "retries": 2, "failures": 2},
        "judge": {"calls": 4, "attempts": 9, "retries": 5, "failures": 1},
    }
    records = [
        CaseRecord(case=f"c{i}", judgment=Judgment.passed(1.0, "ok"), judge_calls=4, metadata={"calls": calls})
        for i in range(2)
    ]
    report = RunReport(suite="s", run_id="r", records=tuple(records))
    assert report.totals.calls["judge"] == {"calls": 8, "attempts": 18, "retries": 10, "failures": 2}
    console = Console(record=True, width=300)
    render_console(report, console)
    text = console.export_text()
    assert "judge calls 8 (18 attempts, 10 retries, 2 failed)" in text
    assert "agent (6 attempts, 4 retries, 4 failed)" in text
