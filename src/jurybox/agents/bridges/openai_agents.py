"""OpenAI Agents SDK ``RunResult`` to a Context.

Reads ``input``, ``final_output``, ``new_items`` (``tool_call_item`` with a
``raw_item`` carrying ``name``/``arguments``/``call_id``,
``tool_call_output_item`` with ``output``, ``message_output_item``),
``raw_responses[].usage`` and ``last_agent.name``. The SDK is never imported.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from jurybox.agents.bridges._common import add_usage, agent_run_context, arguments_of, get, output_text, text_of
from jurybox.core import Context, Message


def _input_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    users = [item for item in value or () if get(item, "role") == "user"]
    return text_of(get(users[-1], "content")) if users else ""


def context_from_openai_agents(
    result: Any,
    *,
    expected: str | None = None,
    sources: Sequence[str] = (),
    duration: float | None = None,
) -> Context:
    """Build a Context from a ``RunResult`` (``Runner.run`` / ``run_sync``).

    Args:
        result: The run result.
        expected: A reference answer for judges that use one.
        sources: Retrieved documents the answer should rest on.
        duration: Wall time of the run, when measured.
    """
    calls: list[dict[str, Any]] = []
    outputs: dict[Any, Any] = {}
    messages: list[Message] = []
    prompt = _input_text(get(result, "input"))
    if prompt:
        messages.append(Message("user", prompt))
    for item in get(result, "new_items") or ():
        kind = get(item, "type")
        raw = get(item, "raw_item")
        if kind == "tool_call_item":
            calls.append(
                {
                    "name": get(raw, "name") or get(raw, "type") or "tool",
                    "arguments": arguments_of(get(raw, "arguments")),
                    "id": get(raw, "call_id") or get(raw, "id"),
                }
            )
        elif kind == "tool_call_output_item":
            outputs[get(raw, "call_id")] = get(item, "output")
        elif kind == "message_output_item":
            text = text_of(get(raw, "content"))
            if text:
                messages.append(Message("assistant", text))
    usage: dict[str, int] = {}
    for response in get(result, "raw_responses") or ():
        add_usage(usage, get(response, "usage"))
    final = get(result, "final_output")
    output = output_text(final) if final is not None else ""
    if output and (not messages or messages[-1].content != output):
        messages.append(Message("assistant", output))
    metadata: dict[str, Any] = {"framework": "openai-agents"}
    agent = get(get(result, "last_agent"), "name")
    if agent:
        metadata["agent"] = agent
    return agent_run_context(
        prompt=prompt,
        output=output,
        expected=expected,
        messages=messages,
        calls=calls,
        results=outputs,
        sources=sources,
        duration=duration,
        metadata=metadata,
        usage=usage,
    )
