"""A vcrpy cassette read and checked field by field, so a malformed file is one error that names it.

vcrpy trusts the file: a missing ``headers``, a number where a list belongs or
a status that is not a number surfaces later as a TypeError, KeyError or
IndexError from deep inside vcrpy or httpx, without the file's name. Here every
field replay reads is checked once, after the bounded YAML read, and the result
has exactly the shape vcrpy writes, so replay cannot trip on it.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from jurybox.inputs._errors import InputError
from jurybox.inputs._lines import Lines, PathKey
from jurybox.inputs._yaml import read_yaml

_REQUEST_KEYS = ("method", "uri", "body", "headers")
#: A compressed body is checked by inflating it, up to this many bytes (a bomb stops here; nothing is kept).
MAX_INFLATED_BYTES = 256 * 1024 * 1024
_INFLATE_STEP = 1024 * 1024


class CassetteError(InputError):
    """A cassette that cannot be replayed: the message reads ``FILE:LINE: FIELD: what is wrong``."""

    def __init__(self, source: str, line: int | None, problem: str, *, path: PathKey = (), syntax: bool = False):
        super().__init__(source, line, problem, path=path, syntax=syntax)
        where = f"{source}:{line}" if line is not None else source
        field = _field(path)
        self.args = (f"{where}: {field + ': ' if field else ''}{problem}",)

    def __str__(self) -> str:
        return str(self.args[0])


def _legacy_bytes_io(mapping: Any) -> bytes:
    state = mapping.get("state") if isinstance(mapping, dict) else None
    data = state[0] if isinstance(state, list | tuple) and state else b""
    return data.encode("utf-8") if isinstance(data, str) else data if isinstance(data, bytes) else b""


def _legacy_iter(mapping: Any) -> bytes:
    args = mapping.get("args") if isinstance(mapping, dict) else None
    items = args[0] if isinstance(args, list | tuple) and args else []
    return b"".join(item if isinstance(item, bytes) else str(item).encode("utf-8") for item in items)


#: The Python tags vcrpy's own safe cassette loader accepts (older vcrpy wrote them), built safely.
CASSETTE_TAGS: dict[str, Callable[[Any], Any]] = {
    "tag:yaml.org,2002:python/str": str,
    "tag:yaml.org,2002:python/unicode": str,
    "tag:yaml.org,2002:python/tuple": tuple,
    "tag:yaml.org,2002:python/object/new:_io.BytesIO": _legacy_bytes_io,
    "tag:yaml.org,2002:python/object/apply:builtins.iter": _legacy_iter,
}


def read_cassette(text: str, source: str) -> dict[str, Any]:
    """The cassette in ``text`` as vcrpy's serializer gives it, every field replay reads checked.

    A response's ``headers`` value written as one string becomes a list of one, and vcrpy-httpx's
    old layout (``status_code``, ``content``) becomes the current one; anything else that is not
    what vcrpy writes is an error.

    Raises:
        CassetteError: naming the file, the line, the field and the problem.
    """
    try:
        document = read_yaml(text, source, tags=CASSETTE_TAGS)
    except InputError as exc:
        problem = f"not valid YAML: {exc.problem}" if exc.syntax else exc.problem
        raise CassetteError(source, exc.line, problem) from None
    check = _Checker(source, document.lines)
    data = document.data
    if not isinstance(data, dict):
        raise check.fail((), "a cassette is a mapping with 'interactions' (and 'version: 1')")
    version = data.get("version", 1)
    if version != 1 or isinstance(version, bool):
        raise check.fail(("version",), f"version {version!r} is not one vcrpy writes (1)")
    interactions = data.get("interactions")
    if not isinstance(interactions, list):
        raise check.fail(("interactions",), f"must be a list of interactions, got {_kind(interactions)}")
    for index, interaction in enumerate(interactions):
        where: PathKey = ("interactions", index)
        if not isinstance(interaction, dict):
            raise check.fail(
                where, f"an interaction is a mapping with 'request' and 'response', got {_kind(interaction)}"
            )
        _from_parsed_body(interaction)
        check.request(interaction.get("request"), (*where, "request"))
        interaction["response"] = check.response(interaction.get("response"), (*where, "response"))
    checked: dict[str, Any] = data
    return checked


class _Checker:
    def __init__(self, source: str, lines: Lines) -> None:
        self.source = source
        self.lines = lines

    def fail(self, path: PathKey, problem: str) -> CassetteError:
        return CassetteError(self.source, self.lines.nearest(path), problem, path=path)

    def request(self, request: Any, where: PathKey) -> None:
        if not isinstance(request, dict):
            raise self.fail(where, f"must be a mapping with {', '.join(_REQUEST_KEYS)}, got {_kind(request)}")
        missing = [key for key in _REQUEST_KEYS if key not in request]
        if missing:
            raise self.fail(where, f"missing {', '.join(missing)}")
        extra = sorted(str(key) for key in request if key not in _REQUEST_KEYS)
        if extra:
            raise self.fail((*where, extra[0]), f"a request has only {', '.join(_REQUEST_KEYS)}")
        method = request["method"]
        if not isinstance(method, str) or not method.strip():
            raise self.fail((*where, "method"), f"must be an HTTP method such as POST, got {_kind(method)}")
        self.uri(request["uri"], (*where, "uri"))
        self.body(request["body"], (*where, "body"), allow_none=True)
        request["headers"] = self.headers(request["headers"], (*where, "headers"), lists=False)

    def uri(self, uri: Any, where: PathKey) -> None:
        if not isinstance(uri, str):
            raise self.fail(where, f"must be a URL, got {_kind(uri)}")
        try:
            parts = urlsplit(uri)
            _ = parts.port
        except ValueError as exc:
            raise self.fail(where, f"not a URL: {exc}") from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise self.fail(where, f"not an http(s) URL: {uri[:80]!r}")

    def body(self, body: Any, where: PathKey, *, allow_none: bool) -> None:
        if body is None and allow_none:
            return
        if not isinstance(body, str | bytes):
            raise self.fail(where, f"must be text or !!binary bytes, got {_kind(body)}")
        if isinstance(body, str):
            try:
                body.encode("utf-8")
            except UnicodeEncodeError:
                raise self.fail(where, "holds a character that is not Unicode text (a lone surrogate)") from None

    def headers(self, headers: Any, where: PathKey, *, lists: bool) -> dict[str, Any]:
        """The headers as vcrpy keeps them: name -> list of values (a request's may be one value)."""
        if headers is None:
            return {}
        if not isinstance(headers, dict):
            raise self.fail(where, f"must be a mapping of header name to values, got {_kind(headers)}")
        checked: dict[str, Any] = {}
        for name, values in headers.items():
            at = (*where, str(name))
            if not isinstance(name, str) or not name or not name.isascii():
                raise self.fail(at, f"a header name is ASCII text, got {_clip(name)}")
            items = values if isinstance(values, list) else [values]
            if not items:
                raise self.fail(at, "a header needs at least one value")
            for value in items:
                # httpx sends and builds headers as ASCII only.
                if not isinstance(value, str) or not value.isascii():
                    raise self.fail(at, f"a header value is ASCII text, got {_clip(value)}")
            checked[name] = items if lists or isinstance(values, list) else values
        return checked

    def response(self, response: Any, where: PathKey) -> dict[str, Any]:
        if not isinstance(response, dict):
            raise self.fail(where, f"must be a mapping with status, headers and body, got {_kind(response)}")
        if "status_code" in response and "status" not in response:  # vcrpy-httpx's old layout
            response = {
                "status": {"code": response["status_code"], "message": ""},
                "headers": response.get("headers"),
                "body": {"string": response.get("content")},
            }
        status = response.get("status")
        if not isinstance(status, dict):
            raise self.fail((*where, "status"), f"must be a mapping with code and message, got {_kind(status)}")
        code = status.get("code")
        if not isinstance(code, int) or isinstance(code, bool) or not 100 <= code <= 599:
            raise self.fail((*where, "status", "code"), f"must be an HTTP status 100..599, got {_clip(code)}")
        message = status.get("message")
        if message is None:
            status["message"] = ""
        elif not isinstance(message, str) or not message.isascii():
            raise self.fail((*where, "status", "message"), f"must be ASCII text, got {_clip(message)}")
        response["headers"] = self.headers(response.get("headers"), (*where, "headers"), lists=True)
        body = response.get("body")
        if not isinstance(body, dict) or "string" not in body:
            raise self.fail((*where, "body"), f"must be a mapping with 'string', got {_kind(body)}")
        content = body["string"]
        if content is None:
            body["string"] = content = b""
        self.body(content, (*where, "body", "string"), allow_none=False)
        self.encoded(response["headers"], content, (*where, "body", "string"))
        checked: dict[str, Any] = response
        return checked

    def encoded(self, headers: Mapping[str, list[str]], content: str | bytes, where: PathKey) -> None:
        """A body the headers say is gzip or deflate must inflate (the client would fail reading it)."""
        named = [v for k, vs in headers.items() if k.lower() == "content-encoding" for v in vs]
        encodings = [part.strip().lower() for value in named for part in value.split(",") if part.strip()]
        # The last coding applied is the first undone; only gzip and deflate are checked (other codings are
        # left to the client: httpx skips the ones it does not know).
        if not encodings or encodings[-1] not in ("gzip", "deflate", "x-gzip"):
            return
        raw = content.encode("utf-8") if isinstance(content, str) else content
        # 47: a gzip or a zlib header, read from the data; deflate without a header is tried next.
        for wbits in (47, -15):
            if _inflates(raw, wbits):
                return
        raise self.fail(where, f"the headers say content-encoding {encodings[-1]}, but the body does not inflate")


def _inflates(raw: bytes, wbits: int) -> bool:
    inflater = zlib.decompressobj(wbits)
    total = 0
    data = raw
    try:
        while data:
            chunk = inflater.decompress(data, _INFLATE_STEP)
            total += len(chunk)
            if total > MAX_INFLATED_BYTES:
                return False
            data = inflater.unconsumed_tail
        return inflater.eof or total > 0 or not raw
    except zlib.error:
        return False


def _from_parsed_body(interaction: dict[str, Any]) -> None:
    """pydantic-ai's cassettes keep bodies as YAML data (``parsed_body``): turn them back into JSON text.

    Its serializer stores the decoded body, so the response's ``content-encoding`` (the body is
    no longer gzip) and ``content-length`` (the JSON text is not byte for byte the original) go.
    """
    request = interaction.get("request")
    if isinstance(request, dict) and "parsed_body" in request:
        request["body"] = json.dumps(request.pop("parsed_body"), ensure_ascii=False, default=str)
    response = interaction.get("response")
    if isinstance(response, dict) and "parsed_body" in response:
        response["body"] = {"string": json.dumps(response.pop("parsed_body"), ensure_ascii=False, default=str)}
        headers = response.get("headers")
        if isinstance(headers, dict):
            for name in [n for n in headers if str(n).lower() in ("content-encoding", "content-length")]:
                del headers[name]


def _kind(value: Any) -> str:
    return "nothing" if value is None else type(value).__name__


def _clip(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _field(path: PathKey) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text
