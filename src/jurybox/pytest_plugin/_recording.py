"""A short failure for a recording that could not reach its server, instead of the HTTP client's traceback.

Recording (``--record-mode once``, ``new_episodes``, ``all``, ``rewrite``) sends the test's
requests to the real server. When nothing listens there, the SDK's retries end in some 300
lines of openai, httpx and httpcore frames; this finds the connection failure in the chain
and says in one line which server, in which record mode, and what to do.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jurybox.core import error_reason, printable_url

#: Exceptions that mean "no connection to the server", matched by name: the SDKs are imported lazily
#: and some (httpx's vendored copies) live under other module names.
CONNECTION_ERRORS = frozenset(
    {"ConnectError", "APIConnectionError", "ModelConnectionError", "ConnectionRefusedError", "ConnectTimeout"}
)
CHAIN_LIMIT = 10


def connection_failure(error: BaseException | None) -> tuple[BaseException, str | None] | None:
    """The first connection failure in ``error``'s chain and the URL it was for (when one says), else None."""
    found: BaseException | None = None
    url: str | None = None
    seen = 0
    while error is not None and seen < CHAIN_LIMIT:
        if type(error).__name__ in CONNECTION_ERRORS:
            found = found or error
            url = url or _url_of(error)
        error, seen = error.__cause__ or error.__context__, seen + 1
    return None if found is None else (found, url)


def recording_message(error: BaseException, url: str | None, *, cassette: Path | None, record_mode: str) -> str:
    """``recording cassettes/x.yaml (record mode once): connection refused at http://127.0.0.1:9/v1: ...``."""
    where = f"recording {cassette}" if cassette is not None else "recording"
    reason = error_reason(error, url=url) if url else error_reason(error)
    return (
        f"{where} (record mode {record_mode}): {reason}; start the server, "
        "or replay what is recorded with --record-mode none"
    )


def _url_of(error: BaseException) -> str | None:
    url = getattr(error, "url", None)
    if isinstance(url, str) and url:
        return url
    request: Any = None
    try:  # httpx raises when a ConnectError has no request attached
        request = getattr(error, "request", None)
    except RuntimeError:
        request = None
    target = getattr(request, "url", None)
    if target is None:
        return None
    text = str(target)
    # The server, not the path: "http://127.0.0.1:9/v1/chat/completions" -> "http://127.0.0.1:9".
    scheme, _, rest = text.partition("://")
    host = rest.split("/", 1)[0]
    return printable_url(f"{scheme}://{host}") if host else None
