"""The official OpenAI SDK instrumented by OpenTelemetry's GenAI instrumentor, against the stub provider.

``opentelemetry-instrumentation-openai-v2`` (pinned with a ``opentelemetry-util-genai`` it
imports with: see the ``bridges`` extra) records each chat completion as a ``chat MODEL``
span under the GenAI conventions, the messages in ``gen_ai.input.messages`` and
``gen_ai.output.messages`` when content capture on spans is on. An app that calls the model,
runs the tool it asked for and calls again, under one span of its own, is one trace; jurybox
reads it (as spans from the SDK, and as the OTLP protobuf a sender would post) into one
Context with the tool call, its arguments and its result.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("openai", reason="the OpenAI SDK is not installed (pip install openai)")
pytest.importorskip(
    "opentelemetry.instrumentation.openai_v2",
    reason="the OpenTelemetry GenAI instrumentor is not installed: pip install 'jurybox[bridges]' "
    "(opentelemetry-instrumentation-openai-v2 with a matching opentelemetry-util-genai)",
)

from openai import OpenAI
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from jurybox.stubs import StubReply, StubServer, StubToolCall
from jurybox.traces import ReadStats, contexts_of_trace, spans_from_proto_bytes, spans_from_sdk

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "nightly_rate",
            "description": "The nightly rate of a listing.",
            "parameters": {"type": "object", "properties": {"listing": {"type": "string"}}, "required": ["listing"]},
        },
    }
]


def scripted(body: dict[str, Any]) -> StubReply:
    tools = [m for m in body.get("messages", []) if m.get("role") == "tool"]
    if not tools:
        return StubReply(tool_calls=(StubToolCall("nightly_rate", {"listing": "Beach House"}, id="call_1"),))
    return StubReply(text=f"The Beach House costs {tools[-1]['content']} a night.")


@pytest.fixture
def spans(monkeypatch: pytest.MonkeyPatch) -> Iterator[InMemorySpanExporter]:
    # Message content is off by default (it may hold personal data); on spans, it is what jurybox reads.
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "span_only")
    monkeypatch.setenv("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental")
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "rentals"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        with StubServer("openai", reply=scripted) as stub:
            client = OpenAI(base_url=stub.url + "/v1", api_key="k", max_retries=0)
            _agent(client, provider.get_tracer("rentals"))
    finally:
        instrumentor.uninstrument()  # the SDK is patched process-wide: other tests use it too
    yield memory


def _agent(client: OpenAI, tracer: Any) -> str:
    """A hand-written tool loop: the model asks for the tool, the app runs it, the model answers."""
    with tracer.start_as_current_span("rentals question"):
        messages: list[dict[str, Any]] = [{"role": "user", "content": "What is the rate of the Beach House?"}]
        first = client.chat.completions.create(model="stub-model", messages=messages, tools=TOOLS)  # type: ignore[arg-type]
        [call] = first.choices[0].message.tool_calls or []
        assert json.loads(call.function.arguments) == {"listing": "Beach House"}  # type: ignore[union-attr]
        messages += [
            first.choices[0].message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": call.id, "content": "$320"},
        ]
        second = client.chat.completions.create(model="stub-model", messages=messages, tools=TOOLS)  # type: ignore[arg-type]
        return second.choices[0].message.content or ""


def _check(contexts: list[Any]) -> None:
    [context] = contexts
    assert context.input == "What is the rate of the Beach House?"
    assert context.output == "The Beach House costs $320 a night."
    [call] = context.tool_calls
    assert call.name == "nightly_rate" and dict(call.arguments) == {"listing": "Beach House"}
    assert call.result == "$320" and call.id == "call_1"
    assert context.metadata["model_call_count"] == 2 and context.metadata["tokens"] > 0
    assert context.metadata["service"] == "rentals"


def test_the_instrumented_openai_sdk_gives_the_tool_call_and_its_arguments(spans: InMemorySpanExporter) -> None:
    finished = spans.get_finished_spans()
    assert [s.attributes.get("gen_ai.operation.name") for s in finished if s.name.startswith("chat")] == ["chat"] * 2
    stats = ReadStats()
    _check(contexts_of_trace(spans_from_sdk(finished), stats))
    # The same spans as a sender posts them to /v1/traces (OTLP protobuf), read back.
    body = encode_spans(finished).SerializeToString()
    _check(contexts_of_trace(spans_from_proto_bytes(body, ReadStats(), "body"), ReadStats()))
