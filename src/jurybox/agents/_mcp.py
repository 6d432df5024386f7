"""An MCP server's tools driven by a chat model: the agent under test is model + tools.

Needs the optional extra ``jurybox[mcp]`` (the official ``mcp`` SDK). The
server runs as a stdio subprocess for the life of the target (``command:``), or
is reached over HTTP (``url:``, streamable HTTP or SSE); a chat model on an
OpenAI-compatible endpoint sees the server's tools, and every tool it calls is
executed on the server and recorded (name, arguments, result).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import tempfile
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from jurybox.agents._adapter import AgentAdapter
from jurybox.agents._chat import ChatClient, ChatSettings, RequestedCall, chat_settings, chat_settings_schema
from jurybox.agents._conversation import sum_usage
from jurybox.agents._errors import AgentError, TargetConfigError
from jurybox.agents._reply import AgentReply
from jurybox.core import ToolCall, read_json

_KEYS = frozenset(
    {
        "command", "args", "env", "cwd", "url", "transport", "headers", "timeout",
        "model", "system", "max_steps", "tools", "startup_timeout",
    }
)  # fmt: skip
TRANSPORTS = ("streamable-http", "sse")
"""How ``agent.mcp.url`` is reached (the first is the default, as in the MCP specification since 2025-03-26)."""
_ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class ServerCommand:
    """How to start the MCP server (stdio transport)."""

    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: Path | None = None


@dataclass(frozen=True)
class ServerUrl:
    """Where an MCP server listens over HTTP.

    Attributes:
        url: The endpoint (``http://host:8000/mcp`` for streamable HTTP, ``.../sse`` for SSE).
        transport: ``streamable-http`` or ``sse``.
        headers: Sent with every request (``Authorization``...), ``${ENV}`` already expanded.
        timeout: Seconds for a request (connect, write); a stream may stay open longer.
    """

    url: str
    transport: str = TRANSPORTS[0]
    headers: Mapping[str, str] = field(default_factory=dict)
    timeout: float = 30.0

    @property
    def shown(self) -> str:
        """The URL without credentials or query (it may carry a token): what names and errors show."""
        parts = urlsplit(self.url)
        host = parts.hostname or ""
        netloc = f"{host}:{parts.port}" if parts.port else host
        return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def mcp_field(obj: Any, snake: str, camel: str) -> Any:
    """Read a field from an ``mcp`` model under its v2 (snake_case) or v1 (camelCase) name."""
    return getattr(obj, snake, getattr(obj, camel, None))


def _tool_schema(tool: Any) -> dict[str, Any]:
    schema = mcp_field(tool, "input_schema", "inputSchema") or {"type": "object", "properties": {}}
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description or "", "parameters": schema},
    }


def tool_result_value(result: Any) -> tuple[Any, str]:
    """(value to record, text to show the model) for a CallToolResult."""
    texts = [block.text for block in result.content or () if getattr(block, "type", None) == "text"]
    text = "\n".join(texts)
    structured = mcp_field(result, "structured_content", "structuredContent")
    if isinstance(structured, Mapping) and set(structured) == {"result"}:
        # Servers wrap a plain return value as {"result": value}; record the value itself.
        structured = structured["result"]
    value: Any = structured if structured is not None else _json_or_text(text)
    if mcp_field(result, "is_error", "isError"):
        return {"error": text or str(structured)}, f"error: {text or structured}"
    shown = text if text else json.dumps(structured, default=str)
    return value, shown


def _json_or_text(text: str) -> Any:
    """A tool's text result as the value it encodes, when it is a JSON object or array (``-> dict`` tools)."""
    stripped = text.strip()
    if stripped[:1] in ("{", "[") and stripped[-1:] in ("}", "]"):
        with contextlib.suppress(ValueError):
            return read_json(stripped)
    return text


@contextlib.asynccontextmanager
async def _http_streams(server: ServerUrl) -> AsyncIterator[tuple[Any, Any]]:
    """(read, write) streams to a server over streamable HTTP or SSE, with its headers and timeout."""
    headers = dict(server.headers)
    if server.transport == "sse":
        from mcp.client.sse import sse_client

        async with sse_client(server.url, headers=headers, timeout=server.timeout) as (read, write):
            yield read, write
        return
    try:  # mcp 2.x: headers and timeouts live on the HTTP client handed in
        import httpx2
        from mcp.client.streamable_http import streamable_http_client
    except ImportError:  # mcp 1.x
        from mcp.client.streamable_http import streamablehttp_client  # type: ignore[attr-defined]

        async with streamablehttp_client(server.url, headers=headers, timeout=server.timeout) as streams:
            yield streams[0], streams[1]
        return
    client = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(server.timeout, read=300.0))
    async with client, streamable_http_client(server.url, http_client=client) as streams:
        yield streams[0], streams[1]


class McpTarget:
    """A chat model that answers by calling an MCP server's tools.

    The adapter keeps each session's history (including tool calls and their
    results); revival drops it. The server process is shared by all sessions
    and lives until ``aclose``.
    """

    def __init__(
        self,
        server: ServerCommand | ServerUrl,
        chat: ChatSettings | None,
        *,
        name: str | None = None,
        system: str | None = None,
        max_steps: int = 8,
        allowed_tools: Sequence[str] | None = None,
        startup_timeout: float = 30.0,
    ) -> None:
        if isinstance(server, ServerUrl):
            self.name = name or f"mcp:{server.shown}"
        else:
            self.name = name or f"mcp:{Path(server.command).name} {' '.join(server.args)}".strip()
        self.server = server
        self.system = system
        self.max_steps = max_steps
        self.allowed_tools = tuple(allowed_tools) if allowed_tools is not None else None
        self.startup_timeout = startup_timeout
        # No model: the server is tested directly (cases with mcp_call), never through a model.
        self._chat = ChatClient(chat, agent=self.name) if chat is not None else None
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
                    f"agent {self.name}: could not {self._verb()} within {self.startup_timeout:g}s"
                ) from None
            if self._session is None:
                error = self._startup_error
                reason = self._scrub(f"{type(error).__name__}: {error}{self._server_output()}")
                raise AgentError(f"agent {self.name}: cannot {self._verb()}: {reason}") from error
            return self._session

    async def _own_connection(self) -> None:
        # One task enters and leaves the SDK's context managers: anyio cancel
        # scopes must exit in the task that entered them. Other tasks only
        # send requests through the session.
        from mcp import ClientSession

        # A stdio server's stderr goes to a file, so a failed start can say what the server printed.
        with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as errlog:
            try:
                async with self._streams(errlog) as (read, write), ClientSession(read, write) as session:
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

    @contextlib.asynccontextmanager
    async def _streams(self, errlog: Any) -> AsyncIterator[tuple[Any, Any]]:
        """The (read, write) streams of the server's transport."""
        server = self.server
        if isinstance(server, ServerUrl):
            async with _http_streams(server) as streams:
                yield streams
            return
        from mcp import StdioServerParameters, stdio_client
        from mcp.client.stdio import get_default_environment

        parameters = StdioServerParameters(
            command=server.command,
            args=list(server.args),
            # The SDK's safe default environment (PATH, HOME...) plus the spec's variables.
            env={**get_default_environment(), **server.env} if server.env else None,
            cwd=str(server.cwd) if server.cwd else None,
        )
        async with stdio_client(parameters, errlog=errlog) as (read, write):
            yield read, write

    def _scrub(self, text: str) -> str:
        """An error without the URL's query or credentials or any header value (tokens)."""
        server = self.server
        if not isinstance(server, ServerUrl):
            return text
        text = text.replace(server.url, server.shown)
        for value in server.headers.values():
            for secret in (value, *value.split()):
                if len(secret) >= 6:
                    text = text.replace(secret, "***")
        return text

    def _verb(self) -> str:
        if isinstance(self.server, ServerUrl):
            return f"connect to MCP server at {self.server.shown} ({self.server.transport})"
        return f"start MCP server {self.server.command!r}"

    def _server_output(self) -> str:
        return f"; the server printed: {self._server_stderr}" if self._server_stderr else ""

    async def _list_tools(self, session: Any) -> list[dict[str, Any]]:
        tools: list[Any] = []
        listing = await session.list_tools()
        tools.extend(listing.tools)
        cursor = mcp_field(listing, "next_cursor", "nextCursor")
        while cursor:
            from mcp import types

            try:
                listing = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor))
            except TypeError:  # mcp 1.x takes the cursor itself
                listing = await session.list_tools(cursor=cursor)
            tools.extend(listing.tools)
            cursor = mcp_field(listing, "next_cursor", "nextCursor")
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
        if self._chat is None:
            raise AgentError(
                f"agent {self.name}: agent.mcp has no model, so cases can only call the server directly "
                "(mcp_call: {tool, arguments} | {list_tools: true} | {resource: URI}); give a model to use prompts"
            )
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
            detail = self._scrub(str(exc))
            if self._session is None:
                raise AgentError(f"agent {self.name}: the MCP server stopped during {call.name}: {detail}") from exc
            # A protocol-level error (bad arguments, tool raised): shown to the model like a tool error.
            return {"error": f"{type(exc).__name__}: {detail}"}, f"error: {detail}"
        return tool_result_value(result)

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
        if self._chat is not None:
            await self._chat.aclose()

    async def session(self) -> Any:
        """The connected SDK session (connecting on first use), for direct calls (``mcp_call``)."""
        return await self._connect()

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
    server = _server(options, base_dir)
    model = options.get("model")
    if isinstance(model, str):
        model = {"model": model}
    if model is not None and not isinstance(model, Mapping):
        raise TargetConfigError("agent.mcp.model: the chat model that picks tools: {model, base_url, ...}")
    # Without a model the server is tested directly: each case names the call (mcp_call).
    chat = chat_settings(model, field_prefix="agent.mcp.model") if model is not None else None
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
    return McpTarget(
        server,
        chat,
        name=name,
        system=system,
        max_steps=max_steps,
        allowed_tools=tools,
        startup_timeout=float(startup),
    )


def _server(options: Mapping[str, Any], base_dir: Path | None) -> ServerCommand | ServerUrl:
    """``command:`` (stdio) or ``url:`` (HTTP), with the keys that go with each."""
    command, url = options.get("command"), options.get("url")
    if command is not None and url is not None:
        raise TargetConfigError("agent.mcp: give either command (a stdio server) or url (an HTTP server), not both")
    if url is not None:
        return _server_url(options)
    for key in ("transport", "headers", "timeout"):
        if key in options:
            raise TargetConfigError(f"agent.mcp.{key}: goes with url (an HTTP server), not with command")
    if not isinstance(command, str) or not command:
        raise TargetConfigError(
            f"agent.mcp.command: required (the program that starts the server), or url: for an HTTP server "
            f"(got {command!r})"
        )
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
    return ServerCommand(
        command=command,
        args=tuple(str(a) for a in args),
        env={str(k): str(v) for k, v in env.items()},
        cwd=cwd,
    )


def _server_url(options: Mapping[str, Any]) -> ServerUrl:
    url = options["url"]
    for key in ("args", "env", "cwd"):
        if key in options:
            raise TargetConfigError(f"agent.mcp.{key}: goes with command (a stdio server), not with url")
    parts = urlsplit(url) if isinstance(url, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise TargetConfigError(f"agent.mcp.url: expected an http:// or https:// URL, got {url!r}")
    transport = options.get("transport", TRANSPORTS[0])
    if transport not in TRANSPORTS:
        raise TargetConfigError(f"agent.mcp.transport: expected one of {', '.join(TRANSPORTS)}, got {transport!r}")
    raw_headers = options.get("headers") or {}
    if not isinstance(raw_headers, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str | int | float) for k, v in raw_headers.items()
    ):
        raise TargetConfigError("agent.mcp.headers: expected a mapping of header name to text")
    headers = {name: _expand(f"agent.mcp.headers.{name}", str(value)) for name, value in raw_headers.items()}
    timeout = options.get("timeout", 30.0)
    if not isinstance(timeout, int | float) or isinstance(timeout, bool) or not 0 < timeout <= 3600:
        raise TargetConfigError(f"agent.mcp.timeout: expected seconds between 0 and 3600, got {timeout!r}")
    return ServerUrl(url, transport, headers, float(timeout))


def _expand(field_name: str, value: str) -> str:
    """``${NAME}`` from the environment; a missing variable is named (its value never is)."""

    def variable(found: re.Match[str]) -> str:
        name = found.group(1)
        if name not in os.environ:
            raise TargetConfigError(f"{field_name}: the environment variable {name} is not set")
        return os.environ[name]

    return _ENV_REFERENCE.sub(variable, value)


def _build(settings: Any, *, name: str | None, base_dir: Path | None, spec: Mapping[str, Any]) -> McpTarget:
    return mcp_target(settings, name=name, base_dir=base_dir)


ADAPTER = AgentAdapter(
    build=_build,
    settings_schema={
        "type": "object",
        "properties": {key: {} for key in sorted(_KEYS)}
        | {"model": {"anyOf": [{"type": "string"}, chat_settings_schema()]}, "transport": {"enum": list(TRANSPORTS)}},
        "additionalProperties": False,
    },
)
"""``agent: {mcp: {command | url, model, tools, ...}}``."""
