"""An MCP server's tools driven by a chat model: the agent under test is model + tools.

Needs the optional extra ``jurybox[mcp]`` (the official ``mcp`` SDK). The
server runs as a stdio subprocess for the life of the target; a chat model on
an OpenAI-compatible endpoint sees the server's tools, and every tool it
calls is executed on the server and recorded (name, arguments, result).
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jurybox.agents._chat import ChatClient, ChatSettings, RequestedCall, chat_settings
from jurybox.agents._conversation import sum_usage
from jurybox.agents._errors import AgentError, TargetConfigError
from jurybox.agents._reply import AgentReply
from jurybox.core import ToolCall

_KEYS = frozenset({"command", "args", "env", "cwd", "model", "system", "max_steps", "tools", "startup_timeout"})


@dataclass(frozen=True)
class ServerCommand:
    """How to start the MCP server (stdio transport)."""

    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: Path | None = None


def _field(obj: Any, snake: str, camel: str) -> Any:
    """Read a field from an ``mcp`` model under its v2 (snake_case) or v1 (camelCase) name."""
    return getattr(obj, snake, getattr(obj, camel, None))


def _tool_schema(tool: Any) -> dict[str, Any]:
    schema = _field(tool, "input_schema", "inputSchema") or {"type": "object", "properties": {}}
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description or "", "parameters": schema},
    }


def _result_value(result: Any) -> tuple[Any, str]:
    """(value to record, text to show the model) for a CallToolResult."""
    texts = [block.text for block in result.content or () if getattr(block, "type", None) == "text"]
    text = "\n".join(texts)
    structured = _field(result, "structured_content", "structuredContent")
    if isinstance(structured, Mapping) and set(structured) == {"result"}:
        # Servers wrap a plain return value as {"result": value}; record the value itself.
        structured = structured["result"]
    value: Any = structured if structured is not None else text
    if _field(result, "is_error", "isError"):
        return {"error": text or str(structured)}, f"error: {text or structured}"
    shown = text if text else json.dumps(structured, default=str)
    return value, shown


class McpTarget:
    """A chat model that answers by calling an MCP server's tools.

    The adapter keeps each session's history (including tool calls and their
    results); revival drops it. The server process is shared by all sessions
    and lives until ``aclose``.
    """

    def __init__(
        self,
        server: ServerCommand,
        chat: ChatSettings,
        *,
        name: str | None = None,
        system: str | None = None,
        max_steps: int = 8,
        allowed_tools: Sequence[str] | None = None,
        startup_timeout: float = 30.0,
    ) -> None:
        self.name = name or f"mcp:{Path(server.command).name} {' '.join(server.args)}".strip()
        self.server = server
        self.system = system
        self.max_steps = max_steps
        self.allowed_tools = tuple(allowed_tools) if allowed_tools is not None else None
        self.startup_timeout = startup_timeout
        self._chat = ChatClient(chat, agent=self.name)
        self._history: dict[str, list[dict[str, Any]]] = {}
        self._session: Any = None
        self._tools: list[dict[str, Any]] = []
        self._owner: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._startup_error: BaseException | None = None
        self._server_stderr = ""
        self._connect_lock = asyncio.Lock()

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The server's tools as OpenAI function definitions (after the first message)."""
        return list(self._tools)

    async def _connect(self) -> Any:
        async with self._connect_lock:
            if self._session is not None:
                return self._session
            if self._owner is not None:
                raise AgentError(f"agent {self.name}: the MCP server is not running: {self._startup_error!r}")
            self._owner = asyncio.create_task(self._own_connection(), name=f"jurybox-mcp {self.name}")
            try:
                async with asyncio.timeout(self.startup_timeout):
                    await self._ready.wait()
            except TimeoutError:
                self._stop.set()
                raise AgentError(
                    f"agent {self.name}: the MCP server did not start within {self.startup_timeout:g}s"
                ) from None
            if self._session is None:
                error = self._startup_error
                reason = f"{type(error).__name__}: {error}{self._server_output()}"
                raise AgentError(
                    f"agent {self.name}: cannot start MCP server {self.server.command!r}: {reason}"
                ) from error
            return self._session

    async def _own_connection(self) -> None:
        # One task enters and leaves the SDK's context managers: anyio cancel
        # scopes must exit in the task that entered them. Other tasks only
        # send requests through the session.
        from mcp import ClientSession, StdioServerParameters, stdio_client
        from mcp.client.stdio import get_default_environment

        parameters = StdioServerParameters(
            command=self.server.command,
            args=list(self.server.args),
            # The SDK's safe default environment (PATH, HOME...) plus the spec's variables.
            env={**get_default_environment(), **self.server.env} if self.server.env else None,
            cwd=str(self.server.cwd) if self.server.cwd else None,
        )
        # The server's stderr goes to a file, so a failed start can say what the server printed.
        with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as errlog:
            try:
                async with (
                    stdio_client(parameters, errlog=errlog) as (read, write),
                    ClientSession(read, write) as session,
                ):
                    await session.initialize()
                    self._tools = await self._list_tools(session)
                    self._session = session
                    self._ready.set()
                    await self._stop.wait()
            except Exception as exc:
                self._startup_error = exc
                errlog.seek(0)
                self._server_stderr = errlog.read().strip()[-1500:]
            finally:
                self._session = None
                self._ready.set()

    def _server_output(self) -> str:
        return f"; the server printed: {self._server_stderr}" if self._server_stderr else ""

    async def _list_tools(self, session: Any) -> list[dict[str, Any]]:
        tools: list[Any] = []
        listing = await session.list_tools()
        tools.extend(listing.tools)
        cursor = _field(listing, "next_cursor", "nextCursor")
        while cursor:
            from mcp import types

            try:
                listing = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor))
            except TypeError:  # mcp 1.x takes the cursor itself
                listing = await session.list_tools(cursor=cursor)
            tools.extend(listing.tools)
            cursor = _field(listing, "next_cursor", "nextCursor")
        if self.allowed_tools is not None:
            names = {tool.name for tool in tools}
            missing = sorted(set(self.allowed_tools) - names)
            if missing:
                offered = ", ".join(sorted(names))
                raise TargetConfigError(
                    f"agent.mcp.tools: the server has no tool(s) {', '.join(missing)}; it offers {offered}"
                )
            tools = [tool for tool in tools if tool.name in self.allowed_tools]
        return [_tool_schema(tool) for tool in tools]

    async def respond(self, message: str, session_id: str) -> AgentReply:
        session = await self._connect()
        history = self._history.setdefault(session_id, [])
        if not history and self.system:
            history.append({"role": "system", "content": self.system})
        working = [*history, {"role": "user", "content": message}]
        recorded: list[ToolCall] = []
        usages: list[Mapping[str, Any]] = []
        for _step in range(self.max_steps + 1):
            turn = await self._chat.complete(working, self._tools)
            usages.append(turn.usage)
            working.append(turn.message)
            if not turn.calls:
                history[:] = working
                return AgentReply(text=turn.text, tool_calls=tuple(recorded), usage=sum_usage(usages), raw=working)
            for call in turn.calls:
                value, shown = await self._execute(session, call)
                recorded.append(ToolCall(name=call.name, arguments=call.arguments, result=value, id=call.id))
                working.append({"role": "tool", "tool_call_id": call.id, "content": shown})
        names = ", ".join(call.name for call in recorded[-5:])
        raise AgentError(
            f"agent {self.name}: the model was still calling tools after {self.max_steps} step(s) (last: {names})"
        )

    async def _execute(self, session: Any, call: RequestedCall) -> tuple[Any, str]:
        offered = {tool["function"]["name"] for tool in self._tools}
        if call.name not in offered:
            # The model's mistake is part of what is being tested: record it and let the model recover.
            return {"error": f"unknown tool {call.name!r}"}, f"error: there is no tool named {call.name!r}"
        if "_raw_arguments" in call.arguments:
            return {"error": "arguments are not a JSON object"}, "error: the arguments must be a JSON object"
        try:
            result = await session.call_tool(call.name, dict(call.arguments))
        except Exception as exc:
            if self._session is None:
                raise AgentError(f"agent {self.name}: the MCP server stopped during {call.name}: {exc}") from exc
            # A protocol-level error (bad arguments, tool raised): shown to the model like a tool error.
            return {"error": f"{type(exc).__name__}: {exc}"}, f"error: {exc}"
        return _result_value(result)

    async def close_session(self, session_id: str) -> None:
        self._history.pop(session_id, None)

    async def aclose(self) -> None:
        self._history.clear()
        self._stop.set()
        if self._owner is not None:
            owner, self._owner = self._owner, None
            try:
                async with asyncio.timeout(10):
                    await owner
            except TimeoutError:
                owner.cancel()
        await self._chat.aclose()

    def __repr__(self) -> str:
        return f"McpTarget({self.name!r}, tools={len(self._tools)})"


def mcp_target(options: Mapping[str, Any], *, name: str | None = None, base_dir: Path | None = None) -> McpTarget:
    """Build the target from ``agent.mcp``; errors name the field."""
    unknown = sorted(str(k) for k in options if k not in _KEYS)
    if unknown:
        raise TargetConfigError(f"agent.mcp: unknown key(s) {', '.join(unknown)}; valid: {', '.join(sorted(_KEYS))}")
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise TargetConfigError("agent.mcp: the 'mcp' package is not installed; pip install 'jurybox[mcp]'") from None
    command = options.get("command")
    if not isinstance(command, str) or not command:
        raise TargetConfigError(f"agent.mcp.command: required, the program that starts the server (got {command!r})")
    args = options.get("args") or []
    if (
        isinstance(args, str)
        or not isinstance(args, Sequence)
        or not all(isinstance(a, str | int | float) for a in args)
    ):
        raise TargetConfigError("agent.mcp.args: expected a list of strings")
    env = options.get("env") or {}
    if not isinstance(env, Mapping):
        raise TargetConfigError("agent.mcp.env: expected a mapping of variable name to value")
    cwd_option = options.get("cwd")
    cwd = Path(cwd_option) if cwd_option is not None else base_dir
    if cwd is not None and base_dir is not None and not cwd.is_absolute():
        cwd = base_dir / cwd
    model = options.get("model")
    if isinstance(model, str):
        model = {"model": model}
    if not isinstance(model, Mapping):
        raise TargetConfigError("agent.mcp.model: required, the chat model that picks tools: {model, base_url, ...}")
    chat = chat_settings(model, field_prefix="agent.mcp.model")
    system = options.get("system")
    if system is not None and not isinstance(system, str):
        raise TargetConfigError("agent.mcp.system: expected the system prompt as a string")
    max_steps = options.get("max_steps", 8)
    if not isinstance(max_steps, int) or isinstance(max_steps, bool) or max_steps < 1:
        raise TargetConfigError(f"agent.mcp.max_steps: expected a positive integer, got {max_steps!r}")
    tools = options.get("tools")
    if tools is not None and (isinstance(tools, str) or not all(isinstance(t, str) for t in tools)):
        raise TargetConfigError("agent.mcp.tools: expected a list of tool names to offer the model")
    startup = options.get("startup_timeout", 30.0)
    if not isinstance(startup, int | float) or isinstance(startup, bool) or startup <= 0:
        raise TargetConfigError(f"agent.mcp.startup_timeout: expected positive seconds, got {startup!r}")
    server = ServerCommand(
        command=command,
        args=tuple(str(a) for a in args),
        env={str(k): str(v) for k, v in env.items()},
        cwd=cwd,
    )
    return McpTarget(
        server,
        chat,
        name=name,
        system=system,
        max_steps=max_steps,
        allowed_tools=tools,
        startup_timeout=float(startup),
    )
