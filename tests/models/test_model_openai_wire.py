"""The OpenAI adapter reads the reply body itself: what it accepts, and what it refuses loudly."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from models_helpers import CASSETTES

from jurybox.models import (
    ModelConfigError,
    ModelConnectionError,
    ModelTimeoutError,
    ProviderError,
    RetryPolicy,
    get_model,
)
from jurybox.models import _openai as openai_adapter
from jurybox.models._openai import aiohttp_installed
from jurybox.stubs import RecordedResponse, StubServer

PROMPT = [{"role": "user", "content": "Grade this."}]
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
async def test_an_unusable_200_reply_is_an_error_never_an_empty_answer(reply: RecordedResponse, reason: str) -> None:
    with pytest.raises(ProviderError, match=reason) as caught:
        await _generate([reply])
    assert caught.value.retryable is False and caught.value.provider == "openai"


TRANSPORTS = ["httpx", pytest.param("aiohttp", marks=pytest.mark.skipif(not aiohttp_installed(), reason="no aiohttp"))]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_both_sdk_transports_read_real_gzip_traffic_and_report_failures_truly(transport: str) -> None:
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
        stub.slow(2.0)
        with pytest.raises(ModelTimeoutError, match=r"no reply within 0\.3 s"):
            await model.generate(PROMPT)


def test_unknown_or_missing_transport_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ModelConfigError, match="http_transport must be"):
        get_model("openai:m", base_url="http://127.0.0.1:9", http_transport="curl")
    monkeypatch.setattr(openai_adapter, "aiohttp_installed", lambda: False)
    with pytest.raises(ModelConfigError, match=r"pip install \"openai\[aiohttp\]\""):
        get_model("openai:m", base_url="http://127.0.0.1:9", http_transport="aiohttp")
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
        for _ in range(2):  # like evaluate(): each call in its own asyncio.run
            assert asyncio.run(model.generate(PROMPT)).text == "fine"
    assert len(clients) == 2 and all(client.is_closed() for client in clients)


async def test_aclose_closes_the_clients_of_the_running_loop() -> None:
    with StubServer("openai", reply="fine") as stub:
        model = get_model("openai:m", base_url=stub.base_url, cache=False)
        await model.generate(PROMPT)
        clients = [lane.client for state in model._states.values() for lane in state.lanes]
        await model.aclose()
        assert clients and all(client.is_closed() for client in clients)
        assert (await model.generate(PROMPT)).text == "fine"  # a later call opens a fresh client
        await model.aclose()


@pytest.mark.parametrize("base_url", ["https://api.openai.com/v1", "http://127.0.0.1:9/a/b/", "http://127.0.0.1:9"])
def test_the_request_is_the_one_the_sdk_builds_from_the_relative_path(base_url: str) -> None:
    from openai._models import FinalRequestOptions

    model = get_model("openai:m", base_url=base_url, cache=False, timeout=12.5)
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


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_clients_share_one_tls_context_that_verifies(transport: str) -> None:
    import ssl

    model = get_model("openai:m", base_url="https://example.invalid/v1", http_transport=transport)
    first, second = (model._make_client(1) for _ in range(2))  # type: ignore[attr-defined]
    assert openai_adapter._ssl_context() is openai_adapter._ssl_context()
    context = openai_adapter._ssl_context()
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert first is not second
