"""A Python agent with its own OpenTelemetry instrumentation (GenAI conventions), for ``capture: otel``.

It reports nothing but its reply text: the tool calls and token usage are only in its spans.
"""

from __future__ import annotations

import asyncio
import json

from opentelemetry import trace

tracer = trace.get_tracer("otel_agent")


def _search(city: str) -> list[dict[str, object]]:
    with tracer.start_as_current_span("execute_tool search_hotels") as span:
        span.set_attribute("gen_ai.operation.name", "execute_tool")
        span.set_attribute("gen_ai.tool.name", "search_hotels")
        span.set_attribute("gen_ai.tool.call.arguments", json.dumps({"city": city}))
        found = [{"name": f"Hotel {city}", "price": 80}]
        span.set_attribute("gen_ai.tool.call.result", json.dumps(found))
        return found


def respond(message: str, session_id: str) -> str:
    city = message.rsplit(" ", 1)[-1].strip("?")
    with tracer.start_as_current_span("invoke_agent hotels") as agent:
        agent.set_attribute("gen_ai.operation.name", "invoke_agent")
        with tracer.start_as_current_span("chat fake") as chat:
            chat.set_attribute("gen_ai.operation.name", "chat")
            chat.set_attribute("gen_ai.usage.input_tokens", 40)
            chat.set_attribute("gen_ai.usage.output_tokens", 8)
        hotels = _search(city)
        return f"{hotels[0]['name']} at {hotels[0]['price']} EUR"


async def respond_async(message: str, session_id: str) -> str:
    await asyncio.sleep(0)
    return respond(message, session_id)
