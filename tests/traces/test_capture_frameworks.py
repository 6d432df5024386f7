"""``capture: otel`` with real framework instrumentation: pydantic-ai's own OpenTelemetry spans, against the stub.

The agent returns only its answer text; the tool call and its arguments reach the judges
from the spans pydantic-ai's instrumentation (``Agent.instrument_all()``) makes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jurybox.agents import make_target
from jurybox.stubs import StubReply, StubServer, StubToolCall

pytest.importorskip("pydantic_ai")


def scripted(body: dict[str, Any]) -> StubReply:
    messages = body.get("messages", [])
    tools = [m for m in messages if m.get("role") == "tool"]
    if not tools:
        return StubReply(tool_calls=(StubToolCall("nightly_rate", {"listing": "Beach House"}, id="c1"),))
    return StubReply(text=f"The Beach House costs {tools[-1]['content']} a night.")


@pytest.fixture(scope="module")
def stub() -> Iterator[StubServer]:
    with StubServer("openai", reply=scripted) as server:
        yield server


PYDANTIC_AI = """
import os
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

model = OpenAIChatModel("stub-model", provider=OpenAIProvider(base_url=os.environ["CAPTURE_STUB_URL"], api_key="k"))
Agent.instrument_all()   # pydantic-ai's OpenTelemetry instrumentation, on the global tracer provider
agent = Agent(model, instructions="Help.")

@agent.tool_plain
def nightly_rate(listing: str) -> str:
    '''The nightly rate of a listing.'''
    return "$320"

def respond(message, session_id):
    return agent.run_sync(message).output   # the text only: no tool calls, no usage
"""


async def test_pydantic_ai_spans_give_the_tool_calls(
    stub: StubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAPTURE_STUB_URL", stub.url + "/v1")
    (tmp_path / "pai_agent.py").write_text(PYDANTIC_AI)
    target = make_target({"python": "pai_agent:respond", "capture": "otel"}, base_dir=tmp_path)
    reply = await target.respond("What is the rate of the Beach House?", "s1")
    await target.aclose()
    assert reply.text == "The Beach House costs $320 a night."
    [call] = reply.tool_calls
    assert call.name == "nightly_rate" and dict(call.arguments) == {"listing": "Beach House"}
    assert json.dumps(call.result).find("320") >= 0
    assert reply.usage["input_tokens"] > 0 and reply.usage["output_tokens"] > 0


LANGGRAPH = """
import os
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import create_react_agent
from openinference.instrumentation.langchain import LangChainInstrumentor

LangChainInstrumentor().instrument()   # OpenInference spans on the global tracer provider

@tool
def nightly_rate(listing: str) -> str:
    '''The nightly rate of a listing.'''
    return "$320"

model = ChatOpenAI(model="stub-model", base_url=os.environ["CAPTURE_STUB_URL"], api_key="k", max_retries=0)
graph = create_react_agent(model, [nightly_rate])

def respond(message, session_id):
    return graph.invoke({"messages": [("user", message)]})["messages"][-1].content
"""

OPENAI_AGENTS = """
import os
from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, set_trace_processors, set_tracing_disabled
from openai import AsyncOpenAI
from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

set_trace_processors([])               # no upload to OpenAI: the SDK's own traces stay here
set_tracing_disabled(False)            # another test in this process may have turned the SDK's tracing off
OpenAIAgentsInstrumentor().instrument()  # its runs as OpenInference spans on the global tracer provider

@function_tool
def nightly_rate(listing: str) -> str:
    '''The nightly rate of a listing.'''
    return "$320"

client = AsyncOpenAI(base_url=os.environ["CAPTURE_STUB_URL"], api_key="k")
agent = Agent(name="rentals", instructions="Help.", tools=[nightly_rate],
              model=OpenAIChatCompletionsModel(model="stub-model", openai_client=client))

async def respond(message, session_id):
    return (await Runner.run(agent, message)).final_output
"""


@pytest.mark.filterwarnings("ignore:create_react_agent has been moved")
@pytest.mark.parametrize(
    ("module", "code"),
    [
        pytest.param("openinference.instrumentation.langchain", LANGGRAPH, id="langgraph-openinference"),
        pytest.param("openinference.instrumentation.openai_agents", OPENAI_AGENTS, id="openai-agents-openinference"),
    ],
)
async def test_openinference_instrumented_agents_give_the_tool_calls(
    stub: StubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: str, code: str
) -> None:
    pytest.importorskip(module)
    monkeypatch.setenv("CAPTURE_STUB_URL", stub.url + "/v1")
    name = f"agent_{abs(hash(module))}"
    (tmp_path / f"{name}.py").write_text(code)
    target = make_target({"python": f"{name}:respond", "capture": "otel"}, base_dir=tmp_path)
    reply = await target.respond("What is the rate of the Beach House?", "s1")
    await target.aclose()
    assert reply.text == "The Beach House costs $320 a night."
    [call] = reply.tool_calls
    assert call.name == "nightly_rate" and dict(call.arguments) == {"listing": "Beach House"}
    assert "320" in json.dumps(call.result)
