"""The MCP adapter: a scripted model on the stub OpenAI server drives a real stdio MCP server.

One server process is shared by the tests of this module (starting one costs
seconds), so they run on one module-scoped event loop.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from jurybox.agents import AgentError, RoundSpec, Target, TargetConfigError, make_target, run_conversation
from jurybox.stubs import StubReply, StubServer, StubToolCall

module_loop = pytest.mark.asyncio(loop_scope="module")

SERVER = Path(__file__).with_name("mcp_rental_server.py")


def spec(base_url: str, **extra: Any) -> dict[str, Any]:
    return {
        "mcp": {
            "command": sys.executable,
            "args": [str(SERVER)],
            "model": {"model": "tool-picker", "base_url": base_url},
            "system": "Use the tools.",
            **extra,
        }
    }


def scripted_model(body: dict[str, Any]) -> StubReply:
    """Plays the model: what it does depends on the user's last message."""
    messages = body["messages"]
    last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
    prompt = messages[last_user]["content"]
    results = [m["content"] for m in messages[last_user:] if m["role"] == "tool"]
    if prompt.startswith("loop"):
        return StubReply(tool_calls=(StubToolCall("nightly_rate", {"listing": "Mountain Cabin"}),))
    if prompt.startswith("castle"):
        if results:
            return StubReply(text=json.dumps(results))
        return StubReply(
            tool_calls=(
                StubToolCall("nightly_rate", {"listing": "Castle"}, id="a"),
                StubToolCall("delete_listing", {"listing": "Beach House"}, id="b"),
            )
        )
    if not results:
        return StubReply(tool_calls=(StubToolCall("nightly_rate", {"listing": "Beach House"}, id="r1"),))
    if len(results) == 1:
        return StubReply(tool_calls=(StubToolCall("quote", {"listing": "Beach House", "nights": 2}, id="q1"),))
    return StubReply(text=f"{results[0]}; two nights cost {results[1]}.")


@pytest.fixture(scope="module")
def stub() -> Iterator[StubServer]:
    with StubServer("openai", reply=scripted_model) as server:
        yield server


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def target(stub: StubServer) -> AsyncIterator[Target]:
    shared = make_target(spec(stub.base_url, max_steps=2))
    yield shared
    await shared.aclose()


@module_loop
async def test_the_model_calls_the_servers_tools_and_they_are_recorded(stub: StubServer, target: Target) -> None:
    start = len(stub.requests)
    rounds = [RoundSpec("Quote two nights at the beach house"), RoundSpec("Thanks, again please")]
    first, second = await run_conversation(target, rounds, session_id="m1", timeout=60)
    assert first.context.output == "Beach House: $320 per night; two nights cost $640."
    assert [(c.name, dict(c.arguments), c.result) for c in first.context.tool_calls] == [
        ("nightly_rate", {"listing": "Beach House"}, "Beach House: $320 per night"),
        ("quote", {"listing": "Beach House", "nights": 2}, "$640"),
    ]
    assert first.context.metadata["agent_calls"] == 1
    assert first.context.metadata["usage"]["input_tokens"] > 0
    request = stub.requests[start].json
    assert sorted(tool["function"]["name"] for tool in request["tools"]) == ["nightly_rate", "quote"]
    assert request["messages"][0] == {"role": "system", "content": "Use the tools."}
    # The second round's first request carries the first round, tool calls and results included.
    roles = [m["role"] for m in stub.requests[start + 3].json["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "tool", "assistant", "user"]
    assert second.context.tool_names == ["nightly_rate", "quote"]


@module_loop
async def test_revival_drops_the_adapters_history(stub: StubServer, target: Target) -> None:
    rounds = [RoundSpec("Quote two nights"), RoundSpec("And again")]
    await run_conversation(target, rounds, session_id="m2", revive_between_rounds=True, timeout=60)
    assert [m["role"] for m in stub.requests[-3].json["messages"]] == ["system", "user"]


@module_loop
async def test_tool_errors_and_unknown_tools_are_recorded_and_shown_to_the_model(target: Target) -> None:
    reply = await target.respond("castle rate?", "m3")
    rate, delete = reply.tool_calls
    assert rate.name == "nightly_rate" and "error" in rate.result
    assert delete.result == {"error": "unknown tool 'delete_listing'"}
    shown = json.loads(reply.text)
    assert shown[0].startswith("error:") and shown[1] == "error: there is no tool named 'delete_listing'"


@module_loop
async def test_a_model_that_never_stops_calling_tools_is_an_agent_error(target: Target) -> None:
    with pytest.raises(AgentError, match=r"still calling tools after 2 step\(s\) \(last: nightly_rate"):
        await run_conversation(target, [RoundSpec("loop forever")], session_id="m4", timeout=60)


@module_loop
async def test_the_tools_option_limits_what_the_model_sees(stub: StubServer) -> None:
    with StubServer("openai", reply="No tools needed.") as quiet:
        limited = make_target(spec(quiet.base_url, tools=["quote"]))
        try:
            await limited.respond("hi", "m5")
            assert [tool["function"]["name"] for tool in quiet.requests[0].json["tools"]] == ["quote"]
        finally:
            await limited.aclose()


@module_loop
async def test_a_server_that_cannot_start_is_an_agent_error_with_its_output(tmp_path: Path) -> None:
    broken = tmp_path / "broken_server.py"
    broken.write_text("import sys\nprint('missing config file rentals.toml', file=sys.stderr)\nsys.exit(3)\n")
    target = make_target(
        {"mcp": {"command": sys.executable, "args": [str(broken)], "model": "m", "startup_timeout": 20}}
    )
    with pytest.raises(AgentError, match=r"cannot start MCP server .*missing config file rentals\.toml"):
        await target.respond("hi", "m6")
    await target.aclose()


def test_mcp_spec_errors_name_the_field() -> None:
    with pytest.raises(TargetConfigError, match=r"agent\.mcp\.command: required"):
        make_target({"mcp": {"model": "m"}})
    with pytest.raises(TargetConfigError, match=r"agent\.mcp\.model: the chat model"):
        make_target({"mcp": {"command": "python", "model": 42}})
    with pytest.raises(TargetConfigError, match=r"agent\.mcp: unknown key\(s\) argz"):
        make_target({"mcp": {"command": "python", "argz": [], "model": "m"}})
    with pytest.raises(TargetConfigError, match=r"agent\.mcp\.max_steps"):
        make_target({"mcp": {"command": "python", "model": "m", "max_steps": 0}})
