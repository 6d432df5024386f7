"""The bridges with the real OpenAI Agents SDK and pydantic-ai, their agents talking to the stub OpenAI server.

Sessions: round 2 asks what round 1 said, so it passes only when the session's
history reaches the model, and fails after a revival (which drops it). One-line
evaluators: run the agent, build the Context (tool calls included) and judge it.
Skipped where a framework is not installed (the ``bridges`` extra installs both).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jurybox.agents import RoundSpec, make_target, run_conversation
from jurybox.core import Status
from jurybox.judges import contains, tool_calls
from jurybox.stubs import StubReply, StubServer, StubToolCall

# LangGraph 1.x moved create_react_agent to the `langchain` package, which is not installed here;
# the bridge does not care which one built the graph.
pytestmark = pytest.mark.filterwarnings("ignore:create_react_agent has been moved")

RATES = {"Beach House": 320}


def scripted(body: dict[str, Any]) -> StubReply:
    """Plays the model: remembers names only if the history holds them; looks rates up with the tool."""
    messages = body.get("messages", [])
    users = [m for m in messages if m.get("role") == "user"]
    last = users[-1]["content"] if users else ""
    last = last if isinstance(last, str) else json.dumps(last)
    tools = [m for m in messages if m.get("role") == "tool"]
    if "rate" in last.lower():
        if not tools:
            return StubReply(tool_calls=(StubToolCall("nightly_rate", {"listing": "Beach House"}, id="c1"),))
        return StubReply(text=f"The Beach House costs {tools[-1]['content']} a night.")
    if "my name" in last.lower() and "?" in last:
        earlier = " ".join(str(m.get("content")) for m in users[:-1])
        return StubReply(text="You are Ada." if "Ada" in earlier else "I don't know your name.")
    return StubReply(text="Nice to meet you.")


@pytest.fixture(scope="module")
def stub() -> Iterator[StubServer]:
    with StubServer("openai", reply=scripted) as server:
        yield server


def _factory_module(tmp_path: Path, body: str) -> Path:
    module = tmp_path / "bridge_agent.py"
    module.write_text(body)
    return module


ROUNDS = [RoundSpec("Hello, my name is Ada."), RoundSpec("What is my name?")]

OPENAI_AGENTS = """
import os
from agents import Agent, OpenAIChatCompletionsModel, function_tool, set_tracing_disabled
from openai import AsyncOpenAI
from jurybox.agents.bridges import openai_agents_sessions

set_tracing_disabled(True)  # no trace upload: nothing leaves 127.0.0.1

@function_tool
def nightly_rate(listing: str) -> str:
    '''The nightly rate of a listing.'''
    return "$320"

client = AsyncOpenAI(base_url=os.environ["BRIDGE_STUB_URL"], api_key="test-key")
agent = Agent(name="rentals", instructions="Help.", tools=[nightly_rate],
              model=OpenAIChatCompletionsModel(model="stub-model", openai_client=client))
factory = openai_agents_sessions(agent)
"""

PYDANTIC_AI = """
import os
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from jurybox.agents.bridges import pydantic_ai_sessions

model = OpenAIChatModel("stub-model", provider=OpenAIProvider(base_url=os.environ["BRIDGE_STUB_URL"], api_key="k"))
agent = Agent(model, instructions="Help.")

@agent.tool_plain
def nightly_rate(listing: str) -> str:
    '''The nightly rate of a listing.'''
    return "$320"

factory = pydantic_ai_sessions(agent)
"""

LANGGRAPH = """
import os
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import create_react_agent
from jurybox.agents.bridges import langgraph_sessions

@tool
def nightly_rate(listing: str) -> str:
    '''The nightly rate of a listing.'''
    return "$320"

model = ChatOpenAI(model="stub-model", base_url=os.environ["BRIDGE_STUB_URL"], api_key="k", max_retries=0)
graph = create_react_agent(model, [nightly_rate], checkpointer=InMemorySaver())
factory = langgraph_sessions(graph)
"""

FRAMEWORKS = [
    pytest.param("agents", OPENAI_AGENTS, id="openai-agents"),
    pytest.param("pydantic_ai", PYDANTIC_AI, id="pydantic-ai"),
    pytest.param("langchain_openai", LANGGRAPH, id="langgraph"),
]


@pytest.mark.parametrize(("package", "source"), FRAMEWORKS)
async def test_a_session_keeps_history_and_revival_drops_it(
    package: str, source: str, stub: StubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip(package)
    monkeypatch.setenv("BRIDGE_STUB_URL", stub.base_url)
    _factory_module(tmp_path, source)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("bridge_agent", None)
    target = make_target({"python": "bridge_agent:factory"}, base_dir=tmp_path)
    try:
        kept = await run_conversation(target, ROUNDS, session_id=f"{package}-kept", timeout=60)
        revived = await run_conversation(
            target, ROUNDS, session_id=f"{package}-revived", revive_between_rounds=True, timeout=60
        )
        other = await run_conversation(target, ROUNDS[1:], session_id=f"{package}-other", timeout=60)
    finally:
        await target.aclose()
    assert kept[1].context.output == "You are Ada."
    assert revived[1].context.output == "I don't know your name."
    assert other[0].context.output == "I don't know your name."  # sessions never see each other


async def test_openai_agents_one_line_evaluator_judges_a_run_with_its_tool_calls(stub: StubServer) -> None:
    pytest.importorskip("agents")
    from openai import AsyncOpenAI

    from agents import Agent, OpenAIChatCompletionsModel, function_tool, set_tracing_disabled
    from jurybox.agents.bridges import aevaluate_openai_agents

    set_tracing_disabled(True)

    @function_tool
    def nightly_rate(listing: str) -> str:
        """The nightly rate of a listing."""
        return f"${RATES[listing]}"

    model = OpenAIChatCompletionsModel(model="m", openai_client=AsyncOpenAI(base_url=stub.base_url, api_key="k"))
    agent = Agent(name="rentals", instructions="Help.", tools=[nightly_rate], model=model)
    judge = tool_calls(["nightly_rate"])
    verdict = await aevaluate_openai_agents(agent, "What is the Beach House rate?", judge)
    assert verdict.status is Status.PASS, verdict.reasoning
    said = await aevaluate_openai_agents(agent, "What is the Beach House rate?", contains("$320 a night"))
    assert said.status is Status.PASS


def test_pydantic_ai_one_line_evaluator_reads_usage_without_the_deprecated_call(stub: StubServer) -> None:
    pytest.importorskip("pydantic_ai")
    import warnings

    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    from jurybox.agents.bridges import context_from_pydantic_ai, evaluate_pydantic_ai

    agent = Agent(OpenAIChatModel("m", provider=OpenAIProvider(base_url=stub.base_url, api_key="k")))

    @agent.tool_plain
    def nightly_rate(listing: str) -> str:
        """The nightly rate of a listing."""
        return f"${RATES[listing]}"

    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        verdict = evaluate_pydantic_ai(agent, "What is the Beach House rate?", tool_calls(["nightly_rate"]))
        result = agent.run_sync("What is the Beach House rate?")
        context = context_from_pydantic_ai(result)
    assert verdict.status is Status.PASS, verdict.reasoning
    assert context.output == "The Beach House costs $320 a night."
    assert context.tool_calls[0].result == "$320"
    assert context.metadata["usage"]["input_tokens"] > 0


def test_langgraph_one_line_evaluator_judges_a_react_agent_with_its_tool_calls(stub: StubServer) -> None:
    pytest.importorskip("langchain_openai")
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langgraph.prebuilt import create_react_agent

    from jurybox.agents.bridges import evaluate_langgraph

    @tool
    def nightly_rate(listing: str) -> str:
        """The nightly rate of a listing."""
        return f"${RATES[listing]}"

    model = ChatOpenAI(model="m", base_url=stub.base_url, api_key="k", max_retries=0)
    graph = create_react_agent(model, [nightly_rate])
    verdict = evaluate_langgraph(graph, "What is the Beach House rate?", tool_calls(["nightly_rate"]))
    assert verdict.status is Status.PASS, verdict.reasoning
    said = evaluate_langgraph(graph, "What is the Beach House rate?", contains("$320 a night"))
    assert said.status is Status.PASS, said.reasoning
