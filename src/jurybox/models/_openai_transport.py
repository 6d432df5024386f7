"""How the OpenAI model's calls travel: the direct aiohttp path, and what the SDK's clients share.

The TLS context every client shares (and the placeholder plain-http clients get),
proxies from the environment, the pieces of the direct path (``DirectClient``,
``DirectStatusError``, the headers it sends) and what the SDK's aiohttp transport
really means by a timeout. Nothing here imports the openai SDK (an extra): the
direct path does without it. ``OpenAIModel`` (``_openai.py``) decides which path
a call takes; ``_openai_wire.py`` writes and reads the JSON.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

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
    import httpx  # the base's HTTP client; its context is the one the SDK's httpx2 builds (certifi, SSL_CERT_*)

    return httpx.create_ssl_context()


# As the SDK's httpx2.Limits default: an idle pooled connection is closed after 5 s.
KEEPALIVE_EXPIRY = 5.0
COMPLETIONS_PATH = "/chat/completions"


def completions_url(base_url: str) -> str:
    """The absolute Chat Completions URL under ``base_url``, as the SDK joins them (one slash between)."""
    return base_url.rstrip("/") + COMPLETIONS_PATH


def direct_headers(api_key: str, *, organization: str | None, project: str | None) -> dict[str, str]:
    """The headers the direct path sends: what the SDK sends but its telemetry (``X-Stainless-*``)."""
    headers = {
        "Accept": "application/json",
        "Content-Type": "application/json",
        "User-Agent": "jurybox",
        "Authorization": f"Bearer {api_key}",
    }
    if organization:
        headers["OpenAI-Organization"] = organization
    if project:
        headers["OpenAI-Project"] = project
    return headers


@dataclass(eq=False)
class DirectClient:
    """One lane's client on the direct path: what it sends, and its aiohttp session (made on first use)."""

    url: str
    headers: dict[str, str] = field(repr=False)  # the Authorization header holds the key
    connections: int
    keepalive_expiry: float | None
    proxy: str | None
    session: aiohttp.ClientSession | None = None

    def is_closed(self) -> bool:
        """True when no session is open (never opened, or closed with its event loop)."""
        return self.session is None or self.session.closed


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
    import urllib.request  # its http.client and email imports: only a direct client asks, once

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
