"""Ollama's native chat API (/api/chat) over httpx: the body built from a request, the reply read back.

A JSON schema goes through ``format``, a request's tools through ``tools``.
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import urlsplit

import httpx

from jurybox.core import ToolCall, read_json
from jurybox.models._base import ProviderModel, status_error
from jurybox.models._errors import EmptyResponseError, ProviderError
from jurybox.models._probe import ProbeTarget
from jurybox.models._tool_calls import tool_call
from jurybox.models._types import GenerateRequest, ModelResponse, Usage, plain

DEFAULT_HOST = "http://127.0.0.1:11434"


def ollama_host(value: str | None = None) -> str:
    """Normalise an Ollama host the way the ollama CLI reads OLLAMA_HOST (scheme and port optional)."""
    host = (value or os.environ.get("OLLAMA_HOST") or DEFAULT_HOST).strip().rstrip("/")
    if "://" not in host:
        host = f"http://{host}"
    parts = urlsplit(host)
    hostname = parts.hostname or "127.0.0.1"
    if hostname == "0.0.0.0":  # a bind-all address is where the server listens, not where to connect
        hostname = "127.0.0.1"
    port = parts.port or (443 if parts.scheme == "https" else 11434)
    if ":" in hostname:
        hostname = f"[{hostname}]"
    return f"{parts.scheme}://{hostname}:{port}{parts.path}"


class OllamaModel(ProviderModel):
    """``ollama:<model>``: Ollama's ``/api/chat``.

    Args:
        model: The model name (``llama3.1``, ``qwen3:4b``...).
        host: Default ``$OLLAMA_HOST`` or ``http://127.0.0.1:11434`` (``base_url`` is an alias).
        **options: See ``ProviderModel``; ``params`` go into Ollama's ``options`` (e.g. ``num_ctx``).

    Temperature, ``max_tokens`` (as ``num_predict``) and seed go into ``options``; a JSON
    schema goes into ``format``. Ollama needs no API key.
    """

    provider = "ollama"
    default_base_url = DEFAULT_HOST

    def __init__(self, model: str, *, host: str | None = None, base_url: str | None = None, **options: Any) -> None:
        super().__init__(model, base_url=ollama_host(host or base_url), **options)

    def probe_target(self) -> ProbeTarget:
        return ProbeTarget(self.printable_url, f"{self.effective_base_url}/api/tags")

    def _make_client(self, connections: int) -> httpx.AsyncClient:
        limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
        return httpx.AsyncClient(base_url=self.effective_base_url, timeout=self.timeout, limits=limits)

    async def _close_client(self, client: Any) -> None:
        await client.aclose()

    def request_body(self, request: GenerateRequest) -> dict[str, Any]:
        """The /api/chat body for ``request``."""
        options: dict[str, Any] = {"temperature": request.temperature}
        if request.max_tokens is not None:
            options["num_predict"] = request.max_tokens
        if request.seed is not None:
            options["seed"] = request.seed
        options.update(self.params)
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [m.to_dict() for m in request.messages],
            "stream": self.stream,
            "options": options,
        }
        if request.json_schema is not None and self.structured_output:
            body["format"] = plain(request.json_schema)
        if request.tools:
            body["tools"] = [{"type": "function", "function": tool.to_dict()} for tool in request.tools]
        return body

    async def _send(self, client: httpx.AsyncClient, request: GenerateRequest) -> ModelResponse:
        body = self.request_body(request)
        if not self.stream:
            response = await client.post("/api/chat", json=body)
            if response.status_code >= 400:
                raise self._status_error(response)
            if not response.text.strip():
                raise EmptyResponseError("empty response body", provider="ollama")
            return _from_lines([_json(response.text)])
        async with client.stream("POST", "/api/chat", json=body) as response:
            if response.status_code >= 400:
                await response.aread()
                raise self._status_error(response)
            lines = [_json(line) async for line in response.aiter_lines() if line.strip()]
        if not lines:
            raise EmptyResponseError("empty response body", provider="ollama")
        return _from_lines(lines)

    def _status_error(self, response: httpx.Response) -> ProviderError:
        try:
            body: Any = response.json()
        except ValueError:
            body = response.text
        return status_error(self.provider, response.status_code, dict(response.headers.items()), body)

    def _translate(self, error: Exception) -> ProviderError | None:
        if isinstance(error, httpx.TimeoutException):
            return self._timeout_error()
        if isinstance(error, httpx.TransportError):
            return self._connection_error(error)
        return None


def _json(line: str) -> dict[str, Any]:
    try:
        value = read_json(line)
    except ValueError as error:
        raise ProviderError("the reply is not JSON", provider="ollama", provider_message=line[:500]) from error
    if not isinstance(value, dict):
        raise ProviderError("the reply is not a JSON object", provider="ollama", provider_message=line[:500])
    return value


def _from_lines(lines: list[dict[str, Any]]) -> ModelResponse:
    """One reply from a non-streamed object or the NDJSON objects of a stream."""
    parts: list[str] = []
    calls: list[ToolCall] = []
    final: dict[str, Any] = {}
    for line in lines:
        if "error" in line:
            # Ollama reports failures that happen mid-stream as an {"error": ...} line.
            raise ProviderError("the server reported an error", provider="ollama", provider_message=str(line["error"]))
        message = line.get("message") or {}
        parts.append(message.get("content") or "")
        if message.get("tool_calls"):
            calls += _tool_calls(message["tool_calls"])
        if line.get("done"):
            final = line
    if not final:
        raise ProviderError("the reply ended before a done message", provider="ollama")
    return ModelResponse(
        text="".join(parts),
        usage=Usage(final.get("prompt_eval_count"), final.get("eval_count")),
        finish_reason=final.get("done_reason"),
        raw=lines[0] if len(lines) == 1 else {"stream": lines},
        tool_calls=tuple(calls),
    )


def _tool_calls(calls: Any) -> list[ToolCall]:
    """A message's ``tool_calls``: ``[{"function": {"name": ..., "arguments": {...}}}]``."""
    if not isinstance(calls, list):
        raise ProviderError("unusable response: the message's tool_calls are not a list", provider="ollama")
    read = []
    for call in calls:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            raise ProviderError("unusable response: a tool call has no function", provider="ollama")
        read.append(tool_call(function.get("name"), function.get("arguments"), call.get("id"), provider="ollama"))
    return read
