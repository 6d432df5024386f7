"""pydantic-ai run results to a Context.

Reads ``result.output`` (``result.data`` in older releases),
``result.all_messages()`` (``ModelRequest``/``ModelResponse`` whose parts have
a ``part_kind``: "user-prompt", "system-prompt", "tool-return", "text",
"tool-call") and ``result.usage`` (a property since pydantic-ai 1.0; the old ``usage()``
method is still read from older releases, never called on new ones, where calling it
warns). Nothing here imports pydantic-ai: ``PydanticAISession`` (an agent under test whose
message history revival drops) and ``evaluate_pydantic_ai`` (run, build the Context, judge:
one line) only call the agent they are given.
"""

from __future__ import annotations

import functools
import inspect
import time
from collections.abc import Callable, Sequence
from typing import Any

from jurybox.agents.bridges._common import (
    add_usage,
    agent_run_context,
    arguments_of,
    evaluators,
    get,
    output_text,
    text_of,
)
from jurybox.core import Context, Message


def _call(value: Any) -> Any:
    return value() if callable(value) else value


def _usage(result: Any) -> Any:
    """The run's usage: the ``usage`` property, or the ``usage()`` method of releases before 1.0."""
    attribute = inspect.getattr_static(type(result), "usage", None)
    if isinstance(attribute, property):
        return result.usage
    return _call(get(result, "usage"))


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
    add_usage(usage, _usage(result))
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


class PydanticAISession:
    """One conversation with a pydantic-ai agent, as the agent under test (a Python factory's object).

    The session's message history is handed to each ``agent.run`` and replaced by the
    run's ``all_messages()``, so later rounds see earlier ones; revival, which closes this
    object, drops it. Use it as a suite's factory::

        factory = pydantic_ai_sessions(my_agent)         # agent: {python: "evals:factory"}

    Args:
        agent: The pydantic-ai ``Agent``.
        run_options: Other ``agent.run`` keyword arguments (``deps``, ``model_settings``...).
    """

    def __init__(self, agent: Any, **run_options: Any) -> None:
        self.agent = agent
        self.run_options = run_options
        self.history: list[Any] = []

    async def respond(self, message: str, session_id: str) -> Context:
        started = time.perf_counter()
        result = await self.agent.run(message, message_history=list(self.history) or None, **self.run_options)
        self.history = list(_call(get(result, "all_messages")) or ())
        return context_from_pydantic_ai(result, duration=time.perf_counter() - started)

    def close(self) -> None:
        """Revival: forget the conversation."""
        self.history.clear()


def pydantic_ai_sessions(agent: Any, **run_options: Any) -> Callable[[], PydanticAISession]:
    """A suite factory: each session of the run gets its own ``PydanticAISession`` of ``agent``."""
    return functools.partial(PydanticAISession, agent, **run_options)


aevaluate_pydantic_ai, evaluate_pydantic_ai = evaluators(
    "pydantic_ai",
    run=lambda agent, prompt, options: agent.run(prompt, **options),
    run_sync=lambda agent, prompt, options: agent.run_sync(prompt, **options),
    context=context_from_pydantic_ai,
    sync_path="``agent.run_sync``",
)
