"""Framework bridges, fed duck-typed objects shaped like LangChain, OpenAI Agents SDK and pydantic-ai results."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jurybox.agents import RoundSpec, make_target, run_conversation
from jurybox.agents.bridges import context_from_langchain, context_from_openai_agents, context_from_pydantic_ai

# --------------------------------------------------------------------------- LangChain shapes


@dataclass
class HumanMessage:
    content: Any
    type: str = "human"


@dataclass
class AIMessage:
    content: Any
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    usage_metadata: dict[str, int] | None = None
    type: str = "ai"


@dataclass
class ToolMessage:
    content: Any
    tool_call_id: str
    type: str = "tool"


def langgraph_state() -> dict[str, Any]:
    return {
        "messages": [
            HumanMessage("What are my listings?"),
            AIMessage("", tool_calls=[{"name": "get_listings", "args": {}, "id": "a1"}]),
            ToolMessage('["Beach House"]', tool_call_id="a1"),
            AIMessage("You have the Beach House.", usage_metadata={"input_tokens": 50, "output_tokens": 8}),
            HumanMessage([{"type": "text", "text": "Revenue in June?"}]),
            AIMessage("", tool_calls=[{"name": "get_revenue", "args": {"month": "2026-06"}, "id": "a2"}]),
            ToolMessage("6190", tool_call_id="a2"),
            AIMessage(
                [{"type": "text", "text": "June revenue was "}, {"type": "text", "text": "$6,190."}],
                usage_metadata={"input_tokens": 90, "output_tokens": 12},
            ),
        ]
    }


def test_langchain_state_becomes_the_last_turns_context() -> None:
    context = context_from_langchain(langgraph_state(), expected="$6,190")
    assert context.input == "Revenue in June?"
    assert context.output == "June revenue was $6,190."
    assert context.expected == "$6,190"
    assert [(c.name, dict(c.arguments), c.result, c.id) for c in context.tool_calls] == [
        ("get_revenue", {"month": "2026-06"}, "6190", "a2")
    ]
    assert [m.role for m in context.messages] == ["user", "assistant", "assistant", "user", "assistant", "assistant"]
    assert context.metadata["usage"] == {"input_tokens": 90, "output_tokens": 12}
    assert context.metadata["framework"] == "langchain"


def test_langchain_all_turns_and_plain_dicts() -> None:
    context = context_from_langchain(langgraph_state(), all_turns=True)
    assert context.tool_names == ["get_listings", "get_revenue"]
    assert context.metadata["tokens"] == 160
    plain = context_from_langchain([{"role": "user", "content": "hi"}, ("assistant", "hello")])
    assert (plain.input, plain.output) == ("hi", "hello")


# --------------------------------------------------------------------------- OpenAI Agents SDK shapes


@dataclass
class FunctionCall:
    name: str
    arguments: str
    call_id: str
    type: str = "function_call"


@dataclass
class OutputText:
    text: str
    type: str = "output_text"


@dataclass
class OutputMessage:
    content: list[OutputText]
    role: str = "assistant"


@dataclass
class Item:
    type: str
    raw_item: Any
    output: Any = None


@dataclass
class Usage:
    input_tokens: int
    output_tokens: int
    total_tokens: int
    requests: int = 1


@dataclass
class ModelResponse:
    usage: Usage


@dataclass
class Agent:
    name: str


@dataclass
class RunResult:
    input: Any
    new_items: list[Item]
    raw_responses: list[ModelResponse]
    final_output: Any
    last_agent: Agent


def test_openai_agents_run_result_becomes_a_context() -> None:
    result = RunResult(
        input=[{"role": "user", "content": "Occupancy of the cabin?"}],
        new_items=[
            Item("tool_call_item", FunctionCall("get_listing_details", '{"listing_id": 2}', "call_9")),
            Item(
                "tool_call_output_item", {"call_id": "call_9", "output": "51%", "type": "function_call_output"}, "51%"
            ),
            Item("message_output_item", OutputMessage([OutputText("The cabin was 51% occupied.")])),
        ],
        raw_responses=[ModelResponse(Usage(40, 5, 45)), ModelResponse(Usage(60, 9, 69))],
        final_output="The cabin was 51% occupied.",
        last_agent=Agent("Host assistant"),
    )
    context = context_from_openai_agents(result)
    assert context.input == "Occupancy of the cabin?"
    assert context.output == "The cabin was 51% occupied."
    assert [(c.name, dict(c.arguments), c.result, c.id) for c in context.tool_calls] == [
        ("get_listing_details", {"listing_id": 2}, "51%", "call_9")
    ]
    assert [m.role for m in context.messages] == ["user", "assistant"]
    assert context.metadata["usage"] == {"input_tokens": 100, "output_tokens": 14}
    assert context.metadata["agent"] == "Host assistant"


def test_openai_agents_structured_output_is_json() -> None:
    result = RunResult("Summarize", [], [], {"total": 6190, "month": "2026-06"}, Agent("a"))
    context = context_from_openai_agents(result)
    assert context.output == '{"month": "2026-06", "total": 6190}'
    assert context.input == "Summarize"


# --------------------------------------------------------------------------- pydantic-ai shapes


@dataclass
class Part:
    part_kind: str
    content: Any = None
    tool_name: str | None = None
    args: Any = None
    tool_call_id: str | None = None


@dataclass
class ModelMessage:
    parts: list[Part]
    kind: str


@dataclass
class RunUsage:
    input_tokens: int
    output_tokens: int


class AgentRunResult:
    def __init__(self, messages: list[ModelMessage], output: Any) -> None:
        self._messages = messages
        self.output = output

    def all_messages(self) -> list[ModelMessage]:
        return self._messages

    def usage(self) -> RunUsage:
        return RunUsage(120, 30)


def test_pydantic_ai_result_becomes_a_context() -> None:
    result = AgentRunResult(
        [
            ModelMessage(
                [Part("system-prompt", "Be brief."), Part("user-prompt", "Bookings for the beach house?")], "request"
            ),
            ModelMessage(
                [Part("tool-call", tool_name="get_bookings", args='{"listing_id": 1}', tool_call_id="p1")], "response"
            ),
            ModelMessage(
                [Part("tool-return", content=[{"guest": "Sofia"}], tool_name="get_bookings", tool_call_id="p1")],
                "request",
            ),
            ModelMessage([Part("text", "Sofia arrives on July 2.")], "response"),
        ],
        output="Sofia arrives on July 2.",
    )
    context = context_from_pydantic_ai(result, sources=["bookings table"])
    assert context.input == "Bookings for the beach house?"
    assert context.output == "Sofia arrives on July 2."
    assert [(c.name, dict(c.arguments), c.result) for c in context.tool_calls] == [
        ("get_bookings", {"listing_id": 1}, [{"guest": "Sofia"}])
    ]
    assert [m.role for m in context.messages] == ["system", "user", "assistant"]
    assert context.sources == ("bookings table",)
    assert context.metadata["usage"] == {"input_tokens": 120, "output_tokens": 30}


# --------------------------------------------------------------------------- a bridged agent under test


async def test_a_python_agent_may_return_a_bridged_context(tmp_path: Path) -> None:
    (tmp_path / "graph_agent.py").write_text(
        textwrap.dedent(
            """
            from jurybox.agents.bridges import context_from_langchain

            def respond(message, session_id):
                call = {"name": "lookup", "args": {"q": message}, "id": "x"}
                state = {"messages": [
                    {"role": "user", "content": message},
                    {"role": "assistant", "content": "", "tool_calls": [call]},
                    {"role": "tool", "content": "found", "tool_call_id": "x"},
                    {"role": "assistant", "content": "Found it."},
                ]}
                return context_from_langchain(state)
            """
        )
    )
    target = make_target({"python": "graph_agent:respond"}, base_dir=tmp_path)
    (outcome,) = await run_conversation(target, [RoundSpec("where?")], session_id="b")
    assert outcome.context.output == "Found it."
    assert [(c.name, dict(c.arguments), c.result) for c in outcome.context.tool_calls] == [
        ("lookup", {"q": "where?"}, "found")
    ]
    await target.aclose()
    sys.modules.pop("graph_agent", None)


def test_bridges_do_not_import_the_frameworks() -> None:
    # In a fresh interpreter: other tests of this session may have imported the frameworks themselves.
    code = (
        "import sys\n"
        "from jurybox.agents.bridges import context_from_langchain, context_from_openai_agents\n"
        "from jurybox.agents.bridges import context_from_pydantic_ai, langgraph_sessions, pydantic_ai_sessions\n"
        "context_from_langchain([('user', 'q'), ('ai', 'a')])\n"
        "print(sorted({'langchain_core', 'langgraph', 'agents', 'pydantic_ai'} & set(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
