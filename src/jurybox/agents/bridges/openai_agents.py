"""OpenAI Agents SDK ``RunResult`` to a Context.

Reads ``input``, ``final_output``, ``new_items`` (``tool_call_item`` with a
``raw_item`` carrying ``name``/``arguments``/``call_id``,
``tool_call_output_item`` with ``output``, ``message_output_item``),
``raw_responses[].usage`` and ``last_agent.name``. Reading results never imports the SDK;
``OpenAIAgentsSession`` (an agent under test whose history lives in an SDK session, so
revival drops it) and ``evaluate_openai_agents`` (run, build the Context, judge: one line)
import it when they run.
"""

from __future__ import annotations

import functools
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


class OpenAIAgentsSession:
    """One conversation with an OpenAI Agents SDK agent, as the agent under test (a Python factory's object).

    Each jurybox session gets its own SDK session (an in-memory ``SQLiteSession`` unless
    ``make_session`` builds another kind), so later rounds see earlier ones and revival,
    which closes this object, drops the history. Use it as a suite's factory::

        factory = openai_agents_sessions(my_agent)       # agent: {python: "evals:factory"}

    Args:
        agent: The SDK ``Agent``.
        make_session: Builds the SDK session for a session id (default: in-memory ``SQLiteSession``).
        max_turns: Passed to ``Runner.run``.
        run_options: Other ``Runner.run`` keyword arguments (``run_config``, ``context``...).
    """

    def __init__(
        self,
        agent: Any,
        *,
        make_session: Callable[[str], Any] | None = None,
        max_turns: int = 10,
        **run_options: Any,
    ) -> None:
        self.agent = agent
        self.make_session = make_session
        self.max_turns = max_turns
        self.run_options = run_options
        self.session: Any = None

    async def respond(self, message: str, session_id: str) -> Context:
        from agents import Runner, SQLiteSession

        if self.session is None:
            self.session = self.make_session(session_id) if self.make_session else SQLiteSession(session_id)
        started = time.perf_counter()
        result = await Runner.run(
            self.agent, message, session=self.session, max_turns=self.max_turns, **self.run_options
        )
        return context_from_openai_agents(result, duration=time.perf_counter() - started)

    async def close(self) -> None:
        """Revival: forget the conversation (a persistent session of your own keeps what it stored)."""
        session, self.session = self.session, None
        if session is not None and self.make_session is None:
            await session.clear_session()


def openai_agents_sessions(agent: Any, **options: Any) -> Callable[[], OpenAIAgentsSession]:
    """A suite factory: each session of the run gets its own ``OpenAIAgentsSession`` of ``agent``."""
    return functools.partial(OpenAIAgentsSession, agent, **options)


def _run(agent: Any, prompt: str, options: dict[str, Any]) -> Any:
    from agents import Runner

    return Runner.run(agent, prompt, **options)


def _run_sync(agent: Any, prompt: str, options: dict[str, Any]) -> Any:
    from agents import Runner

    return Runner.run_sync(agent, prompt, **options)


aevaluate_openai_agents, evaluate_openai_agents = evaluators(
    "openai_agents", run=_run, run_sync=_run_sync, context=context_from_openai_agents, sync_path="``Runner.run_sync``"
)
