"""OpenAI and OpenAI-compatible servers (vLLM, LM Studio, llama.cpp, Together...) via the official SDK."""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import re
import ssl
import weakref
from collections.abc import Callable, Mapping
from typing import Any, Literal

import httpx2
import openai

from jurybox.models._base import ProviderModel, status_error
from jurybox.models._cache import plain
from jurybox.models._errors import ModelConfigError, ModelConnectionError, ModelTimeoutError, ProviderError
from jurybox.models._types import GenerateRequest, ModelResponse, Usage

LOCAL_API_KEY = "jurybox-local"  # OpenAI-compatible local servers accept any key, the SDK insists on one
_SCHEMA_NAME = re.compile(r"[^a-zA-Z0-9_-]")
_STRUCTURED_UNSUPPORTED = ("response_format", "json_schema")
_COMPLETIONS_PATH = "/chat/completions"

HttpTransport = Literal["auto", "aiohttp", "httpx"]


class OpenAIModel(ProviderModel):
    """``openai:<model>``: Chat Completions through ``openai.AsyncOpenAI``.

    Args:
        model: The model name (``gpt-4o-mini``, or whatever a compatible server serves).
        api_key: Default ``$OPENAI_API_KEY``. With a ``base_url`` and no key, a dummy key is sent.
        base_url: Default ``$OPENAI_BASE_URL`` or ``https://api.openai.com/v1``.
        organization: Optional OpenAI organization id.
        max_tokens_param: ``max_completion_tokens`` (default for api.openai.com, required by
            reasoning models) or ``max_tokens`` (default for other servers, widely supported).
        http_transport: ``"auto"`` (default: the SDK's aiohttp transport when ``aiohttp`` is
            installed, e.g. with ``pip install "openai[aiohttp]"``, else httpx), ``"aiohttp"``
            or ``"httpx"``. Both are the openai SDK's own clients; aiohttp costs about half the
            CPU per call (benchmarks/judge_layer.py), which matters at high concurrency.
        **options: See ``ProviderModel``.

    Structured output uses ``response_format={"type": "json_schema", ...}``; a server that
    rejects it (HTTP 400 naming response_format) is asked again without it, and the model
    remembers not to send it again, so the reply is parsed as text.
    """

    provider = "openai"
    default_base_url = "https://api.openai.com/v1"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        organization: str | None = None,
        max_tokens_param: str | None = None,
        http_transport: HttpTransport = "auto",
        **options: Any,
    ) -> None:
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        super().__init__(model, base_url=base_url, **options)
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            if self.base_url is None:
                raise ModelConfigError(
                    "openai: no API key. Set OPENAI_API_KEY (or pass api_key=...); for a local "
                    "OpenAI-compatible server pass base_url=... (any key is accepted)"
                )
            key = LOCAL_API_KEY
        if max_tokens_param not in (None, "max_tokens", "max_completion_tokens"):
            raise ModelConfigError("openai: max_tokens_param must be 'max_tokens' or 'max_completion_tokens'")
        if http_transport not in ("auto", "aiohttp", "httpx"):
            raise ModelConfigError(
                f"openai: http_transport must be 'auto', 'aiohttp' or 'httpx', got {http_transport!r}"
            )
        if http_transport == "aiohttp" and not aiohttp_installed():
            raise ModelConfigError('openai: http_transport="aiohttp" needs aiohttp: pip install "openai[aiohttp]"')
        self._api_key = key
        self.organization = organization
        self.http_transport: HttpTransport = (
            ("aiohttp" if aiohttp_installed() else "httpx") if http_transport == "auto" else http_transport
        )
        self.max_tokens_param = max_tokens_param or ("max_tokens" if self.base_url else "max_completion_tokens")
        # The values the client already has, given explicitly: the SDK deep-copies the defaults of
        # the request options it is not given on every call.
        self._request_options: openai.RequestOptions = {
            "headers": {},
            "params": {},
            "max_retries": 0,
            "timeout": self.timeout,
        }
        self._completions_urls: weakref.WeakKeyDictionary[openai.AsyncOpenAI, str] = weakref.WeakKeyDictionary()

    def _make_client(self, connections: int) -> openai.AsyncOpenAI:
        limits = httpx2.Limits(max_connections=connections, max_keepalive_connections=connections)
        http_client = _HTTP_CLIENTS[self.http_transport](limits=limits, timeout=self.timeout, verify=_ssl_context())
        return openai.AsyncOpenAI(
            api_key=self._api_key,
            organization=self.organization,
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=0,  # our retries are the only ones, so attempts and waits are bounded and visible
            http_client=http_client,
        )

    def _completions_url(self, client: openai.AsyncOpenAI) -> str:
        """The absolute Chat Completions URL of ``client``, merged from its base URL as the SDK would."""
        url = self._completions_urls.get(client)
        if url is None:
            # Given a relative path, the SDK parses and re-parses its base URL on every call.
            base = client.base_url
            url = str(base.copy_with(raw_path=base.raw_path + _COMPLETIONS_PATH.lstrip("/").encode()))
            self._completions_urls[client] = url
        return url

    def request_body(self, request: GenerateRequest) -> dict[str, Any]:
        """The Chat Completions arguments for ``request``."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [m.to_dict() for m in request.messages],
            "temperature": request.temperature,
        }
        if request.max_tokens is not None:
            body[self.max_tokens_param] = request.max_tokens
        if request.seed is not None:
            body["seed"] = request.seed
        if request.json_schema is not None and self.structured_output:
            body["response_format"] = {"type": "json_schema", "json_schema": _schema_format(request.json_schema)}
        if self.stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        if self.params:
            body["extra_body"] = dict(self.params)
        return body

    async def _send(self, client: openai.AsyncOpenAI, request: GenerateRequest) -> ModelResponse:
        try:
            return await self._send_once(client, request)
        except openai.BadRequestError as error:
            message = str(error).lower()
            if "response_format" not in self.request_body(request) or not any(
                word in message for word in _STRUCTURED_UNSUPPORTED
            ):
                raise
            # This server does not do structured output: fall back to text for this and later calls.
            self.structured_output = False
            return await self._send_once(client, request)

    async def _send_once(self, client: openai.AsyncOpenAI, request: GenerateRequest) -> ModelResponse:
        body = self.request_body(request)
        if not self.stream:
            # The SDK's generic ``post`` (its documented way to send any request) instead of
            # ``chat.completions.create``: the same client, auth, headers, timeouts and error
            # classes, without re-walking our plain-JSON body against the SDK's typed params
            # and without building a pydantic ChatCompletion we would only dump back to a dict.
            # Together that was ~1/3 of the client's CPU per call (benchmarks/judge_layer.py).
            extra = body.pop("extra_body", None)
            if extra:
                body.update(extra)
            reply = await client.post(
                self._completions_url(client), body=body, cast_to=httpx2.Response, options=self._request_options
            )
            return _from_completion(_json_body(reply))
        chunks: list[dict[str, Any]] = []
        stream = await client.chat.completions.create(**body)
        async for chunk in stream:
            chunks.append(chunk.model_dump(mode="json", exclude_unset=True))
        return _from_chunks(chunks)

    def _translate(self, error: Exception) -> ProviderError | None:
        if isinstance(error, openai.APITimeoutError) and not _dropped_connection(error):
            return ModelTimeoutError(f"no reply within {self.timeout} s", provider=self.provider)
        if isinstance(error, openai.APIConnectionError):
            cause = error.__cause__ or error
            return ModelConnectionError(
                f"connection to {self.effective_base_url} failed: {cause!r}", provider=self.provider
            )
        if isinstance(error, openai.APIStatusError):
            headers = dict(error.response.headers.items())
            return status_error(self.provider, error.status_code, headers, error.body)
        if isinstance(error, openai.OpenAIError):
            return ProviderError(f"unusable response: {error}", provider=self.provider)
        return None


@functools.cache
def aiohttp_installed() -> bool:
    """Whether the openai SDK's aiohttp transport can be used (``aiohttp`` is importable)."""
    return importlib.util.find_spec("aiohttp") is not None


def _ssl_context() -> ssl.SSLContext:
    """The TLS context every client shares, as httpx2 would build it for ``verify=True``.

    Loading the CA bundle costs tens of ms of CPU, and each event loop (``evaluate()`` makes one
    per call) gets new clients. Keyed by the variables that choose the CA bundle, so a changed
    ``SSL_CERT_FILE`` or ``SSL_CERT_DIR`` still takes effect.
    """
    return _ssl_context_for(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@functools.cache
def _ssl_context_for(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    del cert_file, cert_dir  # only the cache key: create_ssl_context reads them from the environment
    return httpx2.create_ssl_context()


_HTTP_CLIENTS: dict[str, Callable[..., httpx2.AsyncClient]] = {
    "aiohttp": openai.DefaultAioHttpClient,
    "httpx": openai.DefaultAsyncHttpxClient,
}


def _dropped_connection(error: BaseException) -> bool:
    """True when a "timeout" is really the server closing the connection.

    The SDK's aiohttp transport reports every ``aiohttp.ClientConnectionError`` (e.g.
    ``ServerDisconnectedError``) as a connect timeout; say what really happened.
    """
    cause = error.__cause__
    while cause is not None:
        module = type(cause).__module__
        if module.startswith("aiohttp"):
            return not isinstance(cause, TimeoutError) and "Timeout" not in type(cause).__name__
        cause = cause.__cause__
    return False


def _schema_format(schema: Mapping[str, Any]) -> dict[str, Any]:
    title = schema.get("title")
    name = _SCHEMA_NAME.sub("_", str(title))[:64] if title else "response"
    return {"name": name or "response", "schema": plain(schema), "strict": False}


def _json_body(reply: httpx2.Response) -> dict[str, Any]:
    try:
        data = json.loads(reply.content)
    except ValueError as error:
        raise ProviderError(
            f"unusable response: the body is not JSON ({error})",
            provider="openai",
            provider_message=reply.text[:500],
        ) from error
    if not isinstance(data, dict):
        raise ProviderError("unusable response: the body is not a JSON object", provider="openai")
    return data


def _from_completion(data: dict[str, Any]) -> ModelResponse:
    choices = data.get("choices")
    if not choices or not isinstance(choices, list) or not isinstance(choices[0], dict):
        raise ProviderError("the reply has no choices", provider="openai", provider_message=str(data)[:500])
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise ProviderError("the reply's choice has no message", provider="openai", provider_message=str(data)[:500])
    text = _content_text(message.get("content"))
    finish = choice.get("finish_reason")
    refusal = message.get("refusal")
    if refusal:
        # A refusal is the model's answer; keep it visible as text so the judge can ABSTAIN on it.
        text, finish = str(refusal), "refusal"
    return ModelResponse(text=text, usage=_usage(data.get("usage")), finish_reason=finish, raw=data)


def _content_text(content: Any) -> str:
    """The message text: a string, or (some compatible servers) a list of ``{"type": "text", "text": ...}``."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part["text"] for part in content if isinstance(part, dict) and isinstance(part.get("text"), str))
    raise ProviderError(f"unusable response: message content is a {type(content).__name__}", provider="openai")


def _from_chunks(chunks: list[dict[str, Any]]) -> ModelResponse:
    parts: list[str] = []
    refusal: list[str] = []
    finish: str | None = None
    usage: Any = None
    for chunk in chunks:
        if chunk.get("usage"):
            usage = chunk["usage"]
        for choice in chunk.get("choices") or []:
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            parts.append(delta.get("content") or "")
            refusal.append(delta.get("refusal") or "")
            finish = choice.get("finish_reason") or finish
    text = "".join(parts)
    if "".join(refusal):
        text, finish = "".join(refusal), "refusal"
    return ModelResponse(text=text, usage=_usage(usage), finish_reason=finish, raw={"stream": chunks})


def _usage(data: Any) -> Usage:
    if not isinstance(data, Mapping):
        return Usage()
    return Usage(data.get("prompt_tokens"), data.get("completion_tokens"))
