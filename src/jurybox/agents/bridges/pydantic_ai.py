"""pydantic-ai run results to a Context.

Reads ``result.output`` (``result.data`` in older releases),
``result.all_messages()`` (``ModelRequest``/``ModelResponse`` whose parts have
a ``part_kind``: "user-prompt", "system-prompt", "tool-return", "text",
"tool-call") and ``result.usage()``. pydantic-ai is never imported.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from jurybox.agents.bridges._common import add_usage, agent_run_context, arguments_of, get, output_text, text_of
from jurybox.core import Context, Message


def _call(value: Any) -> Any:
    return value() if callable(value) else value


def context_from_pydantic_ai(
    result: Any,
    *,
    expected: str | None = None,
    sources: Sequence[str] = (),
    duration: float | None = None,
) -> Context:
    """Build a Context from an ``AgentRunResult`` (``agent.run`` / ``run_sync``).

    Args:
        result: The run result.
        expected: A reference answer for judges that use one.
        sources: Retrieved documents the answer should rest on.
        duration: Wall time of the run, when measured.
    """
    history = _call(get(result, "all_messages")) or ()
    messages: list[Message] = []
    calls: list[dict[str, Any]] = []
    returns: dict[Any, Any] = {}
    prompt = ""
    for message in history:
        for part in get(message, "parts") or ():
            kind = get(part, "part_kind")
            if kind == "user-prompt":
                prompt = text_of(get(part, "content"))
                messages.append(Message("user", prompt))
                calls.clear()  # tool calls of earlier turns belong to earlier answers
            elif kind == "system-prompt":
                messages.append(Message("system", text_of(get(part, "content"))))
            elif kind == "text":
                messages.append(Message("assistant", text_of(get(part, "content"))))
            elif kind == "tool-call":
                calls.append(
                    {
                        "name": get(part, "tool_name"),
                        "arguments": arguments_of(get(part, "args")),
                        "id": get(part, "tool_call_id"),
                    }
                )
            elif kind == "tool-return":
                returns[get(part, "tool_call_id")] = get(part, "content")
    output_value = get(result, "output", get(result, "data"))
    output = output_text(output_value) if output_value is not None else ""
    usage: dict[str, int] = {}
    add_usage(usage, _call(get(result, "usage")))
    metadata: dict[str, Any] = {"framework": "pydantic-ai"}
    return agent_run_context(
        prompt=prompt,
        output=output,
        expected=expected,
        messages=messages,
        calls=calls,
        results=returns,
        sources=sources,
        duration=duration,
        metadata=metadata,
        usage=usage,
    )
