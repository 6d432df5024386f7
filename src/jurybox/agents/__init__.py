"""Agents under test: adapters (Python, OpenAI chat and Responses, HTTP, MCP) and multi-round conversations.

``make_target(spec)`` turns a suite's ``agent:`` mapping into a ``Target`` through
the adapter its key names (each a plug-in of kind ``agent``: ``register_adapter``);
``run_conversation`` sends rounds to it in one session, with revival between
rounds and answers to the agent's clarifying questions. The framework bridges
(LangChain/LangGraph, OpenAI Agents SDK, pydantic-ai) live in
``jurybox.agents.bridges`` and import nothing until used.
"""

from typing import TYPE_CHECKING, Any

from jurybox.agents._adapter import AgentAdapter, adapter_names, register_adapter
from jurybox.agents._clarification import heuristic_is_clarification, looks_like_clarification
from jurybox.agents._conversation import (
    ClarificationDetector,
    FollowUpWriter,
    RoundOutcome,
    RoundSpec,
    run_conversation,
    sum_usage,
)
from jurybox.agents._errors import AgentError, AgentTimeout, TargetConfigError
from jurybox.agents._factory import ADAPTERS, make_target
from jurybox.agents._lessons import case_lessons, current_lessons, lessons_payload
from jurybox.agents._reply import AgentReply, coerce_reply
from jurybox.agents._target import Target

if TYPE_CHECKING:
    from jurybox.agents._mcp_direct import McpCall, McpCallTarget

__all__ = [
    "ADAPTERS",
    "AgentAdapter",
    "AgentError",
    "AgentReply",
    "AgentTimeout",
    "ClarificationDetector",
    "FollowUpWriter",
    "McpCall",
    "McpCallTarget",
    "RoundOutcome",
    "RoundSpec",
    "Target",
    "TargetConfigError",
    "adapter_names",
    "case_lessons",
    "coerce_reply",
    "current_lessons",
    "heuristic_is_clarification",
    "lessons_payload",
    "looks_like_clarification",
    "make_target",
    "register_adapter",
    "run_conversation",
    "sum_usage",
]


def __getattr__(name: str) -> Any:
    # The MCP client (and the chat and HTTP adapters under it) only for a suite with ``mcp_call`` cases.
    if name in ("McpCall", "McpCallTarget"):
        from jurybox.agents import _mcp_direct

        value = getattr(_mcp_direct, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
