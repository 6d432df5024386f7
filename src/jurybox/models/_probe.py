"""Checking a model server before a run spends time on it: does it answer, and does it take the key?

A judge model that cannot be reached otherwise costs every case its retries (seconds
each) and ends in as many identical errors. One cheap GET per server, all at once,
answers the question before the first case: the provider's model list (OpenAI-compatible
``GET {base}/models``, Anthropic ``GET /v1/models``, Ollama ``GET /api/tags``), which
needs the key but spends no tokens.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from jurybox.core import error_reason, printable_url
from jurybox.models._providers import key_variable as key_variable_of

PROBE_TIMEOUT = 2.0
"""Seconds one check waits for the server; a healthy local or cloud server answers in well under one."""

_AUTH_STATUSES = (401, 403, 407)


@dataclass(frozen=True)
class ProbeTarget:
    """One server to check.

    Attributes:
        url: The server's base URL as messages show it (no user:password, no query).
        check_url: The URL to GET.
        headers: The headers a real call sends for auth (they are sent, never printed).
        key_variable: The environment variable a refused key comes from, named in the message.
        label: What the server is for ("judge model openai:gpt-4o-mini"), the start of a message.
    """

    url: str
    check_url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    key_variable: str | None = None
    label: str = ""


def ready_to_probe(target: ProbeTarget) -> None:
    """Import and set up now what ``probe`` needs (aiohttp, and the TLS context for an https server).

    For a probe about to run in another thread while this one stays busy: an import made in that
    thread would crawl at one GIL switch interval per step, and a thread holding an import lock
    must not be running when this process forks.
    """
    import aiohttp  # noqa: F401

    if target.check_url.lower().startswith("https://"):
        from jurybox.models._openai_transport import ssl_context

        ssl_context()


async def probe(target: ProbeTarget, *, timeout: float = PROBE_TIMEOUT) -> str | None:
    """GET ``target.check_url`` once: None when the server answered and took the key, else why not in one line.

    Any answer but a refused key counts as reachable: a server without a model list
    (404) still serves completions, and a 5xx now may be gone by the first case.
    """
    # aiohttp (the judge calls' own client, already in the base): httpx would cost ~0.1 s of
    # imports (its CLI pulls in rich and pygments) for this one GET.
    import aiohttp

    from jurybox.models._openai_transport import ssl_context

    tls = ssl_context() if target.check_url.lower().startswith("https://") else None
    try:
        # No redirects followed and no retries: this is a question, not a call that must succeed.
        # trust_env: the proxy from HTTP(S)_PROXY/NO_PROXY, as the judge calls' path resolves it.
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout), trust_env=True) as session,
            session.get(
                target.check_url, headers=dict(target.headers), allow_redirects=False, ssl=tls or True
            ) as response,
        ):
            status = response.status
    except TimeoutError:
        return f"timed out after {timeout:g}s at {target.url}: is the server up, and is this its address?"
    except (aiohttp.ClientError, OSError, ValueError) as error:  # ValueError: a URL aiohttp cannot send to
        return error_reason(error, url=target.url)
    if status not in _AUTH_STATUSES:
        return None
    words = {401: "401 Unauthorized", 403: "403 Forbidden", 407: "407 Proxy Authentication Required"}[status]
    if status == 407:
        return f"{words} at {target.url}: check the proxy settings (HTTPS_PROXY)"
    variable = target.key_variable
    return f"{words} at {target.url}: check {variable}" if variable else f"{words} at {target.url}: check the API key"


async def probe_all(targets: Sequence[ProbeTarget], *, timeout: float = PROBE_TIMEOUT) -> list[tuple[ProbeTarget, str]]:
    """Check every distinct server at once; the ones that failed, each with its one-line reason."""
    unique = list({(t.check_url, tuple(sorted(t.headers.items()))): t for t in targets}.values())
    answers = await asyncio.gather(*(probe(target, timeout=timeout) for target in unique))
    return [(target, answer) for target, answer in zip(unique, answers, strict=True) if answer is not None]


class EndpointCheck:
    """What a model with a server adds: its printable URL and a check that the server is there.

    ``ProviderModel`` inherits it; a provider whose check is not an OpenAI-compatible
    ``GET {base}/models`` overrides ``probe_target``.
    """

    @property
    def effective_base_url(self) -> str:
        raise NotImplementedError

    @property
    def printable_url(self) -> str:
        """The server's URL as the terminal and reports show it: no user:password, no query."""
        return printable_url(self.effective_base_url)

    async def check_endpoint(self, timeout: float = PROBE_TIMEOUT) -> str | None:
        """Whether the server answers and takes the key: None, or one line naming the URL and the cause.

        One cheap GET (the provider's model list), no tokens spent; ``jurybox run`` calls it
        for every model before the first case.
        """
        return await probe(self.probe_target(), timeout=timeout)

    def probe_target(self) -> ProbeTarget:
        """What ``check_endpoint`` asks: an OpenAI-compatible ``GET {base}/models`` unless a provider says."""
        return ProbeTarget(self.printable_url, f"{self.effective_base_url}/models")


def openai_compatible_target(
    base_url: str, *, printable: str, api_key: str | None, key_variable: str | None = None
) -> ProbeTarget:
    """The check of an OpenAI-compatible server at ``base_url`` (``GET {base}/models``, bearer key).

    ``key_variable`` is named when the key is refused (default: the openai provider's).
    """
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    variable = key_variable if key_variable is not None else key_variable_of("openai")
    return ProbeTarget(printable, f"{base_url.rstrip('/')}/models", headers, variable)
