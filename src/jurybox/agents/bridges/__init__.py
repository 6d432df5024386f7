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
    from jurybox.agents.bridges.langchain import context_from_langchain
    from jurybox.agents.bridges.openai_agents import context_from_openai_agents
    from jurybox.agents.bridges.pydantic_ai import context_from_pydantic_ai

_BRIDGES = {
    "context_from_langchain": "jurybox.agents.bridges.langchain",
    "context_from_openai_agents": "jurybox.agents.bridges.openai_agents",
    "context_from_pydantic_ai": "jurybox.agents.bridges.pydantic_ai",
}

__all__ = ["context_from_langchain", "context_from_openai_agents", "context_from_pydantic_ai"]


def __getattr__(name: str) -> Any:
    module = _BRIDGES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
