"""The stub serves the OpenAI Responses API and Ollama's /api/generate in the real wire shapes."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import openai
import pytest

from jurybox.stubs import StubReply, StubServer, StubToolCall, load_cassette

CASSETTES = Path(__file__).resolve().parents[1] / "data" / "cassettes" / "stubs"


def test_the_official_sdk_reads_a_responses_reply_and_a_function_call() -> None:
    replies = [StubReply(tool_calls=(StubToolCall("get_time", {"tz": "Europe/Paris"}, id="call_9"),)), "It is noon."]
    with StubServer("openai", reply=replies) as stub:
        client = openai.OpenAI(base_url=stub.base_url, api_key="test", max_retries=0)
        first = client.responses.create(model="gpt-4.1-mini", input="What time is it in Paris?")
        second = client.responses.create(
            model="gpt-4.1-mini",
            instructions="Answer briefly.",
            input=[
                {"role": "user", "content": "What time is it in Paris?"},
                {"type": "function_call", "call_id": "call_9", "name": "get_time", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "call_9", "output": "12:00"},
            ],
        )
        client.close()
    (call,) = first.output
    assert (call.type, call.name, call.call_id, json.loads(call.arguments)) == (
        "function_call",
        "get_time",
        "call_9",
        {"tz": "Europe/Paris"},
    )
    assert first.status == "completed" and first.object == "response"
    assert second.output_text == "It is noon."
    assert second.usage is not None
    assert second.usage.total_tokens == second.usage.input_tokens + second.usage.output_tokens
    assert second.instructions == "Answer briefly."
    assert stub.requests[1].path == "/v1/responses"


def test_the_responses_stream_has_the_real_event_names_in_order() -> None:
    with StubServer("openai", reply="Streaming works fine.") as stub:
        client = openai.OpenAI(base_url=stub.base_url, api_key="test", max_retries=0)
        with client.responses.stream(model="m", input="hi") as stream:
            kinds = [event.type for event in stream]
            final = stream.get_final_response()
        client.close()
        raw = httpx.post(f"{stub.base_url}/responses", json={"model": "m", "input": "hi", "stream": True}).text
    assert kinds[:4] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
    ]
    assert kinds.count("response.output_text.delta") == 3
    assert kinds[-4:] == [
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert final.output_text == "Streaming works fine."
    # SSE frames carry the event name and a sequence number that counts up from 0.
    frames = [frame for frame in raw.split("\n\n") if frame]
    assert frames[0].startswith("event: response.created\ndata: ")
    numbers = [json.loads(frame.split("data: ", 1)[1])["sequence_number"] for frame in frames]
    assert numbers == list(range(len(frames)))


def test_a_streamed_function_call_arrives_in_argument_deltas() -> None:
    reply = StubReply(tool_calls=(StubToolCall("lookup", {"query": "beach house rules"}),))
    with StubServer("openai", reply=reply) as stub:
        client = openai.OpenAI(base_url=stub.base_url, api_key="test", max_retries=0)
        with client.responses.stream(model="m", input="rules?") as stream:
            deltas = [e.delta for e in stream if e.type == "response.function_call_arguments.delta"]
            final = stream.get_final_response()
        client.close()
    assert json.loads("".join(deltas)) == {"query": "beach house rules"}
    assert final.output[0].type == "function_call"


def test_a_responses_request_without_input_is_a_400_like_the_real_api() -> None:
    with StubServer("openai") as stub:
        answer = httpx.post(f"{stub.base_url}/responses", json={"model": "m"})
    assert answer.status_code == 400
    assert answer.json()["error"]["message"] == "Missing required parameter: 'input'."


def _recorded_lines(name: str) -> list[dict[str, object]]:
    (recorded,) = load_cassette(CASSETTES / name)
    return [json.loads(line) for line in recorded.body.decode().splitlines() if line.strip()]


@pytest.mark.parametrize("stream", [False, True], ids=["stream-false", "ndjson"])
def test_ollama_generate_sends_the_fields_a_real_server_sends(stream: bool) -> None:
    cassette = "openllmetry__ollama_streaming_generate__ndjson.yaml" if stream else "openllmetry__ollama_generate.yaml"
    recorded = _recorded_lines(cassette)
    with StubServer("ollama", reply="Why did the span cross the road?") as stub:
        answer = httpx.post(f"{stub.url}/api/generate", json={"model": "llama3", "prompt": "A joke", "stream": stream})
    assert answer.headers["content-type"] == ("application/x-ndjson" if stream else "application/json")
    lines = [json.loads(line) for line in answer.text.splitlines() if line.strip()]
    assert len(lines) == (8 if stream else 1)  # seven words, then the closing line
    # Each line has exactly the keys the recorded Ollama server sent in the same position.
    assert set(lines[-1]) == set(recorded[-1])
    if stream:
        assert {frozenset(line) for line in lines[:-1]} == {frozenset(recorded[0])}
    assert "".join(str(line["response"]) for line in lines) == "Why did the span cross the road?"
    assert lines[-1]["done"] is True and lines[-1]["done_reason"] == "stop"
    assert all(isinstance(token, int) for token in lines[-1]["context"])  # type: ignore[attr-defined]
    assert stub.requests[0].body["prompt"] == "A joke"
