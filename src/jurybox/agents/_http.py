"""A generic HTTP JSON endpoint as the agent under test: a request template and response paths."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from jurybox.agents._adapter import AgentAdapter
from jurybox.agents._errors import AgentError, AgentTimeout, TargetConfigError
from jurybox.agents._reply import AgentReply
from jurybox.core import ToolCall, error_reason, read_json

if TYPE_CHECKING:
    import httpx


_KEYS = frozenset({"url", "method", "headers", "body", "reply", "tool_calls", "sources", "usage", "timeout", "close"})
_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
DEFAULT_BODY: Mapping[str, Any] = {"message": "{message}", "session_id": "{session_id}"}


def fill(template: Any, message: str, session_id: str) -> Any:
    """Put the message and session id into a JSON-like template.

    ``{message}`` and ``{session_id}`` are replaced inside strings at any
    depth; a string that is exactly a placeholder becomes the value itself.
    Other braces are left alone, so JSON-looking text in a template is safe.
    """
    return fill_placeholders(template, {"{message}": message, "{session_id}": session_id})


def fill_placeholders(template: Any, values: Mapping[str, str]) -> Any:
    """Replace each placeholder of ``values`` inside the strings of ``template``, at any depth (keys too)."""
    if isinstance(template, str):
        # One pass, so a message that itself contains "{session_id}" is sent as written.
        pattern = "|".join(re.escape(placeholder) for placeholder in values)
        return re.sub(pattern, lambda match: values[match.group(0)], template) if pattern else template
    if isinstance(template, Mapping):
        return {fill_placeholders(k, values): fill_placeholders(v, values) for k, v in template.items()}
    if isinstance(template, list | tuple):
        return [fill_placeholders(v, values) for v in template]
    return template


def expand_env(value: str, *, field: str) -> str:
    """Replace ``${NAME}`` with the environment variable; an unset one is a config error."""

    def lookup(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in os.environ:
            raise TargetConfigError(f"{field}: environment variable {name} is not set")
        return os.environ[name]

    return _ENV.sub(lookup, value)


def parse_path(path: Any, *, field: str) -> tuple[str | int, ...]:
    """``"choices.0.message.content"`` -> ``("choices", 0, "message", "content")``."""
    if not isinstance(path, str) or not path.strip():
        raise TargetConfigError(f"{field}: expected a dotted path into the JSON response such as 'data.reply'")
    return tuple(int(part) if part.isdigit() else part for part in path.strip().split("."))


MISSING = object()


def follow(document: Any, path: Sequence[str | int]) -> tuple[Any, str | None]:
    """The value at ``path``, or (missing, a description of where the path broke)."""
    value = document
    for depth, key in enumerate(path):
        where = ".".join(map(str, path[:depth])) or "the top level"
        if isinstance(key, int) and isinstance(value, list):
            if key >= len(value):
                return MISSING, f"{where} is a list of {len(value)} item(s)"
            value = value[key]
        elif isinstance(value, Mapping) and str(key) in value:
            value = value[str(key)]
        elif isinstance(value, Mapping):
            return MISSING, f"{where} has keys {sorted(map(str, value))}"
        else:
            return MISSING, f"{where} is {type(value).__name__}, not an object"
    return value, None


def tool_call_from_json(item: Any) -> ToolCall:
    """Read a tool call in the common shapes: ``{name, arguments}`` or OpenAI's ``{id, function: {...}}``."""
    if isinstance(item, str):
        return ToolCall(name=item)
    if not isinstance(item, Mapping):
        raise ValueError(f"expected an object or a name, got {type(item).__name__}")
    function = item.get("function")
    source = function if isinstance(function, Mapping) else item
    arguments: Any = next((source[k] for k in ("arguments", "args", "input", "parameters") if k in source), {})
    if isinstance(arguments, str):
        arguments = read_json(arguments) if arguments.strip() else {}
    name = source.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"tool call {dict(item)!r} has no name")
    result = item.get("result", item.get("output"))
    call_id = item.get("id")
    return ToolCall(name=name, arguments=arguments, result=result, id=str(call_id) if call_id is not None else None)


@dataclass(frozen=True)
class Endpoint:
    """A URL template with its method and JSON body template."""

    url: str
    method: str = "POST"
    body: Any = None

    def request(self, message: str, session_id: str) -> dict[str, Any]:
        url = fill(self.url, message, session_id)
        body = fill(self.body, message, session_id) if self.body is not None else None
        if body is None:
            return {"method": self.method, "url": url}
        if self.method == "GET":
            return {"method": self.method, "url": url, "params": body}
        return {"method": self.method, "url": url, "json": body}


class HttpTarget:
    """An agent behind an HTTP endpoint that takes and returns JSON.

    Revival calls the optional ``close`` endpoint (e.g. ``DELETE
    /sessions/{session_id}``) so the service drops its in-memory state for the
    session; without one the service is not told and revival proves less.
    """

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        name: str | None = None,
        headers: Mapping[str, str] | None = None,
        reply_path: Sequence[str | int] = ("reply",),
        tool_calls_path: Sequence[str | int] | None = None,
        sources_path: Sequence[str | int] | None = None,
        usage_path: Sequence[str | int] | None = None,
        timeout: float = 120.0,
        close: Endpoint | None = None,
    ) -> None:
        self.name = name or f"http:{endpoint.url}"
        self.endpoint = endpoint
        self.headers = dict(headers or {})
        self.reply_path = tuple(reply_path)
        self.tool_calls_path = tuple(tool_calls_path) if tool_calls_path else None
        self.sources_path = tuple(sources_path) if sources_path else None
        self.usage_path = tuple(usage_path) if usage_path else None
        self.timeout = timeout
        self.close = close
        self._client: httpx.AsyncClient | None = None

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            import httpx  # imported with the first request: a suite with another agent never needs it

            self._client = httpx.AsyncClient(headers=self.headers, timeout=self.timeout)
        return self._client

    async def _send(self, endpoint: Endpoint, message: str, session_id: str) -> httpx.Response:
        import httpx

        request = endpoint.request(message, session_id)
        where = f"{request['method']} {request['url']}"
        try:
            response = await self._http().request(**request)
        except httpx.TimeoutException as exc:
            raise AgentTimeout(f"agent {self.name}: {where} timed out after {self.timeout:g}s") from exc
        except httpx.HTTPError as exc:
            raise AgentError(f"agent {self.name}: {where} failed: {error_reason(exc)}") from exc
        if response.is_error:
            raise AgentError(
                f"agent {self.name}: {where} answered HTTP {response.status_code}: {_excerpt(response.text)}"
            )
        return response

    async def respond(self, message: str, session_id: str) -> AgentReply:
        response = await self._send(self.endpoint, message, session_id)
        try:
            document = response.json()
        except ValueError as exc:
            raise AgentError(f"agent {self.name}: response is not JSON: {_excerpt(response.text)}") from exc
        text = self._pick(document, self.reply_path, "reply")
        if not isinstance(text, str):
            raise AgentError(
                f"agent {self.name}: reply at '{_dotted(self.reply_path)}' is {type(text).__name__} "
                f"{_excerpt(json.dumps(text, default=str))}, not a string"
            )
        calls: tuple[ToolCall, ...] = ()
        if self.tool_calls_path is not None:
            raw_calls = self._pick(document, self.tool_calls_path, "tool_calls", optional=True) or []
            if not isinstance(raw_calls, list):
                raise AgentError(f"agent {self.name}: tool_calls at '{_dotted(self.tool_calls_path)}' is not a list")
            try:
                calls = tuple(tool_call_from_json(item) for item in raw_calls)
            except (ValueError, TypeError) as exc:
                raise AgentError(f"agent {self.name}: malformed tool call in the response: {exc}") from exc
        sources: list[str] = []
        if self.sources_path is not None:
            raw_sources = self._pick(document, self.sources_path, "sources", optional=True) or []
            if not isinstance(raw_sources, list):
                raise AgentError(f"agent {self.name}: sources at '{_dotted(self.sources_path)}' is not a list")
            sources = [s if isinstance(s, str) else json.dumps(s, sort_keys=True) for s in raw_sources]
        usage: Mapping[str, Any] = {}
        if self.usage_path is not None:
            raw_usage = self._pick(document, self.usage_path, "usage", optional=True) or {}
            usage = raw_usage if isinstance(raw_usage, Mapping) else {}
        return AgentReply(text=text, tool_calls=calls, sources=tuple(sources), usage=usage, raw=document)

    def _pick(self, document: Any, path: Sequence[str | int], what: str, *, optional: bool = False) -> Any:
        value, problem = follow(document, path)
        if value is MISSING:
            if optional:
                return None
            raise AgentError(
                f"agent {self.name}: the response has no {what} at '{_dotted(path)}' ({problem}): "
                f"{_excerpt(json.dumps(document, default=str))}"
            )
        return value

    async def close_session(self, session_id: str) -> None:
        if self.close is not None:
            await self._send(self.close, "", session_id)

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.aclose()

    def __repr__(self) -> str:
        return f"HttpTarget({self.name!r})"


def _dotted(path: Sequence[str | int]) -> str:
    return ".".join(map(str, path))


def _excerpt(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _endpoint(options: Mapping[str, Any], *, field: str, default_method: str, default_body: Any) -> Endpoint:
    url = options.get("url")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise TargetConfigError(f"{field}.url: expected an http(s) URL (may contain {{session_id}}), got {url!r}")
    method = str(options.get("method", default_method)).upper()
    if method not in _METHODS:
        raise TargetConfigError(f"{field}.method: expected one of {', '.join(_METHODS)}, got {options.get('method')!r}")
    body = options.get("body", default_body)
    if body is not None and not isinstance(body, Mapping | list | str):
        raise TargetConfigError(f"{field}.body: expected a JSON template (mapping, list or string), got {body!r}")
    if method == "GET" and body is not None and not isinstance(body, Mapping):
        raise TargetConfigError(f"{field}.body: a GET request sends the template as query parameters; use a mapping")
    return Endpoint(url=url, method=method, body=body)


def http_target(options: Mapping[str, Any], *, name: str | None = None) -> HttpTarget:
    """Build the target from ``agent.http``; errors name the field."""
    unknown = sorted(str(k) for k in options if k not in _KEYS)
    if unknown:
        raise TargetConfigError(f"agent.http: unknown key(s) {', '.join(unknown)}; valid: {', '.join(sorted(_KEYS))}")
    endpoint = _endpoint(options, field="agent.http", default_method="POST", default_body=DEFAULT_BODY)
    headers = options.get("headers") or {}
    if not isinstance(headers, Mapping) or not all(isinstance(v, str) for v in headers.values()):
        raise TargetConfigError("agent.http.headers: expected a mapping of header name to string")
    expanded = {str(k): expand_env(v, field=f"agent.http.headers.{k}") for k, v in headers.items()}
    timeout = options.get("timeout", 120.0)
    if not isinstance(timeout, int | float) or isinstance(timeout, bool) or timeout <= 0:
        raise TargetConfigError(f"agent.http.timeout: expected positive seconds, got {timeout!r}")
    close_options = options.get("close")
    close = None
    if close_options is not None:
        if isinstance(close_options, str):
            close_options = {"url": close_options}
        if not isinstance(close_options, Mapping):
            raise TargetConfigError("agent.http.close: expected a URL or {url, method, body}")
        close = _endpoint(close_options, field="agent.http.close", default_method="DELETE", default_body=None)
    paths = {
        key: parse_path(options[key], field=f"agent.http.{key}") if options.get(key) is not None else None
        for key in ("tool_calls", "sources", "usage")
    }
    return HttpTarget(
        endpoint,
        name=name,
        headers=expanded,
        reply_path=parse_path(options.get("reply", "reply"), field="agent.http.reply"),
        tool_calls_path=paths["tool_calls"],
        sources_path=paths["sources"],
        usage_path=paths["usage"],
        timeout=float(timeout),
        close=close,
    )


def _build(settings: Any, *, name: str | None, base_dir: Any, spec: Mapping[str, Any]) -> HttpTarget:
    return http_target(settings, name=name)


ADAPTER = AgentAdapter(
    build=_build,
    settings_schema={
        "type": "object",
        "properties": {key: {} for key in sorted(_KEYS)} | {"url": {"type": "string", "pattern": "^https?://"}},
        "required": ["url"],
        "additionalProperties": False,
    },
)
"""``agent: {http: {url, method, body, reply, ...}}``."""
