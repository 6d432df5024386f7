"""Credentials in a URL: userinfo, query and fragment values, and path segments that are tokens.

``https://user:pw@host``, ``https://<key>@o1.ingest.sentry.io/2`` (a Sentry DSN),
``?key=...``, ``?X-Amz-Signature=...``, ``#access_token=...`` (OAuth's implicit
flow) and ``/services/T0/B0/<secret>`` (a Slack webhook) or
``/api/webhooks/<id>/<token>`` (Discord) all carry a credential. Spans are
positions in the URL as written, so replacing them keeps the rest of it byte for
byte.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from urllib.parse import unquote, unquote_plus

from jurybox.pytest_plugin._randomness import looks_random

#: A URL in free text (a scheme, ``://``, then anything up to a space, quote or bracket).
URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.\-]{0,20}://[^\s\"'<>\\`{}|^]+")
_AUTHORITY = re.compile(r"[a-zA-Z][a-zA-Z0-9+.\-]{0,20}://(?:(?P<userinfo>[^/?#@\s]*)@)?(?P<host>[^/?#\s]*)")
_PAIR = re.compile(r"(?P<name>[^&;=#]*)=(?P<value>[^&;#]*)")

#: How a query parameter's value is judged: ``(name, decoded value) -> kind``, or None when it is no secret.
ValueJudge = Callable[[str, str], "str | None"]


def url_spans(url: str, judge_parameter: ValueJudge) -> Iterator[tuple[str, int, int]]:
    """``(kind, start, end)`` for every credential in ``url`` (see the module docstring)."""
    authority = _AUTHORITY.match(url)
    if authority is None:
        return
    if authority.group("userinfo"):
        yield "url-userinfo", authority.start("userinfo"), authority.end("userinfo")
    host = authority.group("host").lower()
    rest = authority.end()
    path_end = len(url)
    for mark in "?#":
        at = url.find(mark, rest)
        if at != -1:
            path_end = min(path_end, at)
    yield from _path_spans(url, rest, path_end, webhook="hook" in host)
    for start, end in _parameter_ranges(url, path_end):
        if "=" not in url[start:end]:
            # A bare query or fragment ("#<token>"): a token by its shape alone.
            if looks_random(unquote_plus(url[start:end])):
                yield "url-token", start, end
            continue
        for pair in _PAIR.finditer(url, start, end):
            value = unquote_plus(pair.group("value"))
            if not value:
                continue
            kind = judge_parameter(unquote_plus(pair.group("name")), value)
            if kind is not None:
                yield kind, pair.start("value"), pair.end("value")


def _parameter_ranges(url: str, path_end: int) -> Iterator[tuple[int, int]]:
    """Where the query and the fragment are (a fragment may hold ``access_token=``)."""
    fragment = url.find("#", path_end)
    if path_end < len(url) and url[path_end] == "?":
        yield path_end + 1, fragment if fragment != -1 else len(url)
    if fragment != -1:
        yield fragment + 1, len(url)


def _path_spans(url: str, start: int, end: int, *, webhook: bool) -> Iterator[tuple[str, int, int]]:
    """Path segments that are tokens: random-looking, or ids after a ``hook`` segment (a webhook's address)."""
    position = start
    for segment in url[start:end].split("/"):
        decoded = unquote(segment)
        if looks_random(decoded) or (webhook and len(decoded) >= 8 and any(c.isdigit() for c in decoded)):
            yield "url-token", position, position + len(segment)
        webhook = webhook or "hook" in decoded.lower()
        position += len(segment) + 1
