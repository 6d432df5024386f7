"""Real SDK exports (OTLP/JSON lines and protobuf) read into Contexts under both conventions."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from otel_exports import genai_agent, openinference_agent, plain_http, record, write_json_lines, write_protobuf

from jurybox.core import Context
from jurybox.traces import ReadStats, read_traces


def _write(tmp_path: Path, kind: str, spans: list, batches: int = 1) -> Path:
    size = max(1, len(spans) // batches)
    chunks = [spans[i : i + size] for i in range(0, len(spans), size)]
    if kind == "json":
        return write_json_lines(tmp_path / "traces.jsonl", chunks)
    return write_protobuf(tmp_path / "traces.pb", chunks)


@pytest.fixture(params=["json", "protobuf"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_a_genai_agent_becomes_one_context_with_its_tool_call(tmp_path: Path, kind: str) -> None:
    path = _write(tmp_path, kind, record(genai_agent), batches=3)
    stats = ReadStats()
    [context] = list(read_traces(path, stats=stats))
    assert context.input == "Find me a hotel in Lisbon for two nights"
    assert context.output == "Casa Azul in Lisbon costs 95 EUR a night."
    [call] = context.tool_calls
    assert (call.name, dict(call.arguments), call.id) == ("search_hotels", {"city": "Lisbon", "nights": 2}, "call_1")
    assert call.result == [{"name": "Casa Azul", "price": 95}]
    assert context.metadata["usage"] == {"input_tokens": 280, "output_tokens": 50}
    assert context.metadata["tokens"] == 330
    assert context.metadata["model"] == "gpt-4o-mini-2024-07-18"
    assert context.metadata["service"] == "travel-agent"
    assert context.metadata["model_call_count"] == 2
    assert [m.role for m in context.messages] == ["user", "assistant"]  # the last model call's
    assert context.status == "completed" and context.duration is not None and context.started_at is not None
    assert (stats.traces, stats.contexts, stats.spans) == (1, 1, 4)


def test_an_openinference_agent_becomes_a_context(tmp_path: Path, kind: str) -> None:
    path = _write(tmp_path, kind, record(openinference_agent))
    [context] = list(read_traces(path))
    assert context.input == "Weather in Oslo?"
    assert context.output == "It is 4 C and snowing in Oslo."
    [call] = context.tool_calls
    assert (call.name, dict(call.arguments), call.result) == ("get_weather", {"city": "Oslo"}, "4 C and snow")
    assert context.metadata["usage"] == {"input_tokens": 120, "output_tokens": 22}


def test_a_failed_tool_is_recorded_as_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path, "json", record(functools.partial(genai_agent, fail_tool=True)))
    [context] = list(read_traces(path))
    assert context.metadata["errors"] == [{"span": "execute_tool search_hotels", "error": "hotel API down"}]
    assert context.status == "completed"  # the agent itself answered
    assert context.tool_calls[0].result is None


def test_many_traces_in_many_batches_each_become_a_context(tmp_path: Path, kind: str) -> None:
    scenarios = [functools.partial(genai_agent, city=f"City{i}") for i in range(30)]
    path = _write(tmp_path, kind, record(*scenarios, openinference_agent, plain_http), batches=17)
    stats = ReadStats()
    contexts = list(read_traces(path, stats=stats, settle=2))
    assert len(contexts) == 31
    assert {c.tool_calls[0].arguments["city"] for c in contexts if c.tool_calls[0].name == "search_hotels"} == {
        f"City{i}" for i in range(30)
    }
    assert stats.skipped["trace with no GenAI or OpenInference span"] == 1
    assert stats.skipped["span after its trace was judged complete"] == 0


def test_tool_calls_come_from_model_messages_when_there_is_no_tool_span(tmp_path: Path) -> None:
    import json

    def chat_only(tracer) -> None:  # type: ignore[no-untyped-def]
        with tracer.start_as_current_span("chat m") as chat:
            chat.set_attribute("gen_ai.operation.name", "chat")
            chat.set_attribute("gen_ai.input.messages", json.dumps([{"role": "user", "content": "2+2?"}]))
            call = {"type": "tool_call", "id": "c1", "name": "add", "arguments": '{"a": 2, "b": 2}'}
            chat.set_attribute("gen_ai.output.messages", json.dumps([{"role": "assistant", "parts": [call]}]))
        with tracer.start_as_current_span("chat m") as chat:
            chat.set_attribute("gen_ai.operation.name", "chat")
            reply = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "4"}]}
            chat.set_attribute("gen_ai.input.messages", json.dumps([{"role": "user", "content": "2+2?"}, reply]))
            chat.set_attribute(
                "gen_ai.output.messages",
                json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": "4"}]}]),
            )

    def both(tracer) -> None:  # type: ignore[no-untyped-def]
        with tracer.start_as_current_span("request"):
            chat_only(tracer)

    path = _write(tmp_path, "json", record(both))
    [context] = list(read_traces(path))
    assert [(c.name, dict(c.arguments), c.result) for c in context.tool_calls] == [("add", {"a": 2, "b": 2}, 4)]
    assert (context.input, context.output) == ("2+2?", "4")


def test_a_context_from_a_trace_round_trips_through_to_dict(tmp_path: Path) -> None:
    path = _write(tmp_path, "json", record(genai_agent))
    [context] = list(read_traces(path))
    assert Context.from_dict(context.to_dict()).tool_calls == context.tool_calls
