"""An agent served through the OpenAI Responses API (``POST /v1/responses``) as the agent under test.

The Responses API is what the OpenAI Agents SDK speaks by default, and what
several servers (OpenAI, vLLM, Ollama, LiteLLM) offer beside chat completions.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from jurybox.agents._chat import ChatClient, ChatSettings, parse_arguments
from jurybox.agents._errors import AgentError, TargetConfigError
from jurybox.agents._reply import AgentReply
from jurybox.agents._reported import reported_tool_calls
from jurybox.agents._session import SessionCarrier, request_parts
from jurybox.core import ToolCall

History = Literal["replay", "previous_response_id"]
HISTORIES: tuple[History, ...] = ("replay", "previous_response_id")
MAX_OUTPUT_ITEMS = 1_000


class ResponsesTarget:
    """Talks to an agent behind ``/v1/responses``.

    With ``history: replay`` (the default) the adapter keeps each session's
    conversation and sends it as ``input`` message items with every request,
    so it works with any server, stateless or not. With ``history:
    previous_response_id`` it sends only the new message and chains it to the
    session's last response id, for servers that store responses. Either way
    revival drops what the adapter holds, so the next round has context only if
    the service keeps it under the session id (sent as for the chat adapter).

    ``message`` output items are the reply's text (their ``output_text``
    parts), ``function_call`` items the tool calls it asks for (name, parsed
    arguments, ``call_id``; not executed), ``mcp_call`` items the hosted MCP
    calls the server ran (with their output); tool calls the service reports at
    ``tool_calls_path`` come first.
    """

    def __init__(
        self,
        settings: ChatSettings,
        *,
        name: str | None = None,
        system: str | None = None,
        tools: Sequence[Mapping[str, Any]] = (),
        session: SessionCarrier | None = None,
        history: History = "replay",
        tool_calls_path: Sequence[str | int] | None = None,
    ) -> None:
        self.name = name or f"openai-responses:{settings.model}"
        self.settings = settings
        self.system = system
        self.tools = tuple(responses_tool(t) for t in tools)
        self.session = session or SessionCarrier()
        self.history = history
        self._client = ChatClient(settings, agent=self.name, tool_calls_path=tool_calls_path)
        self._items: dict[str, list[dict[str, Any]]] = {}
        self._previous: dict[str, str] = {}

    def _request(self, message: str, session_id: str) -> dict[str, Any]:
        arguments: dict[str, Any] = {"model": self.settings.model}
        if self.history == "replay":
            arguments["input"] = [*self._items.get(session_id, ()), {"role": "user", "content": message}]
        else:
            arguments["input"] = message
            if session_id in self._previous:
                arguments["previous_response_id"] = self._previous[session_id]
        if self.system:
            arguments["instructions"] = self.system
        if self.tools:
            arguments["tools"] = [dict(t) for t in self.tools]
        if self.settings.temperature is not None:
            arguments["temperature"] = self.settings.temperature
        if self.settings.max_tokens is not None:
            arguments["max_output_tokens"] = self.settings.max_tokens
        return arguments

    async def respond(self, message: str, session_id: str) -> AgentReply:
        arguments = self._request(message, session_id)
        body, headers = request_parts(
            self.session, session_id, extra_body=self.settings.extra_body, headers=self.settings.headers
        )
        if body:
            arguments["extra_body"] = body
        document = await self._client.post("responses", arguments, headers=headers)
        text, calls, usage = self._read(document)
        # Only a successful turn enters the history, so a retried message is not sent twice.
        if self.history == "replay":
            self._items.setdefault(session_id, []).extend(
                [{"role": "user", "content": message}, {"role": "assistant", "content": text}]
            )
        elif isinstance(document.get("id"), str):
            self._previous[session_id] = document["id"]
        return AgentReply(
            text=text, tool_calls=(*self._client.reported_calls(document), *calls), usage=usage, raw=document
        )

    def _fail(self, problem: str) -> AgentError:
        return AgentError(f"agent {self.name}: endpoint {self._client.where} {problem}")

    def _read(self, document: Mapping[str, Any]) -> tuple[str, list[ToolCall], dict[str, Any]]:
        status = document.get("status")
        if status == "failed" or isinstance(document.get("error"), Mapping):
            error = document.get("error")
            detail = error.get("message") if isinstance(error, Mapping) else None
            raise self._fail(f"reported the response failed: {detail or json.dumps(error, default=str)[:300]}")
        output = document.get("output")
        if not isinstance(output, list) or len(output) > MAX_OUTPUT_ITEMS:
            raise self._fail(
                f"answered without an 'output' list of at most {MAX_OUTPUT_ITEMS} items: "
                f"{json.dumps(document, default=str)[:300]}"
            )
        texts: list[str] = []
        raw_calls: list[Mapping[str, Any]] = []
        for item in output:
            if not isinstance(item, Mapping):
                continue
            if item.get("type") == "message":
                texts += _message_text(item.get("content"))
            elif item.get("type") in ("function_call", "mcp_call"):
                arguments = item.get("arguments")
                if isinstance(arguments, str):
                    # A model's arguments that are not JSON are kept (as _raw_arguments) for the judges to see.
                    raw_calls.append({**item, "arguments": parse_arguments(arguments)})
                else:
                    raw_calls.append(item)
        try:
            calls = list(reported_tool_calls(raw_calls, field="output (function_call items)"))
        except ValueError as exc:
            raise self._fail(f"answered a malformed tool call: {exc}") from exc
        usage: dict[str, Any] = {}
        counts = document.get("usage")
        if isinstance(counts, Mapping):
            for key in ("input_tokens", "output_tokens", "total_tokens"):
                value = counts.get(key)
                if isinstance(value, int) and not isinstance(value, bool):
                    usage[key] = value
        if isinstance(status, str):
            usage["status"] = status
        incomplete = document.get("incomplete_details")
        if isinstance(incomplete, Mapping) and isinstance(incomplete.get("reason"), str):
            usage["incomplete_reason"] = incomplete["reason"]
        return "".join(texts), calls, usage

    async def close_session(self, session_id: str) -> None:
        self._items.pop(session_id, None)
        self._previous.pop(session_id, None)

    async def aclose(self) -> None:
        self._items.clear()
        self._previous.clear()
        await self._client.aclose()

    def __repr__(self) -> str:
        return f"ResponsesTarget({self.name!r}, history={self.history!r})"


def _message_text(content: Any) -> list[str]:
    """The text of a ``message`` output item: its ``output_text`` parts (a refusal is what the user saw)."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    texts = []
    for part in content:
        if isinstance(part, Mapping) and part.get("type") == "output_text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif isinstance(part, Mapping) and part.get("type") == "refusal" and isinstance(part.get("refusal"), str):
            texts.append(part["refusal"])
    return texts


def responses_tool(tool: Mapping[str, Any]) -> dict[str, Any]:
    """A tool definition in the Responses shape ``{type: function, name, parameters}`` (from either API's)."""
    function = tool.get("function")
    if tool.get("type") == "function" and isinstance(function, Mapping):
        return {"type": "function", **dict(function)}
    return dict(tool)


def responses_target(
    settings: ChatSettings,
    options: Mapping[str, Any],
    *,
    name: str | None,
    system: str | None,
    tools: Sequence[Mapping[str, Any]],
    session: SessionCarrier,
    tool_calls_path: Sequence[str | int] | None,
) -> ResponsesTarget:
    """The ``agent.openai`` adapter with ``api: responses``; ``history`` is validated here."""
    history = options.get("history", "replay")
    if history not in HISTORIES:
        raise TargetConfigError(f"agent.openai.history: expected one of {', '.join(HISTORIES)}, got {history!r}")
    return ResponsesTarget(
        settings,
        name=name,
        system=system,
        tools=tools,
        session=session,
        history=history,
        tool_calls_path=tool_calls_path,
    )
