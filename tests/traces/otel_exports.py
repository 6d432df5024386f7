"""Real trace exports made with the OpenTelemetry SDK: a travel agent traced under each convention.

The spans are made by the SDK's own tracer and encoded by the OTLP exporter's own encoder
(``encode_spans``), then written as the Collector's file exporter writes them: OTLP/JSON
one request a line (ids in hex), or protobuf requests each after a 4-byte length.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode, Tracer

Scenario = Callable[[Tracer], None]


def record(*scenarios: Scenario, service: str = "travel-agent") -> list[ReadableSpan]:
    """Run scenarios under a fresh SDK tracer; the finished spans, in the order they ended."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("tests.traces")
    for scenario in scenarios:
        scenario(tracer)
    provider.shutdown()
    return list(exporter.get_finished_spans())


def to_otlp_json(request: Any) -> dict[str, Any]:
    """An ExportTraceServiceRequest as OTLP/JSON: camelCase, ids as hex (as the Collector writes it)."""
    data = MessageToDict(request)
    for resource in data.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for span in scope.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        import base64

                        span[key] = base64.b64decode(span[key]).hex()
    return data


def write_json_lines(path: Path, batches: Sequence[Sequence[ReadableSpan]]) -> Path:
    path.write_text("".join(json.dumps(to_otlp_json(encode_spans(batch))) + "\n" for batch in batches))
    return path


def write_protobuf(path: Path, batches: Sequence[Sequence[ReadableSpan]]) -> Path:
    with path.open("wb") as handle:
        for batch in batches:
            body = encode_spans(batch).SerializeToString()
            handle.write(struct.pack(">I", len(body)) + body)
    return path


# -- scenarios -------------------------------------------------------------------------------------


def genai_agent(tracer: Tracer, *, city: str = "Lisbon", fail_tool: bool = False) -> None:
    """An agent under the GenAI conventions: invoke_agent -> chat -> execute_tool -> chat."""
    question = f"Find me a hotel in {city} for two nights"
    user = [{"role": "user", "parts": [{"type": "text", "content": question}]}]
    with tracer.start_as_current_span("invoke_agent travel") as agent:
        agent.set_attribute("gen_ai.operation.name", "invoke_agent")
        agent.set_attribute("gen_ai.agent.name", "travel")
        with tracer.start_as_current_span("chat gpt-4o-mini") as chat:
            chat.set_attribute("gen_ai.operation.name", "chat")
            chat.set_attribute("gen_ai.request.model", "gpt-4o-mini")
            chat.set_attribute("gen_ai.usage.input_tokens", 120)
            chat.set_attribute("gen_ai.usage.output_tokens", 20)
            chat.set_attribute("gen_ai.system_instructions", json.dumps([{"type": "text", "content": "Be brief."}]))
            chat.set_attribute("gen_ai.input.messages", json.dumps(user))
            call = {
                "type": "tool_call",
                "id": "call_1",
                "name": "search_hotels",
                "arguments": {"city": city, "nights": 2},
            }
            chat.set_attribute("gen_ai.output.messages", json.dumps([{"role": "assistant", "parts": [call]}]))
        with tracer.start_as_current_span("execute_tool search_hotels") as tool:
            tool.set_attribute("gen_ai.operation.name", "execute_tool")
            tool.set_attribute("gen_ai.tool.name", "search_hotels")
            tool.set_attribute("gen_ai.tool.call.id", "call_1")
            tool.set_attribute("gen_ai.tool.call.arguments", json.dumps({"city": city, "nights": 2}))
            if fail_tool:
                tool.set_status(Status(StatusCode.ERROR, "hotel API down"))
                tool.set_attribute("error.type", "TimeoutError")
            else:
                tool.set_attribute("gen_ai.tool.call.result", json.dumps([{"name": "Casa Azul", "price": 95}]))
        answer = f"Casa Azul in {city} costs 95 EUR a night."
        with tracer.start_as_current_span("chat gpt-4o-mini") as chat:
            chat.set_attribute("gen_ai.operation.name", "chat")
            chat.set_attribute("gen_ai.request.model", "gpt-4o-mini")
            chat.set_attribute("gen_ai.response.model", "gpt-4o-mini-2024-07-18")
            chat.set_attribute("gen_ai.usage.input_tokens", 160)
            chat.set_attribute("gen_ai.usage.output_tokens", 30)
            chat.set_attribute("gen_ai.input.messages", json.dumps(user))
            out = [{"role": "assistant", "parts": [{"type": "text", "content": answer}], "finish_reason": "stop"}]
            chat.set_attribute("gen_ai.output.messages", json.dumps(out))


def openinference_agent(tracer: Tracer) -> None:
    """An agent under OpenInference: AGENT -> LLM (tool call) -> TOOL -> LLM, flattened messages."""
    with tracer.start_as_current_span("TravelAgent") as agent:
        agent.set_attribute("openinference.span.kind", "AGENT")
        agent.set_attribute("input.value", json.dumps({"messages": [{"role": "user", "content": "Weather in Oslo?"}]}))
        agent.set_attribute("input.mime_type", "application/json")
        with tracer.start_as_current_span("ChatOpenAI") as llm:
            llm.set_attribute("openinference.span.kind", "LLM")
            llm.set_attribute("llm.model_name", "gpt-4o")
            llm.set_attribute("llm.token_count.prompt", 50)
            llm.set_attribute("llm.token_count.completion", 10)
            llm.set_attribute("llm.input_messages.0.message.role", "user")
            llm.set_attribute("llm.input_messages.0.message.content", "Weather in Oslo?")
            llm.set_attribute("llm.output_messages.0.message.role", "assistant")
            prefix = "llm.output_messages.0.message.tool_calls.0.tool_call"
            llm.set_attribute(f"{prefix}.function.name", "get_weather")
            llm.set_attribute(f"{prefix}.function.arguments", '{"city": "Oslo"}')
            llm.set_attribute(f"{prefix}.id", "call_w")
        with tracer.start_as_current_span("get_weather") as tool:
            tool.set_attribute("openinference.span.kind", "TOOL")
            tool.set_attribute("tool.name", "get_weather")
            tool.set_attribute("input.value", '{"city": "Oslo"}')
            tool.set_attribute("output.value", "4 C and snow")
        with tracer.start_as_current_span("ChatOpenAI") as llm:
            llm.set_attribute("openinference.span.kind", "LLM")
            llm.set_attribute("llm.model_name", "gpt-4o")
            llm.set_attribute("llm.token_count.prompt", 70)
            llm.set_attribute("llm.token_count.completion", 12)
            llm.set_attribute("llm.output_messages.0.message.role", "assistant")
            llm.set_attribute("llm.output_messages.0.message.content", "It is 4 C and snowing in Oslo.")
        agent.set_attribute("output.value", "It is 4 C and snowing in Oslo.")


def plain_http(tracer: Tracer) -> None:
    """A trace with no GenAI or OpenInference span at all (a web request)."""
    with tracer.start_as_current_span("GET /health") as span:
        span.set_attribute("http.request.method", "GET")


class Keep:
    """An SDK span exporter that keeps what it gets (the exporter's tests read the spans back)."""

    def __init__(self) -> None:
        self.spans: list[object] = []

    def export(self, spans: list[object]) -> None:
        self.spans.extend(spans)

    def shutdown(self) -> None:
        pass
