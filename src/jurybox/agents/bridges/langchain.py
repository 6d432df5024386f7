"""LangChain / LangGraph messages to a Context.

Reads ``BaseMessage`` objects by their attributes (``type`` "human", "ai",
"tool", "system"; ``content``; ``AIMessage.tool_calls`` as
``{"name", "args", "id"}``; ``ToolMessage.tool_call_id``;
``AIMessage.usage_metadata``) or plain ``{"role", "content"}`` dicts, and
takes a LangGraph state (``{"messages": [...]}``) as it comes back from
``graph.invoke``. LangChain itself is never imported: ``LangGraphSession`` (a compiled
graph under test, one checkpointer thread per session so revival starts a new one) and
``evaluate_langgraph`` (invoke, build the Context, judge: one line) only call the graph.
"""

from __future__ import annotations

import functools
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from jurybox.agents.bridges._common import add_usage, arguments_of, evaluators, get, text_of
from jurybox.core import Context, Message, ToolCall

_ROLES = {
    "human": "user",
    "user": "user",
    "ai": "assistant",
    "assistant": "assistant",
    "system": "system",
    "tool": "tool",
}


def _role(message: Any) -> str:
    kind = get(message, "type") or get(message, "role")
    if isinstance(message, Sequence) and not isinstance(message, str) and len(message) == 2:
        kind = message[0]  # ("user", "text") tuples, as LangGraph accepts them
    role = _ROLES.get(str(kind))
    if role is None:
        raise ValueError(f"cannot tell the role of LangChain message {message!r} (type {kind!r})")
    return role


def _content(message: Any) -> str:
    if isinstance(message, Sequence) and not isinstance(message, str) and len(message) == 2:
        return text_of(message[1])
    return text_of(get(message, "content"))


def context_from_langchain(
    result: Sequence[Any] | Mapping[str, Any],
    *,
    expected: str | None = None,
    sources: Sequence[str] = (),
    all_turns: bool = False,
    duration: float | None = None,
) -> Context:
    """Build a Context from LangChain messages or a LangGraph state.

    Args:
        result: A list of messages, or a LangGraph state with ``messages``.
        expected: A reference answer for judges that use one.
        sources: Retrieved documents the answer should rest on.
        all_turns: Record the tool calls of the whole conversation instead of
            only those after the last user message.
        duration: Wall time of the run, when measured.

    Returns:
        A Context whose input is the last user message, output the last AI
        message, tool calls paired with their ToolMessage results.
    """
    messages = result.get("messages") if isinstance(result, Mapping) else result
    if messages is None:
        raise ValueError("a LangGraph state must have 'messages'")
    items = list(messages)
    roles = [_role(m) for m in items]
    users = [i for i, role in enumerate(roles) if role == "user"]
    start = 0 if all_turns or not users else users[-1]
    results = {get(m, "tool_call_id"): _content(m) for m, role in zip(items, roles, strict=True) if role == "tool"}
    calls: list[ToolCall] = []
    usage: dict[str, int] = {}
    for message, role in zip(items[start:], roles[start:], strict=True):
        if role != "assistant":
            continue
        add_usage(usage, get(message, "usage_metadata"))
        for call in get(message, "tool_calls") or ():
            call_id = get(call, "id")
            calls.append(
                ToolCall(
                    name=str(get(call, "name")),
                    arguments=arguments_of(get(call, "args", get(call, "arguments"))),
                    result=results.get(call_id),
                    id=call_id,
                )
            )
    answers = [i for i, role in enumerate(roles) if role == "assistant" and _content(items[i])]
    metadata: dict[str, Any] = {"framework": "langchain"}
    if usage:
        metadata["usage"] = usage
        metadata["tokens"] = sum(usage.values())
    return Context(
        input=_content(items[users[-1]]) if users else "",
        output=_content(items[answers[-1]]) if answers else "",
        expected=expected,
        messages=tuple(Message(role, _content(m)) for m, role in zip(items, roles, strict=True) if role != "tool"),
        tool_calls=tuple(calls),
        sources=tuple(sources),
        duration=duration,
        metadata=metadata,
    )


class LangGraphSession:
    """One conversation with a compiled LangGraph graph, as the agent under test (a Python factory's object).

    The graph keeps the history in its checkpointer under a ``thread_id``; each session gets
    its own thread, and revival (which closes this object) starts a new one, so only what the
    agent stored elsewhere survives. A graph compiled without a checkpointer has no memory:
    the session then keeps the messages itself and sends them all each turn. Use it as a
    suite's factory::

        factory = langgraph_sessions(graph)              # agent: {python: "evals:factory"}

    Args:
        graph: A compiled graph taking and returning ``{"messages": [...]}``.
        config: Other ``config`` entries for ``ainvoke`` (``recursion_limit``...).
    """

    def __init__(self, graph: Any, **config: Any) -> None:
        self.graph = graph
        self.config = config
        self.thread = ""
        self.messages: list[Any] = []

    async def respond(self, message: str, session_id: str) -> Context:
        if not self.thread:
            self.thread = f"{session_id}-{uuid.uuid4().hex[:8]}"
        remembers = get(self.graph, "checkpointer") is not None
        sent = [("user", message)] if remembers else [*self.messages, ("user", message)]
        config = {**self.config, "configurable": {"thread_id": self.thread}}
        started = time.perf_counter()
        state = await self.graph.ainvoke({"messages": sent}, config=config)
        if not remembers:
            self.messages = list(get(state, "messages") or [])
        return context_from_langchain(state, duration=time.perf_counter() - started)

    def close(self) -> None:
        """Revival: the next message starts a new thread with no history."""
        self.thread = ""
        self.messages.clear()


def langgraph_sessions(graph: Any, **config: Any) -> Callable[[], LangGraphSession]:
    """A suite factory: each session of the run gets its own ``LangGraphSession`` of ``graph``."""
    return functools.partial(LangGraphSession, graph, **config)


aevaluate_langgraph, evaluate_langgraph = evaluators(
    "langgraph",
    run=lambda graph, prompt, config: graph.ainvoke({"messages": [("user", prompt)]}, config=config or None),
    run_sync=lambda graph, prompt, config: graph.invoke({"messages": [("user", prompt)]}, config=config or None),
    context=context_from_langchain,
    sync_path="``graph.invoke``",
)
