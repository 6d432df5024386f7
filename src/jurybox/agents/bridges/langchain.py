"""LangChain / LangGraph messages to a Context.

Reads ``BaseMessage`` objects by their attributes (``type`` "human", "ai",
"tool", "system"; ``content``; ``AIMessage.tool_calls`` as
``{"name", "args", "id"}``; ``ToolMessage.tool_call_id``;
``AIMessage.usage_metadata``) or plain ``{"role", "content"}`` dicts, and
takes a LangGraph state (``{"messages": [...]}``) as it comes back from
``graph.invoke``. LangChain itself is never imported.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from jurybox.agents.bridges._common import add_usage, arguments_of, get, text_of
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
