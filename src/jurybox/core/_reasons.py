"""One line a person can act on, for any exception a model, an agent or a judge raised.

Reports show an error's reason in a table cell and a CI log line: an exception's repr
(``ClientConnectorError(ConnectionKey(host='127.0.0.1', port=9, ...``) tells a user
nothing they can do. The full detail stays in the judgment's ``error`` (type, message,
traceback), which the JSON report and the store keep.
"""

from __future__ import annotations

import errno
import json
import socket
import ssl
from urllib.parse import urlsplit, urlunsplit

MAX_REASON_CHARS = 300
"""Longest reason line; a longer message is cut (the whole message stays in the error detail)."""

_CHAIN_DEPTH = 12  # causes followed at most: a cycle or a deep chain must not hang a report


def error_reason(error: BaseException, *, url: str | None = None) -> str:
    """What went wrong, in one line: "connection refused at http://127.0.0.1:9/v1: is the server running?".

    An exception with a ``one_line()`` method (``jurybox.models.ProviderError``) words
    itself; an operating-system cause anywhere in the chain (refused, DNS, reset, TLS,
    timeout) is named as such; anything else is its type and the first line of its message.

    Args:
        error: The exception.
        url: Where the failed call went, named in connection failures (printable: no secrets).
    """
    worded = getattr(error, "one_line", None)
    if callable(worded):
        text = worded()
        if isinstance(text, str) and text.strip():
            return _clip(text)
    cause = network_cause(error)
    said = _first_line(str(error))
    if cause == "timed out" and said and "timed out" not in said.lower():
        cause = f"timed out ({said})"  # what timed out, when the message says
    elif cause == "timed out" and said:
        cause = said
    if cause is not None:
        where = "" if url is None else f" at {url}"
        return _clip(f"{cause}{where}{network_hint(cause)}")
    if isinstance(error, json.JSONDecodeError):
        return f"invalid JSON (line {error.lineno}, column {error.colno}: {error.msg})"
    name = type(error).__name__
    return _clip(f"{name}: {said}" if said else name)


def network_cause(error: BaseException) -> str | None:
    """The network failure behind ``error`` in a few words ("connection refused"), or None.

    Walks the cause chain (``raise ... from``, then the implicit context), since HTTP clients
    wrap the operating system's error two or three times.
    """
    seen: set[int] = set()
    current: BaseException | None = error
    timed_out = False
    while current is not None and id(current) not in seen and len(seen) < _CHAIN_DEPTH:
        seen.add(id(current))
        found = _os_error_words(current)
        if found is not None:
            return found
        timed_out = timed_out or isinstance(current, TimeoutError) or "Timeout" in type(current).__name__
        current = current.__cause__ or current.__context__
    return "timed out" if timed_out else None


def _os_error_words(error: BaseException) -> str | None:
    if isinstance(error, socket.gaierror):
        return "DNS lookup failed (unknown host)"
    if isinstance(error, ssl.SSLCertVerificationError):
        return f"TLS certificate rejected ({getattr(error, 'verify_message', None) or error})"
    if isinstance(error, ssl.SSLError):
        return f"TLS handshake failed ({getattr(error, 'reason', None) or error})"
    if isinstance(error, ConnectionRefusedError) or getattr(error, "errno", None) == errno.ECONNREFUSED:
        return "connection refused"
    if isinstance(error, ConnectionResetError | BrokenPipeError | ConnectionAbortedError):
        return "connection dropped by the server"
    if getattr(error, "errno", None) in (errno.EHOSTUNREACH, errno.ENETUNREACH):
        return "host unreachable"
    return None


def network_hint(cause: str) -> str:
    """What to check after a ``network_cause`` (": is the server running?"), or ""."""
    if cause.startswith("connection refused"):
        return ": is the server running?"
    if cause.startswith("DNS"):
        return ": check the host name"
    return ""


def printable_url(url: str) -> str:
    """``url`` without what must not reach a terminal or a report: user:password@ and the query.

    >>> printable_url("https://me:secret@host/v1?key=abc")
    'https://host/v1'
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return "(unparsable URL)"
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 literal keeps its brackets
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = host if port is None else f"{host}:{port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def _clip(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= MAX_REASON_CHARS else flat[: MAX_REASON_CHARS - 1] + "…"
