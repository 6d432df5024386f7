"""Bridges from agent frameworks' results to a jurybox Context.

Each bridge is a small module that reads the framework's objects by their
documented attributes and never imports the framework itself, so these work
whenever the framework is installed (and jurybox does not depend on it). The
modules load on first use::

    from jurybox.agents.bridges import context_from_langchain
    context = context_from_langchain(graph.invoke({"messages": [("user", "Hi")]}))

A Python agent under test may also return such a Context from ``respond``:
the Python adapter turns it into the reply, tool calls, sources and usage.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jurybox.agents.bridges.langchain import (
        LangGraphSession,
        aevaluate_langgraph,
        context_from_langchain,
        evaluate_langgraph,
        langgraph_sessions,
    )
    from jurybox.agents.bridges.openai_agents import (
        OpenAIAgentsSession,
        aevaluate_openai_agents,
        context_from_openai_agents,
        evaluate_openai_agents,
        openai_agents_sessions,
    )
    from jurybox.agents.bridges.pydantic_ai import (
        PydanticAISession,
        aevaluate_pydantic_ai,
        context_from_pydantic_ai,
        evaluate_pydantic_ai,
        pydantic_ai_sessions,
    )

_OPENAI_AGENTS = "jurybox.agents.bridges.openai_agents"
_PYDANTIC_AI = "jurybox.agents.bridges.pydantic_ai"
_LANGCHAIN = "jurybox.agents.bridges.langchain"
_BRIDGES = {
    "context_from_langchain": _LANGCHAIN,
    "LangGraphSession": _LANGCHAIN,
    "langgraph_sessions": _LANGCHAIN,
    "aevaluate_langgraph": _LANGCHAIN,
    "evaluate_langgraph": _LANGCHAIN,
    "context_from_openai_agents": _OPENAI_AGENTS,
    "OpenAIAgentsSession": _OPENAI_AGENTS,
    "openai_agents_sessions": _OPENAI_AGENTS,
    "aevaluate_openai_agents": _OPENAI_AGENTS,
    "evaluate_openai_agents": _OPENAI_AGENTS,
    "context_from_pydantic_ai": _PYDANTIC_AI,
    "PydanticAISession": _PYDANTIC_AI,
    "pydantic_ai_sessions": _PYDANTIC_AI,
    "aevaluate_pydantic_ai": _PYDANTIC_AI,
    "evaluate_pydantic_ai": _PYDANTIC_AI,
}

__all__ = [
    "LangGraphSession",
    "OpenAIAgentsSession",
    "PydanticAISession",
    "aevaluate_langgraph",
    "aevaluate_openai_agents",
    "aevaluate_pydantic_ai",
    "context_from_langchain",
    "context_from_openai_agents",
    "context_from_pydantic_ai",
    "evaluate_langgraph",
    "evaluate_openai_agents",
    "evaluate_pydantic_ai",
    "langgraph_sessions",
    "openai_agents_sessions",
    "pydantic_ai_sessions",
]


def __getattr__(name: str) -> Any:
    module = _BRIDGES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
