"""An OpenAI-compatible chat endpoint as the agent under test."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from jurybox.agents._chat import ChatClient, ChatSettings, chat_settings
from jurybox.agents._errors import TargetConfigError
from jurybox.agents._reply import AgentReply
from jurybox.core import ToolCall


class OpenAIChatTarget:
    """Chats with an OpenAI-compatible endpoint (``/v1/chat/completions``).

    The endpoint is stateless, so this adapter keeps each session's history
    and sends it with every message. Tool calls in a response are recorded
    as the reply's ToolCalls; they are not executed (the endpoint, or the
    application behind it, owns its tools), and the history keeps only the
    assistant's text so the next request stays valid. Revival drops the
    history: a chat endpoint has no memory of its own, so a revival round
    fails unless the service behind the endpoint persists conversations.
    """

    def __init__(
        self,
        settings: ChatSettings,
        *,
        name: str | None = None,
        system: str | None = None,
        tools: Sequence[Mapping[str, Any]] = (),
    ) -> None:
        self.name = name or f"openai:{settings.model}"
        self.system = system
        self.tools = tuple(dict(t) for t in tools)
        self._chat = ChatClient(settings, agent=self.name)
        self._history: dict[str, list[dict[str, Any]]] = {}

    async def respond(self, message: str, session_id: str) -> AgentReply:
        history = self._history.setdefault(session_id, [])
        if not history and self.system:
            history.append({"role": "system", "content": self.system})
        request = [*history, {"role": "user", "content": message}]
        turn = await self._chat.complete(request, self.tools)
        # Only a successful turn enters the history, so a retried message is not sent twice.
        history.append({"role": "user", "content": message})
        history.append({"role": "assistant", "content": turn.text})
        calls = tuple(ToolCall(name=c.name, arguments=c.arguments, id=c.id) for c in turn.calls)
        usage = dict(turn.usage)
        if turn.finish_reason is not None:
            usage["finish_reason"] = turn.finish_reason
        return AgentReply(text=turn.text, tool_calls=calls, usage=usage, raw=turn.message)

    async def close_session(self, session_id: str) -> None:
        self._history.pop(session_id, None)

    async def aclose(self) -> None:
        self._history.clear()
        await self._chat.aclose()

    def __repr__(self) -> str:
        return f"OpenAIChatTarget({self.name!r}, sessions={len(self._history)})"


def openai_target(options: Mapping[str, Any], *, name: str | None = None) -> OpenAIChatTarget:
    """Build the target from ``agent.openai`` (chat settings plus ``system`` and ``tools``)."""
    settings = chat_settings(options, field_prefix="agent.openai", extra_keys=("system", "tools"))
    system = options.get("system")
    if system is not None and not isinstance(system, str):
        raise TargetConfigError(f"agent.openai.system: expected the system prompt as a string, got {system!r}")
    tools = options.get("tools") or []
    if not isinstance(tools, Sequence) or isinstance(tools, str):
        raise TargetConfigError("agent.openai.tools: expected a list of OpenAI tool definitions")
    for position, tool in enumerate(tools):
        if (
            not isinstance(tool, Mapping)
            or tool.get("type") != "function"
            or not isinstance(tool.get("function"), Mapping)
        ):
            raise TargetConfigError(
                f"agent.openai.tools[{position}]: expected "
                "{type: function, function: {name, description, parameters}}"
            )
    return OpenAIChatTarget(settings, name=name, system=system, tools=tools)
