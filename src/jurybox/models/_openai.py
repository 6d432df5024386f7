"""OpenAI and OpenAI-compatible servers (vLLM, LM Studio, llama.cpp, Together...) via the official SDK."""

from __future__ import annotations

import datetime
import functools
import importlib.util
import json
import os
import re
import ssl
import urllib.parse
import urllib.request
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

import httpx2
import openai

from jurybox.models._base import ProviderModel, status_error
from jurybox.models._cache import plain
from jurybox.models._errors import ModelConfigError, ModelConnectionError, ModelTimeoutError, ProviderError
from jurybox.models._types import GenerateRequest, ModelResponse, Usage

if TYPE_CHECKING:
    import aiohttp

LOCAL_API_KEY = "jurybox-local"  # OpenAI-compatible local servers accept any key, the SDK insists on one
_SCHEMA_NAME = re.compile(r"[^a-zA-Z0-9_-]")
_STRUCTURED_UNSUPPORTED = ("response_format", "json_schema")
_COMPLETIONS_PATH = "/chat/completions"

HttpTransport = Literal["auto", "direct", "aiohttp", "httpx"]
HTTP_TRANSPORTS: tuple[HttpTransport, ...] = ("auto", "direct", "aiohttp", "httpx")


class OpenAIModel(ProviderModel):
    """``openai:<model>``: Chat Completions through ``openai.AsyncOpenAI``.

    Args:
        model: The model name (``gpt-4o-mini``, or whatever a compatible server serves).
        api_key: Default ``$OPENAI_API_KEY``. With a ``base_url`` and no key, a dummy key is sent.
        base_url: Default ``$OPENAI_BASE_URL`` or ``https://api.openai.com/v1``.
        organization: Optional OpenAI organization id.
        max_tokens_param: ``max_completion_tokens`` (default for api.openai.com, required by
            reasoning models) or ``max_tokens`` (default for other servers, widely supported).
        http_transport: ``"auto"`` (default: ``"direct"`` when ``aiohttp`` is installed, else
            ``"httpx"``), ``"direct"``, ``"aiohttp"`` or ``"httpx"``. ``"direct"`` posts non-streaming
            calls with a plain ``aiohttp.ClientSession`` the model owns: the openai SDK's per-request
            pipeline (building its request, merging headers, httpx2 Request/URL/Headers objects
            layered over aiohttp) costs about 0.5 ms CPU per call, more than the HTTP itself. It
            sends the same URL, JSON bytes and headers (taken once per client from the SDK client's
            ``auth_headers`` and ``default_headers``), with the same connection limit, TLS context,
            timeouts and error mapping; streaming calls still go through the SDK (aiohttp transport).
            ``"aiohttp"`` and ``"httpx"`` send every call through the openai SDK with that transport
            (``"aiohttp"`` was the default before ``"direct"``; ``"httpx"`` is the SDK's default).
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
        if http_transport not in HTTP_TRANSPORTS:
            valid = ", ".join(repr(name) for name in HTTP_TRANSPORTS)
            raise ModelConfigError(f"openai: http_transport must be one of {valid}, got {http_transport!r}")
        if http_transport in ("direct", "aiohttp") and not aiohttp_installed():
            raise ModelConfigError(
                f'openai: http_transport="{http_transport}" needs aiohttp: pip install "openai[aiohttp]"'
            )
        self._api_key = key
        self.organization = organization
        self.http_transport: HttpTransport = (
            ("direct" if aiohttp_installed() else "httpx") if http_transport == "auto" else http_transport
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
        # The direct path's aiohttp session (and what it sends) for each SDK client, made by _make_client.
        self._direct: weakref.WeakKeyDictionary[openai.AsyncOpenAI, _DirectClient] = weakref.WeakKeyDictionary()

    def _make_client(self, connections: int) -> openai.AsyncOpenAI:
        limits = httpx2.Limits(max_connections=connections, max_keepalive_connections=connections)
        http_client: httpx2.AsyncClient
        if self.http_transport == "direct" and not self.stream:
            # The direct path sends every call; the SDK client only supplies URL and headers, so it
            # gets no connection pool (whose setup imports httpcore2 and loads CAs: ~0.1 s of CPU).
            http_client = httpx2.AsyncClient(transport=_SendsNothing())
        else:
            tls = _ssl_context() if self._uses_tls() else _PLAIN_HTTP_TLS
            http_client = _HTTP_CLIENTS[self.http_transport](limits=limits, timeout=self.timeout, verify=tls)
        client = openai.AsyncOpenAI(
            api_key=self._api_key,
            organization=self.organization,
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=0,  # our retries are the only ones, so attempts and waits are bounded and visible
            http_client=http_client,
        )
        if self.http_transport == "direct":
            url = self._completions_url(client)
            self._direct[client] = _DirectClient(
                url, self._direct_headers(client), connections, limits.keepalive_expiry, _env_proxy(url)
            )
        return client

    def _direct_headers(self, client: openai.AsyncOpenAI) -> dict[str, str]:
        """The headers the SDK sends with our ``post``, taken once from the SDK client itself.

        Auth (``Authorization``), ``OpenAI-Organization``/``-Project``, ``User-Agent``, ``Accept``,
        ``Content-Type`` and the ``X-Stainless-*`` headers come from the client's ``auth_headers``
        and ``default_headers``, merged as the SDK merges them (case-insensitive, later wins, an
        ``Omit`` removes). The SDK adds two per request: ``X-Stainless-Retry-Count`` (always 0
        here: the SDK never retries, our retries are new calls) and ``X-Stainless-Read-Timeout``.
        """
        merged: dict[str, tuple[str, str]] = {}
        for mapping in (client.auth_headers, client.default_headers):
            for name, value in mapping.items():
                if isinstance(value, str):
                    merged[name.lower()] = (name, value)
                else:  # openai.Omit: the header is left out
                    merged.pop(name.lower(), None)
        headers = dict(merged.values())
        if not any(name.lower() == "authorization" for name in headers):
            raise ModelConfigError("openai: the SDK client has no Authorization header to send")
        headers.setdefault("Content-Type", "application/json")
        headers["x-stainless-retry-count"] = "0"
        read_timeout = httpx2.Timeout(self.timeout).read
        if read_timeout is not None:
            headers["x-stainless-read-timeout"] = str(read_timeout)
        return headers

    async def _close_client(self, client: Any) -> None:
        direct = self._direct.pop(client, None)
        try:
            await client.close()
        finally:
            if direct is not None and direct.session is not None:
                await direct.session.close()

    def _uses_tls(self) -> bool:
        """Whether calls go over https (or a proxy might need TLS): only then is the CA bundle loaded."""
        return not self.effective_base_url.lower().startswith("http://") or _proxy_configured()

    def _timeout_error(self) -> ModelTimeoutError:
        return ModelTimeoutError(f"no reply within {self.timeout} s", provider=self.provider)

    def _connection_error(self, cause: BaseException) -> ModelConnectionError:
        message = f"connection to {self.effective_base_url} failed: {cause!r}"
        return ModelConnectionError(message, provider=self.provider)

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
        except (openai.BadRequestError, DirectStatusError) as error:
            message = str(error).lower()
            if (
                error.status_code != 400
                or "response_format" not in self.request_body(request)
                or not any(word in message for word in _STRUCTURED_UNSUPPORTED)
            ):
                raise
            # This server does not do structured output: fall back to text for this and later calls.
            self.structured_output = False
            return await self._send_once(client, request)

    async def _send_once(self, client: openai.AsyncOpenAI, request: GenerateRequest) -> ModelResponse:
        body = self.request_body(request)
        if not self.stream:
            extra = body.pop("extra_body", None)
            if extra:
                body.update(extra)
            direct = self._direct.get(client)
            if direct is not None:
                return _from_completion(await self._post_direct(direct, body))
            # The SDK's generic ``post`` (its documented way to send any request) instead of
            # ``chat.completions.create``: the same client, auth, headers, timeouts and error
            # classes, without re-walking our plain-JSON body against the SDK's typed params
            # and without building a pydantic ChatCompletion we would only dump back to a dict.
            # Together that was ~1/3 of the client's CPU per call (benchmarks/judge_layer.py).
            reply = await client.post(
                self._completions_url(client),
                body=body,
                cast_to=httpx2.Response,
                options=self._request_options,
            )
            return _from_completion(_json_body(reply.content, lambda: reply.text))
        chunks: list[dict[str, Any]] = []
        stream = await client.chat.completions.create(**body)
        async for chunk in stream:
            chunks.append(chunk.model_dump(mode="json", exclude_unset=True))
        return _from_chunks(chunks)

    async def _post_direct(self, direct: _DirectClient, body: dict[str, Any]) -> dict[str, Any]:
        """One Chat Completions POST with the model's own aiohttp session; the reply's JSON object.

        Raises ModelTimeoutError or ModelConnectionError (as ``_translate`` maps the SDK's errors)
        and DirectStatusError for HTTP >= 400 (``_translate`` maps it like the SDK's status errors).
        """
        import aiohttp

        session = direct.session
        if session is None or session.closed:
            session = direct.session = self._direct_session(direct)
        # The bytes the SDK sends (openai._utils._json.openapi_dumps, without its datetime/pydantic extras).
        data = json.dumps(
            body, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=_json_default
        ).encode()
        try:
            async with session.post(direct.url, data=data, headers=direct.headers, proxy=direct.proxy) as reply:
                content = await reply.read()
                status = reply.status
                if status >= 400:
                    raise DirectStatusError.from_reply(status, reply.headers.items(), content)
        except TimeoutError as error:  # aiohttp's connect and read timeouts are TimeoutErrors
            raise self._timeout_error() from error
        except aiohttp.ClientError as error:  # refused, reset, disconnected, dropped mid-body, bad URL
            raise self._connection_error(error) from error
        return _json_body(content, lambda: content.decode("utf-8", "replace"))

    def _direct_session(self, direct: _DirectClient) -> aiohttp.ClientSession:
        import aiohttp

        # As the SDK's aiohttp transport sets it up: pool limit, keep-alive expiry, TLS context and
        # the httpx2 timeout (connect, read and pool wait, no total) mapped onto aiohttp's.
        connector = aiohttp.TCPConnector(
            limit=direct.connections,
            keepalive_timeout=direct.keepalive_expiry,
            ssl=_ssl_context() if self._uses_tls() else _PLAIN_HTTP_TLS,
        )
        timeout = aiohttp.ClientTimeout(
            total=None, connect=self.timeout, sock_connect=self.timeout, sock_read=self.timeout
        )
        # trust_env stays off: aiohttp would look up proxies and .netrc in a thread on every request.
        # The proxy from the environment is resolved once instead (_env_proxy), as httpx2 does.
        return aiohttp.ClientSession(connector=connector, timeout=timeout, trust_env=False)

    def _translate(self, error: Exception) -> ProviderError | None:
        if isinstance(error, DirectStatusError):
            return status_error(self.provider, error.status_code, error.headers, error.body)
        if isinstance(error, openai.APITimeoutError) and not _dropped_connection(error):
            return self._timeout_error()
        if isinstance(error, openai.APIConnectionError):
            return self._connection_error(error.__cause__ or error)
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


# Handed to the HTTP clients of plain-http base URLs, which never use it: building the real one
# loads the CA bundle and imports httpcore2, ~0.1 s of CPU a local server's run does not need.
_PLAIN_HTTP_TLS = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


def _proxy_configured() -> bool:
    return any(
        os.environ.get(name)
        for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")
    )


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
    "direct": openai.DefaultAioHttpClient,  # the SDK client of the direct path, for streaming calls
    "aiohttp": openai.DefaultAioHttpClient,
    "httpx": openai.DefaultAsyncHttpxClient,
}


class _SendsNothing(httpx2.AsyncBaseTransport):
    """The transport of an SDK client the direct path only reads URL and headers from."""

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        raise RuntimeError(
            "openai: this model sends its calls on the direct path; its SDK client has no transport "
            "(turn streaming on when the model is built, not afterwards)"
        )


@dataclass(eq=False)
class _DirectClient:
    """What the direct path sends for one SDK client, and its aiohttp session (made on first use)."""

    url: str
    headers: dict[str, str]
    connections: int
    keepalive_expiry: float | None
    proxy: str | None
    session: aiohttp.ClientSession | None = None


class DirectStatusError(Exception):
    """An HTTP error reply on the direct path, with the status, headers and body the SDK would give.

    Like ``openai.APIStatusError``: the message is ``Error code: <status>`` plus `` - <message>``
    from the JSON error, and ``body`` is the parsed JSON's ``"error"`` value (or the whole parsed
    body, or the stripped text when it is not JSON).
    """

    def __init__(self, message: str, *, status_code: int, headers: dict[str, str], body: object) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.headers = headers
        self.body = body

    @classmethod
    def from_reply(cls, status: int, headers: Any, content: bytes) -> DirectStatusError:
        # As openai's _make_status_error_from_response and AsyncOpenAI._make_status_error.
        message = f"Error code: {status}"
        text = content.decode("utf-8", "replace").strip()
        body: object = text
        try:
            body = json.loads(text)
        except ValueError:
            pass
        else:
            error = body.get("error", body) if isinstance(body, Mapping) else None
            said = error.get("message") if isinstance(error, Mapping) else None
            if isinstance(said, str) and said:
                message += f" - {said}"
        data = body.get("error", body) if isinstance(body, Mapping) else body
        lowered: dict[str, str] = {}
        for name, value in headers:
            key = name.lower()
            lowered[key] = f"{lowered[key]}, {value}" if key in lowered else value
        return cls(message, status_code=status, headers=lowered, body=data)


def _env_proxy(url: str) -> str | None:
    """The proxy for ``url`` from ``*_PROXY``/``NO_PROXY``, as httpx2 (trust_env) picks it, once per client."""
    parts = urllib.parse.urlsplit(url)
    if parts.hostname and urllib.request.proxy_bypass(parts.hostname):
        return None
    return urllib.request.getproxies().get(parts.scheme) or urllib.request.getproxies().get("all")


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
    """The ``json_schema`` response format for ``schema``, as plain dicts.

    A judge's schema is one read-only mapping shared by all its calls. It is copied into
    plain dicts (which the SDK's encoder needs, and which json.dumps encodes without calling
    ``default`` for every nested mapping: 13 us of a call's 31 us of encoding) once per
    schema object, not once per call.
    """
    if type(schema) is not MappingProxyType:  # a mutable dict may change between calls
        return _new_schema_format(schema)
    known = _SCHEMA_FORMATS.get(id(schema))
    if known is not None and known[0] is schema:
        return known[1]
    if len(_SCHEMA_FORMATS) >= _SCHEMA_FORMATS_KEPT:
        _SCHEMA_FORMATS.clear()
    formatted = _new_schema_format(schema)
    # The schema is kept alongside its copy so that its id cannot be reused by another object.
    _SCHEMA_FORMATS[id(schema)] = (schema, formatted)
    return formatted


_SCHEMA_FORMATS: dict[int, tuple[Mapping[str, Any], dict[str, Any]]] = {}
_SCHEMA_FORMATS_KEPT = 64


def _new_schema_format(schema: Mapping[str, Any]) -> dict[str, Any]:
    title = schema.get("title")
    name = _SCHEMA_NAME.sub("_", str(title))[:64] if title else "response"
    return {"name": name or "response", "schema": plain(schema), "strict": False}


def _json_default(value: Any) -> Any:
    """What ``json.dumps`` cannot encode itself, encoded as the openai SDK's encoder would."""
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, datetime.datetime | datetime.date):
        return value.isoformat()
    model_dump = getattr(value, "model_dump", None)  # a pydantic model in params
    if callable(model_dump):
        return model_dump(mode="json")
    raise TypeError(f"openai: cannot send a {type(value).__name__} as JSON")


def _json_body(content: bytes, text: Callable[[], str]) -> dict[str, Any]:
    try:
        data = json.loads(content)
    except ValueError as error:
        raise ProviderError(
            f"unusable response: the body is not JSON ({error})",
            provider="openai",
            provider_message=text()[:500],
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
