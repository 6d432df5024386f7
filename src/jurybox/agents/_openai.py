"""An OpenAI-compatible endpoint as the agent under test: chat completions, or the Responses API."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from jurybox.agents._adapter import AgentAdapter
from jurybox.agents._chat import ChatClient, ChatSettings, chat_settings, chat_settings_schema
from jurybox.agents._errors import TargetConfigError
from jurybox.agents._http import parse_path
from jurybox.agents._lessons import current_lessons, lessons_system_message
from jurybox.agents._reply import AgentReply
from jurybox.agents._reported import DEFAULT_TOOL_CALLS_PATH
from jurybox.agents._session import SessionCarrier, request_parts, session_carrier
from jurybox.agents._target import Target
from jurybox.core import ToolCall

APIS = ("chat", "responses")
_TARGET_KEYS = ("system", "tools", "session", "tool_calls_path", "api", "history", "lessons")
LESSONS_AS = ("system",)
"""How a chat endpoint may be handed the case's stored lessons (off unless asked: it changes the prompt)."""
DEFAULT_PATH = tuple(DEFAULT_TOOL_CALLS_PATH.split("."))


class OpenAIChatTarget:
    """Chats with an OpenAI-compatible endpoint (``/v1/chat/completions``).

    The endpoint is stateless, so this adapter keeps each session's history
    and sends it with every message, together with the session id (as
    ``user``, a header, or where a ``{session_id}`` template puts it) so a
    service that keeps state can key it. Tool calls in a response are recorded
    as the reply's ToolCalls, after the ones the service reports it ran
    internally (``metadata.tool_calls`` by default); they are not executed (the
    endpoint, or the application behind it, owns its tools), and the history
    keeps only the assistant's text so the next request stays valid. Revival
    drops the history: the next round has context only if the service behind
    the endpoint kept the conversation under the session id.
    """

    def __init__(
        self,
        settings: ChatSettings,
        *,
        name: str | None = None,
        system: str | None = None,
        tools: Sequence[Mapping[str, Any]] = (),
        session: SessionCarrier | None = None,
        tool_calls_path: Sequence[str | int] | None = DEFAULT_PATH,
        lessons: str | None = None,
    ) -> None:
        self.name = name or f"openai:{settings.model}"
        self.lessons = lessons
        self.settings = settings
        self.system = system
        self.tools = tuple(chat_tool(t) for t in tools)
        self.session = session or SessionCarrier()
        self._chat = ChatClient(settings, agent=self.name, tool_calls_path=tool_calls_path)
        self._history: dict[str, list[dict[str, Any]]] = {}

    async def respond(self, message: str, session_id: str) -> AgentReply:
        history = self._history.setdefault(session_id, [])
        if not history and self.system:
            history.append({"role": "system", "content": self.system})
        if not history or (len(history) == 1 and history[0]["role"] == "system"):
            note = lessons_system_message(current_lessons()) if self.lessons == "system" else None
            if note is not None:
                history.append({"role": "system", "content": note})
        request = [*history, {"role": "user", "content": message}]
        body, headers = request_parts(
            self.session, session_id, extra_body=self.settings.extra_body, headers=self.settings.headers
        )
        turn = await self._chat.complete(request, self.tools, extra_body=body, headers=headers)
        # Only a successful turn enters the history, so a retried message is not sent twice.
        history.append({"role": "user", "content": message})
        history.append({"role": "assistant", "content": turn.text})
        asked = (ToolCall(name=c.name, arguments=c.arguments, result=c.result, id=c.id) for c in turn.calls)
        usage = dict(turn.usage)
        if turn.finish_reason is not None:
            usage["finish_reason"] = turn.finish_reason
        return AgentReply(text=turn.text, tool_calls=(*turn.reported, *asked), usage=usage, raw=turn.message)

    async def close_session(self, session_id: str) -> None:
        self._history.pop(session_id, None)

    async def aclose(self) -> None:
        self._history.clear()
        await self._chat.aclose()

    def __repr__(self) -> str:
        return f"OpenAIChatTarget({self.name!r}, sessions={len(self._history)})"


def chat_tool(tool: Mapping[str, Any]) -> dict[str, Any]:
    """A tool definition in the chat shape ``{type: function, function: {...}}`` (from either API's shape)."""
    if isinstance(tool.get("function"), Mapping) or tool.get("type") != "function":
        return dict(tool)
    return {"type": "function", "function": {k: v for k, v in tool.items() if k != "type"}}


def _tools(value: Any, *, api: str) -> list[Mapping[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise TargetConfigError("agent.openai.tools: expected a list of OpenAI tool definitions")
    for position, tool in enumerate(value):
        function = tool.get("function", tool) if isinstance(tool, Mapping) else None
        is_function = isinstance(tool, Mapping) and tool.get("type") == "function"
        named = isinstance(function, Mapping) and isinstance(function.get("name"), str)
        # The Responses API also runs hosted tools ({type: web_search}); those need no function.
        hosted = api == "responses" and isinstance(tool, Mapping) and isinstance(tool.get("type"), str)
        if not (is_function and named) and not (hosted and not is_function):
            raise TargetConfigError(
                f"agent.openai.tools[{position}]: expected "
                "{type: function, function: {name, description, parameters}}"
                + (" or {type: function, name, parameters}" if api == "responses" else "")
            )
    return list(value)


def openai_target(options: Mapping[str, Any], *, name: str | None = None) -> Target:
    """Build the target from ``agent.openai``; errors name the field.

    Reads the chat settings plus ``system``, ``tools``, ``session``,
    ``tool_calls_path``, ``api: chat | responses`` (with ``history`` for the
    Responses API) and ``lessons: system`` (chat only: the case's stored lessons
    as one more system message).
    """
    settings = chat_settings(options, field_prefix="agent.openai", extra_keys=_TARGET_KEYS)
    api = options.get("api", "chat")
    if api not in APIS:
        raise TargetConfigError(f"agent.openai.api: expected one of {', '.join(APIS)}, got {api!r}")
    system = options.get("system")
    if system is not None and not isinstance(system, str):
        raise TargetConfigError(f"agent.openai.system: expected the system prompt as a string, got {system!r}")
    tools = _tools(options.get("tools"), api=api)
    session = session_carrier(options.get("session"), field="agent.openai.session")
    path_option = options.get("tool_calls_path")
    if path_option is None:
        path_option = DEFAULT_TOOL_CALLS_PATH
    tool_calls_path = None if path_option is False else parse_path(path_option, field="agent.openai.tool_calls_path")
    if api == "responses" and options.get("lessons") is not None:
        raise TargetConfigError("agent.openai.lessons: only for 'api: chat' (the Responses API keeps its own history)")
    if api == "responses":
        from jurybox.agents._responses import responses_target

        return responses_target(
            settings,
            options,
            name=name,
            system=system,
            tools=tools,
            session=session,
            tool_calls_path=tool_calls_path,
        )
    if "history" in options:
        raise TargetConfigError("agent.openai.history: only for 'api: responses' (chat always replays the history)")
    lessons = options.get("lessons")
    if lessons is not None and lessons not in LESSONS_AS:
        raise TargetConfigError(f"agent.openai.lessons: expected 'system' (or leave it out), got {lessons!r}")
    return OpenAIChatTarget(
        settings,
        name=name,
        system=system,
        tools=tools,
        session=session,
        tool_calls_path=tool_calls_path,
        lessons=lessons,
    )


def _build(settings: Any, *, name: str | None, base_dir: Any, spec: Mapping[str, Any]) -> Target:
    return openai_target(settings, name=name)


ADAPTER = AgentAdapter(build=_build, settings_schema=chat_settings_schema(_TARGET_KEYS))
"""``agent: {openai: {model, base_url, ...}}``."""
