"""The stub servers speak each provider's wire format, inject faults and count connections."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys

import httpx
import pytest
from uvicorn.protocols.http.h11_impl import H11Protocol

from jurybox.stubs import StubReply, StubServer, StubToolCall, _server

MESSAGES = [{"role": "user", "content": "Is Paris the capital of France?"}]


@pytest.fixture(autouse=True, params=["installed", "plain"])
def http_stack(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test on the stack the stub picks (httptools and uvloop when installed) and on h11 and asyncio."""
    if request.param == "plain":
        monkeypatch.setattr(_server, "_HttpProtocol", H11Protocol)
        monkeypatch.setattr(_server, "_new_event_loop", asyncio.new_event_loop)
    return str(request.param)


def post(stub: StubServer, path: str, body: dict[str, object]) -> httpx.Response:
    return httpx.post(stub.url + path, json=body, timeout=10)


def test_openai_json_reply_has_the_chat_completion_shape() -> None:
    with StubServer("openai", reply="Yes.") as stub:
        data = post(stub, "/v1/chat/completions", {"model": "gpt-4o-mini", "messages": MESSAGES}).json()
    assert data["object"] == "chat.completion"
    assert data["model"] == "gpt-4o-mini"
    assert data["choices"][0]["message"] == {"role": "assistant", "content": "Yes.", "refusal": None}
    assert data["choices"][0]["finish_reason"] == "stop"
    assert data["usage"]["total_tokens"] == data["usage"]["prompt_tokens"] + data["usage"]["completion_tokens"]
    assert stub.requests[0].body["messages"] == MESSAGES


def test_openai_stream_is_sse_ending_in_done_with_usage() -> None:
    body = {"model": "m", "messages": MESSAGES, "stream": True, "stream_options": {"include_usage": True}}
    with StubServer("openai", reply="Yes, it is.") as stub:
        response = post(stub, "/v1/chat/completions", body)
    assert response.headers["content-type"].startswith("text/event-stream")
    events = [line.removeprefix("data: ") for line in response.text.split("\n\n") if line]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert text == "Yes, it is."
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] > 0
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]][-1] == "stop"


def test_openai_tool_calls_in_json_and_stream() -> None:
    reply = StubReply(tool_calls=(StubToolCall("get_weather", {"city": "Paris"}, id="call_1"),))
    with StubServer("openai", reply=reply) as stub:
        data = post(stub, "/v1/chat/completions", {"model": "m", "messages": MESSAGES}).json()
        streamed = post(stub, "/v1/chat/completions", {"model": "m", "messages": MESSAGES, "stream": True}).text
    call = data["choices"][0]["message"]["tool_calls"][0]
    assert call == {
        "id": "call_1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
    }
    assert data["choices"][0]["finish_reason"] == "tool_calls"
    deltas = [json.loads(e.removeprefix("data: ")) for e in streamed.split("\n\n") if e and "[DONE]" not in e]
    arguments = "".join(
        tc["function"].get("arguments", "") for d in deltas for tc in d["choices"][0]["delta"].get("tool_calls", [])
    )
    assert json.loads(arguments) == {"city": "Paris"}


def test_anthropic_forced_tool_turns_json_reply_into_tool_use() -> None:
    body = {
        "model": "claude",
        "max_tokens": 100,
        "messages": MESSAGES,
        "tools": [{"name": "verdict", "input_schema": {"type": "object"}}],
        "tool_choice": {"type": "tool", "name": "verdict"},
    }
    with StubServer("anthropic", reply='{"pass": true}') as stub:
        data = post(stub, "/v1/messages", body).json()
    assert data["type"] == "message"
    assert data["content"] == [
        {"type": "tool_use", "id": data["content"][0]["id"], "name": "verdict", "input": {"pass": True}}
    ]
    assert data["stop_reason"] == "tool_use"


def test_anthropic_stream_events_in_order_and_max_tokens_required() -> None:
    with StubServer("anthropic", reply="Yes.") as stub:
        streamed = post(stub, "/v1/messages", {"model": "c", "max_tokens": 5, "messages": MESSAGES, "stream": True})
        rejected = post(stub, "/v1/messages", {"model": "c", "messages": MESSAGES})
    names = [block.split("\n")[0].removeprefix("event: ") for block in streamed.text.split("\n\n") if block]
    assert names == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert rejected.status_code == 400
    assert rejected.json()["error"]["type"] == "invalid_request_error"


def test_ollama_streams_ndjson_by_default_and_json_when_asked() -> None:
    with StubServer("ollama", reply="Yes, Paris.") as stub:
        streamed = post(stub, "/api/chat", {"model": "llama3.1", "messages": MESSAGES})
        single = post(stub, "/api/chat", {"model": "llama3.1", "messages": MESSAGES, "stream": False}).json()
    lines = [json.loads(line) for line in streamed.text.splitlines()]
    assert streamed.headers["content-type"] == "application/x-ndjson"
    assert "".join(line["message"]["content"] for line in lines) == "Yes, Paris."
    assert lines[-1]["done"] is True and lines[-1]["eval_count"] > 0
    assert single["message"]["content"] == "Yes, Paris." and single["done_reason"] == "stop"


def test_reply_list_in_order_then_500_and_function_of_body() -> None:
    with StubServer("openai", reply=["one", "two"]) as stub:
        texts = [post(stub, "/v1/chat/completions", {"model": "m", "messages": MESSAGES}) for _ in range(3)]
    assert [r.json()["choices"][0]["message"]["content"] for r in texts[:2]] == ["one", "two"]
    assert texts[2].status_code == 500 and "ran out" in texts[2].json()["error"]["message"]
    with StubServer("openai", reply=lambda body: body["messages"][-1]["content"].upper()) as stub:
        echoed = post(stub, "/v1/chat/completions", {"model": "m", "messages": MESSAGES}).json()
    assert echoed["choices"][0]["message"]["content"] == "IS PARIS THE CAPITAL OF FRANCE?"


def test_faults_status_retry_after_then_normal_replies() -> None:
    with StubServer("openai", reply="ok") as stub:
        stub.fail(429, retry_after=3, times=2)
        responses = [post(stub, "/v1/chat/completions", {"model": "m", "messages": MESSAGES}) for _ in range(3)]
    assert [r.status_code for r in responses] == [429, 429, 200]
    assert responses[0].headers["retry-after"] == "3"
    assert responses[0].json()["error"]["type"] == "requests"


def test_dropped_connection_is_a_transport_error() -> None:
    with StubServer("ollama", reply="ok") as stub:
        stub.drop()
        with pytest.raises(httpx.RemoteProtocolError):
            post(stub, "/api/chat", {"model": "m", "messages": MESSAGES, "stream": False})
        stub.drop(mid_body=True)
        with pytest.raises(httpx.RemoteProtocolError):
            post(stub, "/api/chat", {"model": "m", "messages": MESSAGES, "stream": False})
        assert post(stub, "/api/chat", {"model": "m", "messages": MESSAGES, "stream": False}).status_code == 200


async def test_concurrent_requests_wait_together_and_connections_are_counted() -> None:
    # 20 requests with 0.4 s latency each, on a pool of 10 connections: 10 wait together,
    # and the server accepted exactly the pool's 10 TCP connections.
    with StubServer("openai", reply="ok", latency=0.4) as stub:
        limits = httpx.Limits(max_connections=10, max_keepalive_connections=10)
        async with httpx.AsyncClient(limits=limits) as client:
            body = {"model": "m", "messages": MESSAGES}
            replies = await asyncio.gather(
                *(client.post(stub.base_url + "/chat/completions", json=body) for _ in range(20))
            )
        assert all(r.status_code == 200 for r in replies)
        assert stub.connections == 10
        assert stub.max_in_flight == 10
        assert len(stub.requests) == 20


def test_accepted_connections_send_without_nagle_delay() -> None:
    # Without TCP_NODELAY a reply's header and body writes meet the client's delayed ACK
    # and every reply arrives ~40 ms late, which skews every latency the stub is used to measure.
    with StubServer("openai", reply="ok") as stub, httpx.Client() as client:
        client.post(stub.base_url + "/chat/completions", json={"model": "m", "messages": MESSAGES})
        (transport,) = stub.state.open_transports.values()
        sock = transport.get_extra_info("socket")
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0


def test_unknown_route_and_provider() -> None:
    with StubServer("anthropic") as stub:
        assert httpx.get(stub.url + "/v1/models").status_code == 404
    with pytest.raises(ValueError, match="openai, anthropic, ollama"):
        StubServer("gemini")  # type: ignore[arg-type]


def test_module_runs_a_server_in_its_own_process_and_prints_its_url() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "jurybox.stubs", "openai", "--port", "0", "--reply", "from a process"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        data = httpx.post(base_url + "/chat/completions", json={"model": "m", "messages": MESSAGES}, timeout=10)
        assert data.json()["choices"][0]["message"]["content"] == "from a process"
        stats = httpx.get(base_url.removesuffix("/v1") + "/_stub/stats", timeout=10).json()
        assert stats == {"requests": 1, "connections": 2, "max_in_flight": 1}
    finally:
        process.terminate()
        process.wait(timeout=10)
