"""MCP over HTTP: the official SDK's server on streamable HTTP and on SSE, behind a bearer token.

Each transport's server runs in its own process on 127.0.0.1 (mcp_http_server.py)
for the module; a scripted model on the stub OpenAI server picks the tools.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jurybox.agents import AgentError, TargetConfigError, make_target
from jurybox.stubs import StubReply, StubServer, StubToolCall

pytest.importorskip("mcp")

SERVER = Path(__file__).with_name("mcp_http_server.py")
TOKEN = "s3cret-token-for-tests"
PATHS = {"streamable-http": "/mcp", "sse": "/sse"}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for(port: int, process: subprocess.Popen[bytes], seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the MCP server exited: {process.stderr.read().decode() if process.stderr else ''}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError("the MCP server did not listen in time")


@pytest.fixture(scope="module", params=["streamable-http", "sse"])
def server_url(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    transport: str = request.param
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, str(SERVER), transport, str(port), TOKEN],
        cwd=SERVER.parent,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        _wait_for(port, process)
        yield transport, f"http://127.0.0.1:{port}{PATHS[transport]}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


def scripted_model(body: dict[str, Any]) -> StubReply:
    messages = body["messages"]
    last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
    results = [m["content"] for m in messages[last_user:] if m["role"] == "tool"]
    if not results:
        return StubReply(
            tool_calls=(
                StubToolCall("nightly_rate", {"listing": "Beach House"}, id="r1"),
                StubToolCall("listing", {"name": "Mountain Cabin"}, id="l1"),
            )
        )
    return StubReply(text=" | ".join(results))


@pytest.fixture(scope="module")
def model() -> Iterator[StubServer]:
    with StubServer("openai", reply=scripted_model) as stub:
        yield stub


def _spec(url: str, transport: str, base_url: str, **extra: Any) -> dict[str, Any]:
    return {
        "mcp": {
            "url": url,
            "transport": transport,
            "headers": {"Authorization": "Bearer ${JURYBOX_TEST_MCP_TOKEN}"},
            "model": {"model": "tool-picker", "base_url": base_url},
            "startup_timeout": 20,
            **extra,
        }
    }


async def test_tools_are_called_over_http_with_the_headers_and_dict_results_are_values(
    server_url: tuple[str, str], model: StubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    transport, url = server_url
    monkeypatch.setenv("JURYBOX_TEST_MCP_TOKEN", TOKEN)
    target = make_target(_spec(url, transport, model.base_url))
    try:
        reply = await target.respond("rates please", f"http-{transport}")
    finally:
        await target.aclose()
    rate, details = reply.tool_calls
    assert (rate.name, rate.result) == ("nightly_rate", "Beach House: $320 per night")
    # A tool annotated -> dict arrives as the dict, not as its JSON text.
    assert details.result == {"name": "Mountain Cabin", "nightly_rate": 210, "pets": True}
    assert "Beach House: $320 per night" in reply.text
    assert target.name == f"mcp:{url}"


async def test_a_refused_token_is_an_agent_error_that_names_the_url_not_the_token(
    server_url: tuple[str, str], model: StubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    transport, url = server_url
    monkeypatch.setenv("JURYBOX_TEST_MCP_TOKEN", "wrong-token")
    target = make_target(_spec(f"{url}?key=hidden", transport, model.base_url, startup_timeout=10))
    try:
        with pytest.raises(AgentError) as raised:
            await target.respond("rates please", "refused")
    finally:
        await target.aclose()
    message = str(raised.value)
    assert f"connect to MCP server at {url} ({transport})" in message
    assert "wrong-token" not in message and "hidden" not in message


def test_http_spec_errors_name_the_field(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JURYBOX_TEST_MCP_TOKEN", raising=False)
    cases = [
        ({"url": "http://127.0.0.1:9/mcp", "command": "python"}, r"either command .* or url"),
        ({"url": "ftp://example.com/mcp"}, r"agent\.mcp\.url: expected an http:// or https:// URL"),
        ({"url": "http://127.0.0.1:9/mcp", "transport": "websocket"}, r"agent\.mcp\.transport: expected one of"),
        ({"url": "http://127.0.0.1:9/mcp", "timeout": 0}, r"agent\.mcp\.timeout"),
        ({"url": "http://127.0.0.1:9/mcp", "args": ["x"]}, r"agent\.mcp\.args: goes with command"),
        ({"command": "python", "headers": {"A": "b"}}, r"agent\.mcp\.headers: goes with url"),
        (
            {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer ${JURYBOX_TEST_MCP_TOKEN}"}},
            r"agent\.mcp\.headers\.Authorization: the environment variable JURYBOX_TEST_MCP_TOKEN is not set",
        ),
    ]
    for options, message in cases:
        with pytest.raises(TargetConfigError, match=message):
            make_target({"mcp": {**options, "model": "m"}})
