"""vcrpy matchers that compare requests as an LLM call means them, and as redaction left them.

vcrpy redacts every live request (``before_record_request``) before it matches
it, so a request recorded with today's rules matches itself. A cassette recorded
with other rules (PII redaction off, or an older jurybox that knew fewer
secrets) holds values today's rules would replace: these matchers compare such
requests again with every rule applied to both sides, so upgrading jurybox or
turning PII redaction on never breaks the replay of an existing cassette.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection
from functools import cache, lru_cache
from typing import Any
from urllib.parse import parse_qsl, urlparse

from jurybox.core import read_json
from jurybox.pytest_plugin._redaction import Redactor


@cache
def _full() -> Redactor:
    """Every built-in rule, personal data included."""
    return Redactor(pii=True)


def _body_text(body: Any) -> str | None:
    if body is None:
        return None
    if isinstance(body, bytes):
        try:
            return body.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return str(body)


def json_body(r1: Any, r2: Any) -> None:
    """vcrpy matcher: bodies equal as JSON (key order and whitespace ignored), else byte for byte.

    Raises:
        AssertionError: when the bodies differ (vcrpy's matcher protocol).
    """
    _compare_bodies(r1, r2, ignore_empty=False)


def json_body_matcher(*, ignore_empty: bool) -> Callable[[Any, Any], None]:
    """``json_body``, optionally treating null, ``[]`` and ``{}`` fields as absent (``ignore_empty_fields``)."""
    if not ignore_empty:
        return json_body

    def json_body_ignoring_empty(r1: Any, r2: Any) -> None:  # vcrpy names matchers by __name__
        _compare_bodies(r1, r2, ignore_empty=True)

    return json_body_ignoring_empty


def _query(uri: str, ignored: Collection[str]) -> list[tuple[str, str]]:
    return [(k, v) for k, v in sorted(parse_qsl(urlparse(uri).query)) if k not in ignored]


def query_matcher(ignored: Collection[str] = ()) -> Callable[[Any, Any], None]:
    """vcrpy's ``query`` matcher without the parameters in ``ignored`` (``ignore_query_params``), redaction-aware."""

    def query(r1: Any, r2: Any) -> None:
        left, right = _query(r1.uri, ignored), _query(r2.uri, ignored)
        if left == right:
            return
        if _query(_redacted_uri(r1.uri), ignored) != _query(_redacted_uri(r2.uri), ignored):
            raise AssertionError(f"query {left} != {right}")

    return query


@lru_cache(maxsize=1024)
def _redacted_uri(uri: str) -> str:
    return _full().redact_uri(uri)


def _path(uri: str) -> str:
    return urlparse(uri).path or "/"  # RFC 3986 6.2.3, as vcrpy's own matcher reads it


def path(r1: Any, r2: Any) -> None:
    """vcrpy's ``path`` matcher, redaction-aware (a webhook's token in the path).

    Raises:
        AssertionError: when the paths differ (vcrpy's matcher protocol).
    """
    left, right = _path(r1.uri), _path(r2.uri)
    if left != right and _path(_redacted_uri(r1.uri)) != _path(_redacted_uri(r2.uri)):
        raise AssertionError(f"{left} != {right}")


def _compare_bodies(r1: Any, r2: Any, *, ignore_empty: bool) -> None:
    first, second = _body_text(r1.body), _body_text(r2.body)
    if first is not None and second is not None:
        try:
            left, right = read_json(first, max_nodes=None), read_json(second, max_nodes=None)
        except ValueError:
            pass
        else:
            if ignore_empty:
                left, right = without_empty(left), without_empty(right)
            # A cassette recorded with other redaction rules still matches: compare both fully redacted.
            if left != right and _redacted(first, ignore_empty) != _redacted(second, ignore_empty):
                raise AssertionError("JSON bodies differ")
            return
    if (r1.body or b"") != (r2.body or b""):
        if first is not None and second is not None and _redacted(first, False) == _redacted(second, False):
            return
        raise AssertionError("bodies differ")


@lru_cache(maxsize=256)
def _redacted(body: str, ignore_empty: bool) -> str:
    """A body with every rule applied, in one canonical spelling; kept, since vcrpy compares each live
    request with every recorded one and most of those differ."""
    try:
        document = read_json(body, max_nodes=None)
    except ValueError:
        redacted = _full().redact_body(body)
        return redacted if isinstance(redacted, str) else redacted.decode("utf-8")
    if ignore_empty:
        document = without_empty(document)
    return json.dumps(_full().redact_data(document), sort_keys=True, ensure_ascii=False)


def without_empty(value: Any) -> Any:
    """``value`` with every object field whose value is null, ``[]`` or ``{}`` left out, at any depth."""
    if isinstance(value, dict):
        kept = {key: without_empty(item) for key, item in value.items()}
        return {key: item for key, item in kept.items() if item is not None and item not in ([], {})}
    if isinstance(value, list):
        return [without_empty(item) for item in value]
    return value
