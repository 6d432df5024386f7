"""``capture: otel``: a Python agent's tool calls and usage read from its own spans, per call."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jurybox.agents import make_target
from jurybox.cli import app
from jurybox.store import open_store

HERE = Path(__file__).parent


@pytest.mark.parametrize("reference", ["otel_agent:respond", "otel_agent:respond_async"])
async def test_each_call_gets_the_tool_calls_of_its_own_spans(reference: str) -> None:
    target = make_target({"python": reference, "capture": "otel"}, base_dir=HERE)
    cities = [f"City{i}" for i in range(12)]
    replies = await asyncio.gather(*(target.respond(f"A hotel in {city}?", f"s{i}") for i, city in enumerate(cities)))
    for city, reply in zip(cities, replies, strict=True):
        assert reply.text == f"Hotel {city} at 80 EUR"
        [call] = reply.tool_calls
        assert (call.name, dict(call.arguments)) == ("search_hotels", {"city": city})
        assert call.result == [{"name": f"Hotel {city}", "price": 80}]
        assert reply.usage["input_tokens"] == 40 and reply.usage["output_tokens"] == 8
    await target.aclose()


async def test_without_capture_the_spans_are_not_read() -> None:
    target = make_target({"python": "otel_agent:respond"}, base_dir=HERE)
    reply = await target.respond("A hotel in Oslo?", "s")
    assert reply.tool_calls == ()
    await target.aclose()


def test_a_bad_capture_value_is_a_config_error() -> None:
    from jurybox.agents import TargetConfigError

    with pytest.raises(TargetConfigError, match=r"agent\.capture"):
        make_target({"python": "otel_agent:respond", "capture": "spans"}, base_dir=HERE)


def test_a_suite_judges_the_captured_tool_calls(tmp_path: Path) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        f"""
name: captured
agent: {{python: "{HERE / "otel_agent.py"}:respond", capture: otel}}
cases:
  - name: lisbon
    prompt: "A hotel in Lisbon?"
    expect_tools: {{calls: [{{name: search_hotels, arguments: {{city: Lisbon}}}}]}}
  - name: wrong city
    prompt: "A hotel in Rome?"
    expect_tools: {{calls: [{{name: search_hotels, arguments: {{city: Lisbon}}}}]}}
"""
    )
    store = f"sqlite:///{tmp_path / 's.db'}"
    result = CliRunner().invoke(app, ["run", str(suite), "--store", store])
    assert result.exit_code == 1, result.output  # Rome is not Lisbon: the arguments came from the spans
    with open_store(store) as opened:
        run = opened.runs.latest("captured")
        assert run is not None
        records = {r.case: r for r in opened.results.read_all(run.id)}
    assert records["lisbon"].status.value == "pass"
    assert records["wrong city"].status.value == "fail"
