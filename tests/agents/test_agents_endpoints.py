"""The OpenAI-compatible and HTTP JSON adapters against real servers on 127.0.0.1."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from jurybox.agents import AgentError, AgentTimeout, RoundSpec, TargetConfigError, make_target, run_conversation
from jurybox.stubs import StubReply, StubServer, StubToolCall

# --------------------------------------------------------------------------- OpenAI-compatible chat


async def test_openai_target_keeps_history_and_records_tool_calls() -> None:
    def script(body: dict[str, Any]) -> StubReply:
        last = body["messages"][-1]["content"]
        if "listings" in last:
            return StubReply(
                text="Let me check.",
                tool_calls=(StubToolCall("get_listings", {}, id="c1"),),
                finish_reason="tool_calls",
            )
        return StubReply(text=f"You asked {len(body['messages'])} things so far.")

    with StubServer("openai", reply=script) as stub:
        target = make_target(
            {"openai": {"model": "agent-model", "base_url": stub.base_url, "system": "You manage rentals."}}
        )
        rounds = [RoundSpec("Show my listings"), RoundSpec("And now?")]
        first, second = await run_conversation(target, rounds, session_id="o1")
        assert first.context.tool_names == ["get_listings"]
        assert first.context.tool_calls[0].id == "c1"
        assert first.context.metadata["usage"]["finish_reason"] == "tool_calls"
        assert first.context.metadata["tokens"] > 0
        sent = stub.requests[1].json["messages"]
        assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
        assert sent[0]["content"] == "You manage rentals."
        assert second.context.output == "You asked 4 things so far."
        assert stub.requests[0].json["model"] == "agent-model"

        # Revival drops the adapter's history: a chat endpoint has no memory of its own.
        await run_conversation(target, rounds, session_id="o2", revive_between_rounds=True)
        assert [m["role"] for m in stub.requests[-1].json["messages"]] == ["system", "user"]
        await target.aclose()


async def test_openai_target_sends_configured_tools_and_reports_http_errors() -> None:
    tool = {"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}
    with StubServer("openai", reply="fine") as stub:
        target = make_target({"openai": {"model": "m", "base_url": stub.base_url, "tools": [tool], "max_retries": 0}})
        await target.respond("hi", "t")
        assert stub.requests[0].json["tools"] == [tool]
        stub.fail(503, times=1)
        with pytest.raises(AgentError, match="answered HTTP 503"):
            await target.respond("again", "t")
        await target.aclose()


async def test_openai_target_timeout_is_agent_timeout() -> None:
    with StubServer("openai", reply="late", latency=0.8) as stub:
        target = make_target({"openai": {"model": "m", "base_url": stub.base_url, "timeout": 0.2, "max_retries": 0}})
        with pytest.raises(AgentTimeout, match="timed out"):
            await target.respond("hi", "t")
        await target.aclose()


def test_openai_spec_errors_name_the_field(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(TargetConfigError, match=r"agent\.openai\.model: required"):
        make_target({"openai": {"base_url": "http://127.0.0.1:1/v1"}})
    with pytest.raises(TargetConfigError, match=r"agent\.openai: unknown key\(s\) temprature"):
        make_target({"openai": {"model": "m", "temprature": 0}})
    with pytest.raises(TargetConfigError, match=r"agent\.openai\.tools\[0\]"):
        make_target({"openai": {"model": "m", "tools": [{"name": "x"}]}})


async def test_openai_target_without_a_key_says_how_to_set_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MY_AGENT_KEY", raising=False)
    target = make_target({"openai": {"model": "m", "api_key_env": "MY_AGENT_KEY"}})
    with pytest.raises(AgentError, match="no API key: set MY_AGENT_KEY"):
        await target.respond("hi", "t")


# --------------------------------------------------------------------------- generic HTTP JSON


class _ChatService(BaseHTTPRequestHandler):
    """A tiny chat service: remembers messages per session until told to forget them."""

    sessions: dict[str, list[str]] = {}  # noqa: RUF012
    requests: list[dict[str, Any]] = []  # noqa: RUF012

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def _json(self, status: int, payload: Any) -> None:
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _ChatService.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
        text = body["input"]["text"]
        session = body["meta"]["conversation"]
        if text == "crash":
            return self._json(500, {"error": "boom"})
        if text == "not json":
            return self._json(200, b"<html>oops</html>")
        if text == "wrong shape":
            return self._json(200, {"data": {"answer": 7}})
        history = _ChatService.sessions.setdefault(session, [])
        history.append(text)
        return self._json(
            200,
            {
                "data": {"answer": f"message {len(history)}: {text}", "first": history[0]},
                "trace": {
                    "calls": [
                        {"id": "t1", "type": "function", "function": {"name": "search", "arguments": '{"q": "x"}'}},
                        {"name": "rank", "args": {"k": 3}, "output": [1, 2]},
                    ],
                    "docs": ["doc-1", {"id": 2}],
                },
                "usage": {"input_tokens": 10, "output_tokens": 4},
            },
        )

    def do_DELETE(self) -> None:
        session = urlparse(self.path).path.rsplit("/", 1)[-1]
        _ChatService.sessions.pop(session, None)
        self._json(200, {"ok": True})

    def do_GET(self) -> None:
        query = parse_qs(urlparse(self.path).query)
        self._json(200, {"reply": f"got {query['q'][0]} in {query['sid'][0]}"})


@pytest.fixture
def service() -> Iterator[str]:
    _ChatService.sessions.clear()
    _ChatService.requests.clear()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ChatService)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def http_spec(url: str, **extra: Any) -> dict[str, Any]:
    return {
        "http": {
            "url": f"{url}/chat",
            "headers": {"Authorization": "Bearer ${CHAT_TOKEN}"},
            "body": {"input": {"text": "{message}"}, "meta": {"conversation": "{session_id}", "lang": "en"}},
            "reply": "data.answer",
            "tool_calls": "trace.calls",
            "sources": "trace.docs",
            "usage": "usage",
            **extra,
        }
    }


async def test_http_target_fills_the_template_and_reads_the_paths(
    service: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CHAT_TOKEN", "s3cret")
    target = make_target(http_spec(service, close=f"{service}/sessions/{{session_id}}"))
    rounds = [RoundSpec("hello"), RoundSpec("again")]
    first, second = await run_conversation(target, rounds, session_id="h1")
    assert _ChatService.requests[0]["body"] == {
        "input": {"text": "hello"},
        "meta": {"conversation": "h1", "lang": "en"},
    }
    assert _ChatService.requests[0]["auth"] == "Bearer s3cret"
    assert second.context.output == "message 2: again"
    assert [(c.name, dict(c.arguments), c.result, c.id) for c in first.context.tool_calls] == [
        ("search", {"q": "x"}, None, "t1"),
        ("rank", {"k": 3}, [1, 2], None),
    ]
    assert first.context.sources == ("doc-1", '{"id": 2}')
    assert first.context.metadata["tokens"] == 14

    # Revival calls the close endpoint, so the service forgets the session.
    _, revived = await run_conversation(target, rounds, session_id="h2", revive_between_rounds=True)
    assert revived.context.output == "message 1: again"
    await target.aclose()


async def test_http_get_sends_the_template_as_query_parameters(service: str) -> None:
    target = make_target(
        {"http": {"url": f"{service}/ask", "method": "GET", "body": {"q": "{message}", "sid": "{session_id}"}}}
    )
    reply = await target.respond("rates", "g1")
    assert reply.text == "got rates in g1"
    await target.aclose()


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        ("crash", r"POST http://127\.0\.0\.1:\d+/chat answered HTTP 500: \{\"error\": \"boom\"\}"),
        ("not json", r"response is not JSON: <html>oops</html>"),
        ("wrong shape", r"reply at 'data\.answer' is int 7, not a string"),
    ],
)
async def test_http_failures_are_agent_errors_with_the_reason(
    service: str, message: str, reason: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CHAT_TOKEN", "x")
    target = make_target(http_spec(service))
    with pytest.raises(AgentError, match=reason):
        await run_conversation(target, [RoundSpec(message)], session_id="e")
    await target.aclose()


async def test_http_missing_reply_path_names_what_the_response_had(service: str) -> None:
    target = make_target(
        {
            "http": {
                "url": f"{service}/chat",
                "body": {"input": {"text": "{message}"}, "meta": {"conversation": "{session_id}"}},
                "reply": "data.reply",
            }
        }
    )
    with pytest.raises(AgentError, match=r"no reply at 'data\.reply' \(data has keys \['answer', 'first'\]\)"):
        await target.respond("hello", "m")
    await target.aclose()


async def test_http_unreachable_endpoint_is_an_agent_error() -> None:
    target = make_target({"http": {"url": "http://127.0.0.1:9/chat", "timeout": 2}})
    with pytest.raises(AgentError, match=r"POST http://127\.0\.0\.1:9/chat failed: connection refused"):
        await target.respond("hi", "u")
    await target.aclose()


def test_http_spec_errors_name_the_field(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOPE_TOKEN", raising=False)
    with pytest.raises(TargetConfigError, match=r"agent\.http\.url: expected an http\(s\) URL"):
        make_target({"http": {"url": "ftp://x"}})
    with pytest.raises(TargetConfigError, match=r"agent\.http\.method: expected one of"):
        make_target({"http": {"url": "http://x", "method": "FETCH"}})
    with pytest.raises(
        TargetConfigError, match=r"agent\.http\.headers\.Authorization: environment variable NOPE_TOKEN"
    ):
        make_target({"http": {"url": "http://x", "headers": {"Authorization": "Bearer ${NOPE_TOKEN}"}}})
    with pytest.raises(TargetConfigError, match=r"agent\.http: unknown key\(s\) reply_path"):
        make_target({"http": {"url": "http://x", "reply_path": "a"}})
