"""How the OpenAI model's calls travel: the SDK's HTTP clients and the direct aiohttp path.

The TLS context every client shares (and the placeholder plain-http clients get),
proxies from the environment, the pieces of the direct path (``DirectClient``,
``DirectStatusError``, the SDK client that sends nothing) and what the SDK's
aiohttp transport really means by a timeout. ``OpenAIModel`` (``_openai.py``)
decides which path a call takes; ``_openai_wire.py`` writes and reads the JSON.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import ssl
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx2
import openai

from jurybox.core import read_json

if TYPE_CHECKING:
    import aiohttp


@functools.cache
def aiohttp_installed() -> bool:
    """Whether the openai SDK's aiohttp transport can be used (``aiohttp`` is importable)."""
    return importlib.util.find_spec("aiohttp") is not None


# Handed to the HTTP clients of plain-http base URLs, which never use it: building the real one
# loads the CA bundle and imports httpcore2, ~0.1 s of CPU a local server's run does not need.
PLAIN_HTTP_TLS = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


def proxy_configured() -> bool:
    return any(
        os.environ.get(name)
        for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")
    )


def ssl_context() -> ssl.SSLContext:
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


SDK_HTTP_CLIENTS: dict[str, Callable[..., httpx2.AsyncClient]] = {
    "direct": openai.DefaultAioHttpClient,  # the SDK client of the direct path, for streaming calls
    "aiohttp": openai.DefaultAioHttpClient,
    "httpx": openai.DefaultAsyncHttpxClient,
}


class SendsNothing(httpx2.AsyncBaseTransport):
    """The transport of an SDK client the direct path only reads URL and headers from."""

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        raise RuntimeError(
            "openai: this model sends its calls on the direct path; its SDK client has no transport "
            "(turn streaming on when the model is built, not afterwards)"
        )


@dataclass(eq=False)
class DirectClient:
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
            body = read_json(text)
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


def env_proxy(url: str) -> str | None:
    """The proxy for ``url`` from ``*_PROXY``/``NO_PROXY``, as httpx2 (trust_env) picks it, once per client."""
    parts = urllib.parse.urlsplit(url)
    if parts.hostname and urllib.request.proxy_bypass(parts.hostname):
        return None
    return urllib.request.getproxies().get(parts.scheme) or urllib.request.getproxies().get("all")


def dropped_connection(error: BaseException) -> bool:
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
