"""Cases that test an MCP server directly (``mcp_call``): no model, the server's answer is what the judges read."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from jurybox.core import Status
from jurybox.engine import RunOptions, SuiteRunner
from jurybox.suites import SuiteError, load_suite

pytest.importorskip("mcp")

SERVER = Path(__file__).parents[1] / "agents" / "mcp_rental_server.py"

SUITE = f"""
name: rentals-server
agent:
  mcp:
    command: {sys.executable}
    args: [{SERVER}]
cases:
  - name: rate-of-the-beach-house
    mcp_call: {{tool: nightly_rate, arguments: {{listing: Beach House}}}}
    judges:
      - contains: "$320"
      - tool_calls: {{expected: [{{name: nightly_rate, arguments: {{listing: Beach House}}}}]}}
  - name: a-stay-is-priced
    mcp_call: {{tool: quote, arguments: {{listing: Mountain Cabin, nights: 3}}}}
    judges: [{{equals: "$630"}}]
  - name: an-unknown-listing-is-an-error-the-judge-sees
    mcp_call: {{tool: nightly_rate, arguments: {{listing: Castle}}}}
    judges: [{{contains: "Error executing tool nightly_rate"}}]
  - name: the-server-offers-its-tools
    mcp_call: {{list_tools: true}}
    judges: [{{contains: {{text: [nightly_rate, quote], all: true}}}}]
  - name: a-wrong-expectation-fails
    mcp_call: {{tool: nightly_rate, arguments: {{listing: Beach House}}}}
    judges: [{{contains: "$999"}}]
"""


async def test_direct_calls_are_judged_like_any_answer(tmp_path: Path) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text(SUITE)
    suite = load_suite(path)
    result = await SuiteRunner(suite, RunOptions(concurrency=2)).run()
    statuses = {record.case: record.status for record in result.records}
    assert statuses == {
        "rate-of-the-beach-house": Status.PASS,
        "a-stay-is-priced": Status.PASS,
        "an-unknown-listing-is-an-error-the-judge-sees": Status.PASS,
        "the-server-offers-its-tools": Status.PASS,
        "a-wrong-expectation-fails": Status.FAIL,
    }
    first = next(r for r in result.records if r.case == "rate-of-the-beach-house")
    assert first.context is not None and first.context.output == "Beach House: $320 per night"
    [call] = first.context.tool_calls
    assert (call.name, dict(call.arguments)) == ("nightly_rate", {"listing": "Beach House"})
    assert first.rounds[0].prompt == 'mcp_call nightly_rate {"listing": "Beach House"}'
    broken = next(r for r in result.records if r.case == "an-unknown-listing-is-an-error-the-judge-sees")
    assert broken.context is not None and "error" in broken.context.tool_calls[0].result


def test_mcp_call_mistakes_name_the_line(tmp_path: Path) -> None:
    not_mcp = tmp_path / "not_mcp.yaml"
    not_mcp.write_text(
        "name: s\nagent: {python: 'builtins:print'}\ncases:\n"
        "  - name: not-an-mcp-agent\n    mcp_call: {tool: t}\n    judges: [{contains: x}]\n"
    )
    with pytest.raises(SuiteError) as raised:
        load_suite(not_mcp, check_agent=False)
    assert "not_mcp.yaml:5" in str(raised.value) and "the suite's agent must be one" in str(raised.value)
    shapes = tmp_path / "shapes.yaml"
    shapes.write_text(
        f"name: s\nagent: {{mcp: {{command: {sys.executable}}}}}\ncases:\n"
        "  - name: two-kinds\n    mcp_call: {tool: t, list_tools: true}\n    judges: [{contains: x}]\n"
        "  - name: prompt-and-call\n    prompt: hi\n    mcp_call: {list_tools: true}\n    judges: [{contains: x}]\n"
    )
    with pytest.raises(SuiteError) as raised:
        load_suite(shapes, check_agent=False)
    text = str(raised.value)
    assert "shapes.yaml:5" in text and "exactly one of tool (with arguments), list_tools: true or resource" in text
    assert "shapes.yaml:7" in text and "exactly one of 'prompt', 'rounds' or 'mcp_call'" in text
