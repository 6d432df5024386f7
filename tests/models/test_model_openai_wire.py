"""The OpenAI adapter reads the reply body itself: what it accepts, and what it refuses loudly."""

from __future__ import annotations

import asyncio
import gc
import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from models_helpers import CASSETTES, RecordedSleep

from jurybox.models import (
    ModelConfigError,
    ModelConnectionError,
    ModelTimeoutError,
    ProviderError,
    RateLimitError,
    RequestRejectedError,
    RetryPolicy,
    ServerError,
    get_model,
)
from jurybox.models import _openai as openai_adapter
from jurybox.models._openai import HttpTransport, OpenAIModel, aiohttp_installed
from jurybox.stubs import RecordedResponse, StubServer

PROMPT = [{"role": "user", "content": "Grade this."}]
NEEDS_AIOHTTP = pytest.mark.skipif(not aiohttp_installed(), reason="no aiohttp")
# "direct": our own aiohttp session; "aiohttp" and "httpx": the openai SDK with that transport.
TRANSPORTS = [
    "httpx",
    pytest.param("aiohttp", marks=NEEDS_AIOHTTP),
    pytest.param("direct", marks=NEEDS_AIOHTTP),
]
JSON_HEADERS = (("content-type", "application/json"),)


def _reply(body: Any, *, headers: tuple[tuple[str, str], ...] = JSON_HEADERS, status: int = 200) -> RecordedResponse:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return RecordedResponse(status=status, headers=headers, body=raw)


def _completion(message: dict[str, Any], *, finish: str = "stop") -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14},
    }


async def _generate(replies: list[RecordedResponse], **options: Any) -> tuple[Any, StubServer]:
    with StubServer("openai", replay=replies) as stub:
        model = get_model("openai:m", base_url=stub.base_url, cache=False, retry=RetryPolicy(max_retries=0), **options)
        response = await model.generate(PROMPT, max_tokens=5)
    return response, stub


async def test_text_usage_finish_reason_and_the_exact_body_as_raw() -> None:
    body = _completion({"content": "PASS", "refusal": None}, finish="length")
    response, stub = await _generate([_reply(body)], params={"top_p": 0.5})
    assert (response.text, response.finish_reason) == ("PASS", "length")
    assert (response.usage.input_tokens, response.usage.output_tokens) == (11, 3)
    assert response.raw == body
    sent = stub.requests[0].body
    assert sent["top_p"] == 0.5 and "extra_body" not in sent  # extra params are merged into the JSON body
    assert sent["max_tokens"] == 5 and "stream" not in sent and stub.requests[0].path.endswith("/chat/completions")
    assert stub.requests[0].headers["authorization"] == "Bearer jurybox-local"


async def test_tool_calls_without_text_keep_the_calls_in_raw() -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "get_listings", "arguments": "{}"}}
    response, _ = await _generate([_reply(_completion({"content": None, "tool_calls": [call]}, finish="tool_calls"))])
    assert (response.text, response.finish_reason) == ("", "tool_calls")
    assert response.raw["choices"][0]["message"]["tool_calls"] == [call]


async def test_content_given_as_text_parts_is_joined() -> None:
    parts = [
        {"type": "text", "text": "Rating: "},
        {"type": "image_url", "image_url": {}},
        {"type": "text", "text": "8"},
    ]
    response, _ = await _generate([_reply(_completion({"content": parts}))])
    assert response.text == "Rating: 8"


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (_reply(b"<html>Bad gateway page</html>", headers=(("content-type", "text/html"),)), "not JSON"),
        (_reply([1, 2]), "not a JSON object"),
        (_reply({"id": "x", "choices": []}), "no choices"),
        (_reply({"choices": [{"index": 0, "finish_reason": "stop"}]}), "no message"),
        (_reply(_completion({"content": 42})), "message content is a int"),
    ],
)
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_an_unusable_200_reply_is_an_error_never_an_empty_answer(
    reply: RecordedResponse, reason: str, transport: str
) -> None:
    with pytest.raises(ProviderError, match=reason) as caught:
        await _generate([reply], http_transport=transport)
    assert caught.value.retryable is False and caught.value.provider == "openai"
    assert type(caught.value) is ProviderError
    if reason == "not JSON":
        assert caught.value.provider_message == "<html>Bad gateway page</html>"


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_every_transport_reads_real_gzip_traffic_and_reports_failures_truly(transport: str) -> None:
    name = "openllmetry__test_chat_tool_calls__gzip.yaml"
    with StubServer("openai", replay=CASSETTES / name) as stub:
        model = get_model(
            "openai:gpt-3.5-turbo",
            base_url=stub.base_url,
            cache=False,
            retry=RetryPolicy(max_retries=0),
            http_transport=transport,
            timeout=0.3,
        )
        assert model.http_transport == transport  # type: ignore[attr-defined]
        response = await model.generate(PROMPT)
        assert response.text == "The weather in San Francisco is 70 degrees and sunny."
        assert (response.usage.input_tokens, response.usage.output_tokens, response.finish_reason) == (40, 12, "stop")
        stub.drop()
        with pytest.raises(ModelConnectionError):  # a closed connection is not reported as a timeout
            await model.generate(PROMPT)
        stub.drop(mid_body=True)
        with pytest.raises(ModelConnectionError):
            await model.generate(PROMPT)
        stub.slow(2.0)
        with pytest.raises(ModelTimeoutError, match=r"timed out after 0\.3s"):
            await model.generate(PROMPT)


def test_unknown_or_missing_transport_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ModelConfigError, match="http_transport must be"):
        get_model("openai:m", base_url="http://127.0.0.1:9", http_transport="curl")
    with pytest.raises(ModelConfigError, match="'auto', 'direct', 'aiohttp', 'httpx', got 'curl'"):
        get_model("openai:m", base_url="http://127.0.0.1:9", http_transport="curl")
    monkeypatch.setattr(openai_adapter, "aiohttp_installed", lambda: False)
    for transport in ("aiohttp", "direct"):
        with pytest.raises(ModelConfigError, match=rf"http_transport=\"{transport}\" needs aiohttp: pip install"):
            get_model("openai:m", base_url="http://127.0.0.1:9", http_transport=transport)
    assert get_model("openai:m", base_url="http://127.0.0.1:9").http_transport == "httpx"  # type: ignore[attr-defined]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_http_clients_are_closed_when_their_event_loop_ends(transport: str) -> None:
    with StubServer("openai", reply="fine") as stub:
        model = get_model("openai:m", base_url=stub.base_url, cache=False, http_transport=transport)
        clients: list[Any] = []
        make_client = model._make_client

        def recording(connections: int) -> Any:
            clients.append(make_client(connections))
            return clients[-1]

        model._make_client = recording  # type: ignore[method-assign]
        sessions = _record_direct_sessions(model)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for _ in range(2):  # like evaluate(): each call in its own asyncio.run
                assert asyncio.run(model.generate(PROMPT)).text == "fine"
            gc.collect()
    assert len(clients) == 2 and all(client.is_closed() for client in clients)
    assert len(sessions) == (2 if transport == "direct" else 0) and all(session.closed for session in sessions)
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)]  # no "Unclosed client session"


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_aclose_closes_the_clients_of_the_running_loop(transport: str) -> None:
    with StubServer("openai", reply="fine") as stub:
        model = get_model("openai:m", base_url=stub.base_url, cache=False, http_transport=transport)
        sessions = _record_direct_sessions(model)
        await model.generate(PROMPT)
        clients = [lane.client for state in model._states.values() for lane in state.lanes]
        await model.aclose()
        assert clients and all(client.is_closed() for client in clients)
        assert len(sessions) == (1 if transport == "direct" else 0) and all(session.closed for session in sessions)
        assert (await model.generate(PROMPT)).text == "fine"  # a later call opens a fresh client
        await model.aclose()
        assert all(session.closed for session in sessions)


@pytest.mark.parametrize("base_url", ["https://api.openai.com/v1", "http://127.0.0.1:9/a/b/", "http://127.0.0.1:9"])
def test_the_request_is_the_one_the_sdk_builds_from_the_relative_path(base_url: str) -> None:
    from openai._models import FinalRequestOptions

    model = get_model("openai:m", base_url=base_url, cache=False, timeout=12.5, http_transport="aiohttp")
    client = model._make_client(1)  # type: ignore[attr-defined]
    body = {"model": "m", "messages": PROMPT}
    relative = FinalRequestOptions.construct(method="post", url="/chat/completions", json_data=body)
    ours = FinalRequestOptions.construct(
        method="post",
        url=model._completions_url(client),  # type: ignore[attr-defined]
        json_data=body,
        **model._request_options,  # type: ignore[attr-defined]
    )
    expected, sent = client._build_request(relative), client._build_request(ours)
    assert str(sent.url) == str(expected.url) and str(sent.url).endswith("/chat/completions")
    assert sent.headers.raw == expected.headers.raw and sent.content == expected.content
    assert sent.extensions == expected.extensions
    # The direct path (no SDK) sends to the same URL, with the SDK's headers but its telemetry
    # (x-stainless-*), and user-agent, host, content-length and the httpx2 client's own defaults.
    direct = get_model("openai:m", base_url=base_url, cache=False)._make_client(1)  # type: ignore[attr-defined]
    assert direct.url == str(expected.url)
    left_out = {"host", "content-length", "accept-encoding", "connection", "user-agent"}
    sdk_headers = {
        k.lower(): v for k, v in expected.headers.items() if k.lower() not in left_out and "stainless" not in k.lower()
    }
    assert {k.lower(): v for k, v in direct.headers.items() if k.lower() != "user-agent"} == sdk_headers
    assert sdk_headers["authorization"] == "Bearer jurybox-local"


def test_the_direct_path_never_imports_the_sdk() -> None:
    import subprocess
    import sys

    code = (
        "import asyncio, sys\n"
        "from jurybox.models import get_model\n"
        "model = get_model('openai:m', base_url='http://127.0.0.1:9/v1', cache=False)\n"
        "client = model._make_client(2)\n"
        "print(type(client).__name__, 'openai' in sys.modules, 'httpx2' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["DirectClient", "False", "False"]


def test_without_the_sdk_streaming_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "openai", None)  # as if not installed: importing it raises ImportError
    direct = get_model("openai:m", base_url="http://127.0.0.1:9/v1", cache=False)
    assert direct._make_client(1).url == "http://127.0.0.1:9/v1/chat/completions"  # type: ignore[attr-defined]
    for options in ({"stream": True}, {"http_transport": "httpx"}, {"http_transport": "aiohttp"}):
        with pytest.raises(ModelConfigError, match=r"needs openai: pip install 'jurybox\[openai\]'$"):
            get_model("openai:m", base_url="http://127.0.0.1:9/v1", cache=False, **options)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_clients_share_one_tls_context_that_verifies(transport: str) -> None:
    import ssl

    model = get_model("openai:m", base_url="https://example.invalid/v1", http_transport=transport)
    first, second = (model._make_client(1) for _ in range(2))  # type: ignore[attr-defined]
    assert openai_adapter.ssl_context() is openai_adapter.ssl_context()
    context = openai_adapter.ssl_context()
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert first is not second


def _record_direct_sessions(model: Any) -> list[Any]:
    """The aiohttp sessions the model's direct path opens, in order."""
    sessions: list[Any] = []
    make_session = model._direct_session

    def recording(direct: Any) -> Any:
        sessions.append(make_session(direct))
        return sessions[-1]

    model._direct_session = recording
    return sessions


@NEEDS_AIOHTTP
async def test_auto_is_the_direct_path_which_bypasses_the_sdk(monkeypatch: pytest.MonkeyPatch) -> None:
    import openai

    async def no_sdk(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the direct path must not go through the SDK's post")

    monkeypatch.setattr(openai.AsyncOpenAI, "post", no_sdk)
    with StubServer("openai", reply="PASS") as stub:
        model = get_model("openai:m", base_url=stub.base_url, cache=False)
        assert model.http_transport == "direct"  # type: ignore[attr-defined]
        assert (await model.generate(PROMPT)).text == "PASS"
        await model.aclose()
    monkeypatch.undo()
    # Streaming still goes through the SDK (chat.completions.create, with its aiohttp transport).
    with StubServer("openai", reply="streamed") as stub:
        model = get_model("openai:m", base_url=stub.base_url, cache=False, stream=True)
        assert (await model.generate(PROMPT)).text == "streamed"
        assert stub.requests[0].body["stream"] is True
        await model.aclose()


@NEEDS_AIOHTTP
async def test_direct_sends_the_bytes_and_headers_the_sdk_sends() -> None:
    with StubServer("openai", reply="ok") as stub:
        for transport in ("aiohttp", "direct", "httpx"):
            model = get_model(
                "openai:m",
                base_url=stub.base_url,
                api_key="sk-test",
                organization="org-1",
                cache=False,
                timeout=12.5,
                params={"top_p": 0.5, "note": "héllo"},
                http_transport=transport,
            )
            await model.generate(PROMPT, max_tokens=5, seed=7, json_schema={"type": "object"})
            await model.aclose()
    sdk, direct, httpx = stub.requests
    assert direct.raw == sdk.raw == httpx.raw  # the same JSON bytes (compact, UTF-8, extra params merged)
    assert direct.path == sdk.path == "/v1/chat/completions"
    # Header order is not compared (aiohttp writes its defaults last). "connection: keep-alive" is
    # the httpx2 client's (HTTP/1.1 connections are persistent without it); the direct path, which
    # never imports the SDK, leaves out its telemetry (x-stainless-*) and says it is jurybox.
    sdk_headers = {k: v for k, v in sdk.headers.items() if k != "connection"}
    assert {k: v for k, v in httpx.headers.items() if k != "connection"} == sdk_headers
    assert sdk_headers["x-stainless-read-timeout"] == "12.5" and sdk_headers["x-stainless-retry-count"] == "0"
    assert sdk_headers["user-agent"].startswith("AsyncOpenAI/") and direct.headers["user-agent"] == "jurybox"
    same = {k: v for k, v in sdk_headers.items() if not k.startswith("x-stainless") and k != "user-agent"}
    assert {k: v for k, v in direct.headers.items() if k != "user-agent"} == same
    assert same["authorization"] == "Bearer sk-test" and same["openai-organization"] == "org-1"
    assert same["content-type"] == "application/json" and same["accept"] == "application/json"


STRUCTURED_REJECTION = {
    "error": {
        "message": "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.",
        "type": "invalid_request_error",
        "param": "response_format",
        "code": None,
    }
}


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_server_rejecting_response_format_gets_text_instead(transport: str) -> None:
    with StubServer("openai", reply='{"score": 1}') as stub:
        model = get_model(
            "openai:m", base_url=stub.base_url, cache=False, http_transport=transport, retry=RetryPolicy(max_retries=0)
        )
        stub.fail(400, body=STRUCTURED_REJECTION)
        assert (await model.generate(PROMPT, json_schema={"type": "object"})).text == '{"score": 1}'
        assert model.structured_output is False
        stub.fail(400, body={"error": {"message": "model not found", "type": "invalid_request_error"}})
        with pytest.raises(RequestRejectedError) as caught:  # another 400 is not a reason to drop the schema
            await model.generate(PROMPT, json_schema={"type": "object"})
        await model.aclose()
    assert ["response_format" in r.body for r in stub.requests] == [True, False, False]
    assert (caught.value.status, caught.value.provider_message) == (400, "model not found")


async def _failure(transport: str, fault: Any, **options: Any) -> Any:
    sleep = RecordedSleep()
    with StubServer("openai", reply="fine") as stub:
        model = get_model(
            "openai:m",
            base_url=stub.base_url,
            cache=False,
            http_transport=transport,
            retry=RetryPolicy(sleep=sleep, **options),
        )
        fault(stub)
        try:
            outcome: Any = (await model.generate(PROMPT)).text
        except ProviderError as error:
            outcome = error
        await model.aclose()
    return outcome, sleep.waits, len(stub.requests)


FAULTS = {
    "429 then success": (lambda stub: stub.fail(429, retry_after=7), {}),
    "429 exhausted": (lambda stub: stub.fail(429, retry_after="2", times=5), {"max_retries": 1}),
    "retry-after-ms": (lambda stub: stub.fail(429, headers={"retry-after-ms": "1500"}, times=5), {"max_retries": 0}),
    "500": (lambda stub: stub.fail(500, times=5), {"max_retries": 0}),
    "503 with retry-after": (lambda stub: stub.fail(503, retry_after=3, times=5), {"max_retries": 0}),
    "quota": (
        lambda stub: stub.fail(
            429, body={"error": {"message": "You exceeded your quota", "code": "insufficient_quota"}}
        ),
        {},
    ),
    "401 text body": (lambda stub: stub.fail(401, body=" not json at all \n"), {}),
    "404 unwrapped json": (lambda stub: stub.fail(404, body={"message": "no such model", "code": "nf"}), {}),
}


@NEEDS_AIOHTTP
@pytest.mark.parametrize("fault", list(FAULTS))
async def test_direct_reports_http_errors_exactly_as_the_sdk_path(fault: str) -> None:
    inject, options = FAULTS[fault]
    sdk = await _failure("aiohttp", inject, **options)
    direct = await _failure("direct", inject, **options)
    sdk_outcome, direct_outcome = sdk[0], direct[0]
    if isinstance(sdk_outcome, str):
        assert direct == sdk
        return
    assert type(direct_outcome) is type(sdk_outcome)
    assert str(direct_outcome) == str(sdk_outcome)
    fields = ("status", "code", "provider_message", "retry_after", "attempts", "retryable")
    assert [getattr(direct_outcome, f) for f in fields] == [getattr(sdk_outcome, f) for f in fields]
    assert direct[1:] == sdk[1:]  # the same waits and the same number of requests
    if fault == "429 exhausted":
        assert isinstance(direct_outcome, RateLimitError) and direct_outcome.retry_after == 2.0
        assert direct_outcome.attempts == 2 and direct[1] == [2.0]
    if fault == "500":
        assert isinstance(direct_outcome, ServerError) and direct_outcome.status == 500


@NEEDS_AIOHTTP
async def test_direct_connection_errors_and_timeouts() -> None:
    with StubServer("openai", reply="fine") as stub:
        base_url = stub.base_url
        model = get_model(
            "openai:m",
            base_url=base_url,
            cache=False,
            http_transport="direct",
            timeout=0.3,
            retry=RetryPolicy(max_retries=0),
        )
        stub.drop()
        with pytest.raises(ModelConnectionError, match=rf"connection to {stub.base_url} failed: .*Disconnected"):
            await model.generate(PROMPT)
        stub.slow(2.0)
        with pytest.raises(ModelTimeoutError, match=r"timed out after 0\.3s") as caught:
            await model.generate(PROMPT)
        assert caught.value.retryable and caught.value.status is None
        assert (await model.generate(PROMPT)).text == "fine"
        await model.aclose()
    refused = get_model(
        "openai:m", base_url=base_url, cache=False, http_transport="direct", retry=RetryPolicy(max_retries=0)
    )
    with pytest.raises(ModelConnectionError, match=rf"connection refused at {base_url}") as refusal:  # stub stopped
        await refused.generate(PROMPT)
    assert type(refusal.value.__cause__).__name__ == "ClientConnectorError"  # the detail stays the cause
    await refused.aclose()


@NEEDS_AIOHTTP
async def test_direct_connections_stay_within_concurrency_per_lane() -> None:
    with StubServer("openai", reply="ok", latency=0.2) as stub:
        model = get_model("openai:m", base_url=stub.base_url, concurrency=40, cache=False, http_transport="direct")
        sessions = _record_direct_sessions(model)
        await asyncio.gather(*(model.generate([{"role": "user", "content": f"{i}"}]) for i in range(160)))
        assert sorted(session.connector.limit for session in sessions) == [20, 20]  # the lane sizes
        await model.aclose()
    assert len(stub.requests) == 160 and stub.max_in_flight == 40
    assert stub.connections <= 40


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_vcrpy_records_and_replays_every_transport(transport: str, tmp_path: Path) -> None:
    # vcrpy patches aiohttp.ClientSession._request (direct, and the SDK's aiohttp transport) and
    # httpx2's transports (the SDK's httpx client); the pytest plugin's cassettes rely on that.
    from jurybox.pytest_plugin import CassetteSettings, use_cassette

    cassette = tmp_path / "judge.yaml"
    with StubServer("openai", reply="recorded PASS") as stub:
        base_url = stub.base_url
        with use_cassette(cassette, record_mode="once", settings=CassetteSettings()):
            model = get_model("openai:m", base_url=base_url, cache=False, http_transport=transport)
            assert (await model.generate(PROMPT)).text == "recorded PASS"
            await model.aclose()
    assert len(stub.requests) == 1 and "recorded PASS" in cassette.read_text(encoding="utf-8")
    # The stub is gone: the reply can only come from the cassette, and record mode none blocks the network.
    with use_cassette(cassette, record_mode="none", settings=CassetteSettings()) as replaying:
        model = get_model("openai:m", base_url=base_url, cache=False, http_transport=transport)
        response = await model.generate(PROMPT)
        await model.aclose()
    assert response.text == "recorded PASS" and (response.usage.input_tokens or 0) > 0
    assert replaying.jurybox_guard.attempts == []


async def test_only_https_base_urls_load_the_tls_context(monkeypatch: pytest.MonkeyPatch) -> None:
    loaded: list[str] = []
    real = openai_adapter.ssl_context
    monkeypatch.setattr(openai_adapter, "ssl_context", lambda: loaded.append("ca") or real())
    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)

    transports: tuple[HttpTransport, ...] = ("direct", "aiohttp", "httpx")
    for transport in transports:
        local = OpenAIModel("m", base_url="http://127.0.0.1:9/v1", http_transport=transport)
        await local._close_client(local._make_client(2))
    assert loaded == []  # a local server's run skips the CA bundle (and, on the direct path, httpcore2)

    remote = OpenAIModel("m", base_url="https://llm.example.invalid/v1", api_key="k", http_transport="aiohttp")
    await remote._close_client(remote._make_client(2))
    assert loaded == ["ca"]


async def test_a_direct_model_has_no_sdk_client() -> None:
    model = OpenAIModel("m", base_url="http://127.0.0.1:9/v1", http_transport="direct")
    client = model._make_client(2)
    assert isinstance(client, openai_adapter.DirectClient) and client.is_closed()
    await model._close_client(client)
