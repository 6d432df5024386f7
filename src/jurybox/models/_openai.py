"""OpenAI and OpenAI-compatible servers (vLLM, LM Studio, llama.cpp, Together...), over aiohttp or the SDK.

``OpenAIModel`` picks the path a call takes (the direct aiohttp path, which needs no
SDK, or the official SDK: ``pip install 'jurybox[openai]'``) and maps failures to
ProviderErrors; the pieces the paths are made of (TLS, proxies, the
direct client) live in ``_openai_transport.py``, the JSON sent and read back in
``_openai_wire.py``.
"""

from __future__ import annotations

import os
import sys
import weakref
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal

from jurybox.core import require
from jurybox.models._base import ProviderModel, resolve_api_key, status_error
from jurybox.models._errors import ModelConfigError, ProviderError
from jurybox.models._openai_transport import (
    COMPLETIONS_PATH,
    KEEPALIVE_EXPIRY,
    PLAIN_HTTP_TLS,
    DirectClient,
    DirectStatusError,
    aiohttp_installed,
    completions_url,
    direct_headers,
    dropped_connection,
    env_proxy,
    proxy_configured,
    ssl_context,
)
from jurybox.models._openai_wire import chat_completions_body, encode_body, from_chunks, from_completion, json_object
from jurybox.models._probe import ProbeTarget, openai_compatible_target
from jurybox.models._providers import provider_info
from jurybox.models._types import GenerateRequest, ModelResponse

if TYPE_CHECKING:
    import aiohttp
    import openai

_STRUCTURED_UNSUPPORTED = ("response_format", "json_schema")

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
            calls with a plain ``aiohttp.ClientSession`` the model owns, without the openai SDK
            (neither installed nor imported): the SDK's per-request pipeline costs about 0.5 ms CPU
            per call, more than the HTTP itself, and importing it about 0.3 s at start-up. It sends
            the same URL and JSON bytes as the SDK, and its headers but the SDK's telemetry
            (``X-Stainless-*``), with the same connection limit, TLS context, timeouts and error
            mapping. Streaming calls, ``"aiohttp"`` and ``"httpx"`` go through the openai SDK
            (``pip install 'jurybox[openai]'``) with that transport (streaming with aiohttp).
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
        # A subclass registered as another OpenAI-compatible provider reads its own variables.
        info = provider_info(self.provider)
        base_url = base_url or os.environ.get(info.base_url_variable or "OPENAI_BASE_URL") or None
        super().__init__(model, base_url=base_url, **options)
        key = resolve_api_key(
            self.provider,
            api_key,
            info.key_variable or "OPENAI_API_KEY",
            base_url=self.base_url,
            keyless="for a local OpenAI-compatible server pass base_url=... (any key is accepted)",
        )
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
        if self.http_transport != "direct" or self.stream:
            self._sdk()  # a missing SDK is a configuration error now, not an ERROR per case later

    def probe_target(self) -> ProbeTarget:
        target = openai_compatible_target(
            self.effective_base_url,
            printable=self.printable_url,
            api_key=self._api_key,
            key_variable=provider_info(self.provider).key_variable,
        )
        if self.organization:
            return replace(target, headers={**target.headers, "OpenAI-Organization": self.organization})
        return target

    def _sdk(self) -> Any:
        """The openai module, or ModelConfigError naming the extra (the direct path never asks)."""
        try:
            return require("openai", extra="openai", feature=f"{self.provider}: streaming and the SDK transports")
        except ImportError as error:
            raise ModelConfigError(str(error)) from None

    def _make_client(self, connections: int) -> openai.AsyncOpenAI | DirectClient:
        if self.http_transport == "direct" and not self.stream:
            url = completions_url(self.effective_base_url)
            return DirectClient(url, self._direct_headers(), connections, KEEPALIVE_EXPIRY, env_proxy(url))
        sdk = self._sdk()
        import httpx2  # the SDK's own HTTP client package: installed with it

        limits = httpx2.Limits(max_connections=connections, max_keepalive_connections=connections)
        tls = ssl_context() if self._uses_tls() else PLAIN_HTTP_TLS
        make_http_client = sdk.DefaultAsyncHttpxClient if self.http_transport == "httpx" else sdk.DefaultAioHttpClient
        http_client = make_http_client(limits=limits, timeout=self.timeout, verify=tls)
        client: openai.AsyncOpenAI = sdk.AsyncOpenAI(
            api_key=self._api_key,
            organization=self.organization,
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=0,  # our retries are the only ones, so attempts and waits are bounded and visible
            http_client=http_client,
        )
        return client

    def _direct_headers(self) -> dict[str, str]:
        """Auth, organization and project (``$OPENAI_PROJECT`` for api.openai.com, as the SDK reads it)."""
        project = os.environ.get("OPENAI_PROJECT") if self.provider == "openai" else None
        return direct_headers(self._api_key, organization=self.organization, project=project)

    async def _close_client(self, client: Any) -> None:
        if isinstance(client, DirectClient):
            if client.session is not None:
                await client.session.close()
            return
        await client.close()

    def _uses_tls(self) -> bool:
        """Whether calls go over https (or a proxy might need TLS): only then is the CA bundle loaded."""
        return not self.effective_base_url.lower().startswith("http://") or proxy_configured()

    def _completions_url(self, client: openai.AsyncOpenAI) -> str:
        """The absolute Chat Completions URL of ``client``, merged from its base URL as the SDK would."""
        url = self._completions_urls.get(client)
        if url is None:
            # Given a relative path, the SDK parses and re-parses its base URL on every call.
            base = client.base_url
            url = str(base.copy_with(raw_path=base.raw_path + COMPLETIONS_PATH.lstrip("/").encode()))
            self._completions_urls[client] = url
        return url

    def request_body(self, request: GenerateRequest) -> dict[str, Any]:
        """The Chat Completions arguments for ``request``."""
        return chat_completions_body(
            request,
            model=self.model,
            max_tokens_param=self.max_tokens_param,
            structured_output=self.structured_output,
            stream=self.stream,
            params=self.params,
        )

    async def _send(self, client: openai.AsyncOpenAI | DirectClient, request: GenerateRequest) -> ModelResponse:
        try:
            return await self._send_once(client, request)
        except Exception as error:
            message = str(error).lower()
            if (
                getattr(error, "status_code", None) != 400
                or not (isinstance(error, DirectStatusError) or _sdk_error(error, "BadRequestError"))
                or "response_format" not in self.request_body(request)
                or not any(word in message for word in _STRUCTURED_UNSUPPORTED)
            ):
                raise
            # This server does not do structured output: fall back to text for this and later calls.
            self.structured_output = False
            return await self._send_once(client, request)

    async def _send_once(self, client: openai.AsyncOpenAI | DirectClient, request: GenerateRequest) -> ModelResponse:
        body = self.request_body(request)
        if isinstance(client, DirectClient):
            extra = body.pop("extra_body", None)
            if extra:
                body.update(extra)
            return from_completion(await self._post_direct(client, body))
        if not self.stream:
            extra = body.pop("extra_body", None)
            if extra:
                body.update(extra)
            import httpx2

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
            return from_completion(json_object(reply.content, lambda: reply.text))
        chunks: list[dict[str, Any]] = []
        stream = await client.chat.completions.create(**body)
        async for chunk in stream:
            chunks.append(chunk.model_dump(mode="json", exclude_unset=True))
        return from_chunks(chunks)

    async def _post_direct(self, direct: DirectClient, body: dict[str, Any]) -> dict[str, Any]:
        """One Chat Completions POST with the model's own aiohttp session; the reply's JSON object.

        Raises ModelTimeoutError or ModelConnectionError (as ``_translate`` maps the SDK's errors)
        and DirectStatusError for HTTP >= 400 (``_translate`` maps it like the SDK's status errors).
        """
        import aiohttp

        session = direct.session
        if session is None or session.closed:
            session = direct.session = self._direct_session(direct)
        data = encode_body(body)  # the bytes the SDK would send
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
        return json_object(content, lambda: content.decode("utf-8", "replace"))

    def _direct_session(self, direct: DirectClient) -> aiohttp.ClientSession:
        import aiohttp

        # As the SDK's aiohttp transport sets it up: pool limit, keep-alive expiry, TLS context and
        # the httpx2 timeout (connect, read and pool wait, no total) mapped onto aiohttp's.
        connector = aiohttp.TCPConnector(
            limit=direct.connections,
            keepalive_timeout=direct.keepalive_expiry,
            ssl=ssl_context() if self._uses_tls() else PLAIN_HTTP_TLS,
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
        openai = sys.modules.get("openai")
        if openai is None:  # the SDK was never imported, so no error can be one of its
            return None
        if isinstance(error, openai.APITimeoutError) and not dropped_connection(error):
            return self._timeout_error()
        if isinstance(error, openai.APIConnectionError):
            return self._connection_error(error.__cause__ or error)
        if isinstance(error, openai.APIStatusError):
            headers = dict(error.response.headers.items())
            return status_error(self.provider, error.status_code, headers, error.body)
        if isinstance(error, openai.OpenAIError):
            return ProviderError(f"unusable response: {error}", provider=self.provider)
        return None


def _sdk_error(error: Exception, name: str) -> bool:
    """Whether ``error`` is the openai SDK's error class ``name`` (False when the SDK was never imported)."""
    openai = sys.modules.get("openai")
    return openai is not None and isinstance(error, getattr(openai, name))
