"""Real recorded provider traffic, replayed byte for byte by the stub, read by the adapters.

The cassettes (tests/data/cassettes/models, see tests/data/SOURCES.md) hold real OpenAI,
Anthropic and Ollama responses: gzip bodies, SSE and NDJSON streams, json_schema
replies, a refusal, tool use and error bodies. Expected values are read from the
recorded bodies with plain json, independently of the SDKs the adapters use.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from models_helpers import CASSETTES

from jurybox.models import ModelResponse, RequestRejectedError, RetryPolicy, get_model
from jurybox.stubs import StubServer, load_cassette

PROMPT = [{"role": "user", "content": "Tell me a joke about OpenTelemetry"}]
SCHEMA = {"type": "object", "properties": {"joke": {"type": "string"}, "rating": {"type": "integer"}}}


def recorded_body(name: str, index: int = 0) -> bytes:
    response = load_cassette(CASSETTES / name)[index]
    encoding = dict((k.lower(), v) for k, v in response.headers).get("content-encoding")
    return gzip.decompress(response.body) if encoding == "gzip" else response.body


def sse_events(body: bytes) -> list[dict[str, Any]]:
    events = []
    for line in body.decode().splitlines():
        payload = line.removeprefix("data:").strip()
        if line.startswith("data:") and payload != "[DONE]":
            events.append(json.loads(payload))
    return events


async def replay(
    provider: str, name: str, *, index: int = 0, model: str = "m", json_schema: Any = None, **options: Any
) -> tuple[ModelResponse, StubServer]:
    with StubServer(provider, replay=Path(CASSETTES / name), interactions=[index]) as stub:  # type: ignore[arg-type]
        judge = get_model(
            f"{provider}:{model}", base_url=stub.base_url, cache=False, retry=RetryPolicy(max_retries=0), **options
        )
        response = await judge.generate(PROMPT, json_schema=json_schema)
    return response, stub


# ---------------------------------------------------------------- OpenAI


async def test_openai_gzip_json_completion() -> None:
    name = "openllmetry__test_chat_tool_calls__gzip.yaml"
    recorded = json.loads(recorded_body(name))
    response, _ = await replay("openai", name, model="gpt-3.5-turbo")
    assert response.text == recorded["choices"][0]["message"]["content"]
    assert response.text == "The weather in San Francisco is 70 degrees and sunny."
    assert (response.usage.input_tokens, response.usage.output_tokens) == (40, 12)
    assert response.finish_reason == "stop"
    assert response.cost == pytest.approx((40 * 0.50 + 12 * 1.50) / 1e6)
    assert response.raw["id"] == recorded["id"]


@pytest.mark.parametrize("index", [0, 1, 2])
async def test_openai_sse_stream(index: int) -> None:
    name = "openllmetry__test_chat_streaming_with_events__sse.yaml"
    events = sse_events(recorded_body(name, index))
    expected = "".join(e["choices"][0]["delta"].get("content") or "" for e in events if e["choices"])
    response, _ = await replay("openai", name, index=index, stream=True)
    assert response.text == expected and response.text.startswith("Why")
    assert response.finish_reason == "stop"


async def test_openai_json_schema_reply_gzip() -> None:
    response, stub = await replay(
        "openai", "openllmetry__test_chat_response_format__json_schema_gzip.yaml", json_schema=SCHEMA
    )
    assert json.loads(response.text)["rating"] == 7
    assert (response.usage.input_tokens, response.usage.output_tokens) == (83, 32)
    assert stub.requests[0].body["response_format"]["type"] == "json_schema"


async def test_openai_refusal_is_kept_as_text_never_as_an_answer() -> None:
    response, _ = await replay(
        "openai", "openllmetry__test_parsed_refused_completion__json_schema_refusal_gzip.yaml", json_schema=SCHEMA
    )
    assert response.text == "I'm very sorry, but I can't assist with that request."
    assert response.finish_reason == "refusal"


async def test_openai_compatible_deepseek_stream_leaves_reasoning_out_of_the_text() -> None:
    name = "ddtrace__deepseek_streamed_reasoning_content__sse.yaml"
    events = sse_events(recorded_body(name))
    expected = "".join(e["choices"][0]["delta"].get("content") or "" for e in events if e["choices"])
    reasoning = "".join(e["choices"][0]["delta"].get("reasoning_content") or "" for e in events if e["choices"])
    response, _ = await replay("openai", name, stream=True)
    assert response.text == expected and expected
    assert reasoning and reasoning not in response.text
    assert response.usage.input_tokens == next(e["usage"] for e in events if e.get("usage"))["prompt_tokens"]


# ---------------------------------------------------------------- Anthropic


async def test_anthropic_sse_text_stream() -> None:
    name = "llm-anthropic__test_prompt.yaml"
    events = sse_events(recorded_body(name))
    expected = "".join(e["delta"].get("text", "") for e in events if e["type"] == "content_block_delta")
    response, _ = await replay("anthropic", name, stream=True)
    assert response.text == expected and "Captain" in expected
    assert response.finish_reason == "end_turn"
    assert response.usage.input_tokens == 17


async def test_anthropic_gzip_sse_json_reply() -> None:
    response, _ = await replay("anthropic", "llm-anthropic__test_schema_prompt.yaml", stream=True)
    assert json.loads(response.text)["name"] == "Biscuit"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (230, 94)


async def test_anthropic_gzip_json_structured_output() -> None:
    response, _ = await replay(
        "anthropic",
        "openllmetry__test_anthropic_structured_outputs__json_schema_gzip.yaml",
        model="claude-haiku-4-5",
        json_schema=SCHEMA,
    )
    assert json.loads(response.text)["rating"] == 7
    assert (response.usage.input_tokens, response.usage.output_tokens) == (222, 39)
    assert response.cost == pytest.approx((222 * 1.0 + 39 * 5.0) / 1e6)


async def test_anthropic_gzip_sse_tool_use_is_the_structured_answer() -> None:
    name = "llm-anthropic__test_stream_events_tool_calls__sse.yaml"
    events = sse_events(recorded_body(name))
    partial = "".join(e["delta"].get("partial_json", "") for e in events if e["type"] == "content_block_delta")
    response, stub = await replay("anthropic", name, stream=True, json_schema={"type": "object"})
    assert json.loads(response.text) == (json.loads(partial) if partial else {})
    assert response.finish_reason == "tool_use"
    assert stub.requests[0].body["tool_choice"]["type"] == "tool"


async def test_anthropic_400_error_body() -> None:
    with pytest.raises(RequestRejectedError) as caught:
        await replay("anthropic", "ddtrace__anthropic_completion_error__400.yaml")
    error = caught.value
    assert (error.status, error.code, error.attempts) == (400, "invalid_request_error", 1)
    assert error.provider_message == "messages.0: Input does not match the expected shape."


# ---------------------------------------------------------------- Ollama


async def test_ollama_json_chat() -> None:
    name = "openllmetry__ollama_chat.yaml"
    recorded = json.loads(recorded_body(name))
    response, _ = await replay("ollama", name, model="llama3")
    assert response.text == recorded["message"]["content"]
    assert (response.usage.input_tokens, response.usage.output_tokens) == (17, 66)
    assert response.finish_reason == "stop"
    assert response.cost is None  # no price for a local model unless set: unknown, not 0


async def test_ollama_ndjson_stream() -> None:
    name = "openllmetry__ollama_streaming_chat__ndjson.yaml"
    lines = [json.loads(line) for line in recorded_body(name).decode().splitlines() if line.strip()]
    response, _ = await replay("ollama", name, model="llama3", stream=True)
    assert response.text == "".join(line["message"]["content"] for line in lines)
    assert response.usage.output_tokens == lines[-1]["eval_count"]


async def test_ollama_thinking_stays_out_of_the_text() -> None:
    name = "openinference__ollama_chat_with_tool_call__qwen_thinking.yaml"
    recorded = json.loads(recorded_body(name))
    response, _ = await replay("ollama", name)
    assert response.text == recorded["message"]["content"] == ""
    assert recorded["message"]["thinking"] not in response.text or not response.text
    assert response.raw["message"]["tool_calls"][0]["function"]["name"] == "get_current_weather"


async def test_ollama_404_model_not_found_is_not_retried() -> None:
    with pytest.raises(RequestRejectedError) as caught:
        await replay("ollama", "openinference__ollama_chat_error__404.yaml")
    assert caught.value.status == 404 and caught.value.attempts == 1
    assert caught.value.provider_message == "model 'nonexistent-model:latest' not found"
