"""Cassettes on vcrpy: one file per test, LLM-safe matching, chunked stream replay and a network guard."""

from __future__ import annotations

import re
import socket
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any
from unittest import mock

from jurybox.core import require
from jurybox.pytest_plugin._cassette_yaml import BoundedPersister, BoundedYamlSerializer
from jurybox.pytest_plugin._config import CassetteSettings
from jurybox.pytest_plugin._matching import json_body_matcher, query_matcher
from jurybox.pytest_plugin._matching import path as path_matcher
from jurybox.pytest_plugin._redaction import Redactor

#: The matcher names an LLM-safe cassette matches on: method, the URL piece by piece, and the JSON body.
LLM_MATCH_ON = ("method", "scheme", "host", "port", "path", "query", "json_body")

#: Content types replayed chunk by chunk (one SSE event or one NDJSON line per chunk).
SSE_TYPES = ("text/event-stream",)
NDJSON_TYPES = ("application/x-ndjson", "application/jsonl", "application/json-lines", "application/ndjson")
#: Chunk size for compressed streams, whose event boundaries are not visible in the bytes.
ENCODED_CHUNK = 256


def cassette_path(
    test_file: Path,
    test_name: str,
    class_name: str | None = None,
    *,
    root: Path | None = None,
    rootdir: Path | None = None,
) -> Path:
    """``<test dir>/cassettes/<test module>/<test name>.yaml`` (``Class.test`` for methods).

    With ``root`` (``[tool.jurybox] cassette_root``) every cassette is in
    one tree instead: ``<root>/<test file relative to rootdir, no .py>/<test name>.yaml``, so
    ``jurybox lint-cassettes <root>`` scans them all. Characters that are not safe in file
    names on every OS (parametrize ids can hold anything) are replaced by ``_``.
    """
    name = f"{class_name}.{test_name}" if class_name else test_name
    safe = re.sub(r"[^A-Za-z0-9._\-\[\]=,+]", "_", name)
    return cassette_folder(test_file, root=root, rootdir=rootdir) / f"{safe}.yaml"


def cassette_folder(test_file: Path, *, root: Path | None = None, rootdir: Path | None = None) -> Path:
    """The folder a test file's cassettes are in (see ``cassette_path``)."""
    if root is None:
        return test_file.parent / "cassettes" / test_file.stem
    try:
        relative = test_file.resolve().relative_to((rootdir or Path.cwd()).resolve())
    except ValueError:  # a test file outside the rootdir: keep it apart by its name
        relative = Path(test_file.name)
    return root / relative.with_suffix("")


# -- chunked replay of streams ----------------------------------------------


def split_stream(body: bytes, content_type: str, encoded: bool) -> list[bytes]:
    """Cut a buffered stream body into the chunks a live server would have sent.

    SSE is cut after each blank line (one event a chunk), NDJSON after each line;
    a compressed body is cut into fixed-size pieces, which the client's
    incremental decoder handles just like network reads.
    """
    if not body:
        return []
    if encoded:
        return [body[i : i + ENCODED_CHUNK] for i in range(0, len(body), ENCODED_CHUNK)]
    separator = rb"\r?\n\r?\n" if content_type.startswith(SSE_TYPES) else rb"\r?\n"
    chunks: list[bytes] = []
    start = 0
    for match in re.finditer(separator, body):
        chunks.append(body[start : match.end()])
        start = match.end()
    if start < len(body):
        chunks.append(body[start:])
    return chunks


@cache
def _stream_class(httpx_module: ModuleType) -> type:
    """A byte stream type of this httpx flavour (httpx or httpx2) that yields pre-cut chunks."""

    class ChunkedStream(httpx_module.SyncByteStream, httpx_module.AsyncByteStream):  # type: ignore[misc,name-defined]
        def __init__(self, chunks: list[bytes]) -> None:
            self._chunks = chunks

        def __iter__(self) -> Iterator[bytes]:
            yield from self._chunks

        async def __aiter__(self) -> Any:
            for chunk in self._chunks:
                yield chunk

    return ChunkedStream


def rechunk(response: Any, httpx_module: ModuleType) -> Any:
    """Give a buffered SSE/NDJSON response (what vcrpy replays) a chunk-by-chunk stream."""
    stream = getattr(response, "stream", None)
    if not isinstance(stream, httpx_module.ByteStream):
        return response
    content_type = response.headers.get("content-type", "").lower()
    if not content_type.startswith(SSE_TYPES + NDJSON_TYPES):
        return response
    body = b"".join(stream)
    encoded = bool(response.headers.get("content-encoding"))
    response.stream = _stream_class(httpx_module)(split_stream(body, content_type, encoded))
    return response


def _httpx_modules() -> list[ModuleType]:
    modules = []
    for name in ("httpx", "httpx2"):
        try:
            modules.append(__import__(name))
        except ImportError:
            continue
    return modules


def _sync_wrapper(inner: Callable[..., Any], module: ModuleType) -> Callable[..., Any]:
    def handle_request(self: Any, request: Any) -> Any:
        return rechunk(inner(self, request), module)

    return handle_request


def _async_wrapper(inner: Callable[..., Any], module: ModuleType) -> Callable[..., Any]:
    async def handle_async_request(self: Any, request: Any) -> Any:
        return rechunk(await inner(self, request), module)

    return handle_async_request


@contextmanager
def chunked_streams() -> Iterator[None]:
    """Wrap the (already vcr-patched) httpx transports so streams replay chunk by chunk."""
    with ExitStack() as stack:
        for module in _httpx_modules():
            sync_current = module.HTTPTransport.handle_request
            async_current = module.AsyncHTTPTransport.handle_async_request
            stack.enter_context(
                mock.patch.object(module.HTTPTransport, "handle_request", _sync_wrapper(sync_current, module))
            )
            stack.enter_context(
                mock.patch.object(
                    module.AsyncHTTPTransport, "handle_async_request", _async_wrapper(async_current, module)
                )
            )
        yield


@contextmanager
def remembered_misses() -> Iterator[list[BaseException]]:
    """Keep every "cannot play this request" exception vcrpy raises while the cassette is open.

    A judge model's provider turns the exception into an ERROR judgment, so the
    test fails on a verdict whose only trace of it is its text; the plugin's
    failure report reads the request and the closest recorded one from here.
    """
    from vcr.errors import CannotOverwriteExistingCassetteException as Miss

    misses: list[BaseException] = []
    original = Miss.__init__

    def remembering(self: BaseException, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        misses.append(self)

    with mock.patch.object(Miss, "__init__", remembering):
        yield misses


# -- network guard -------------------------------------------------------------


class NetworkBlockedError(RuntimeError):
    """A test tried to open a network connection while replaying a cassette in record mode ``none``."""


@dataclass
class NetworkGuard:
    """Refuses every TCP connection except to ``allowed`` hosts; records what was attempted.

    Attributes:
        allowed: ``host`` or ``host:port`` entries that stay reachable.
        attempts: Every blocked address, in order (tests read it to prove replay stayed offline).
    """

    allowed: tuple[str, ...] = ()
    attempts: list[tuple[Any, ...]] = field(default_factory=list)

    def permits(self, address: Any) -> bool:
        if not isinstance(address, tuple):
            return True  # a Unix socket path: not the network
        host, port = str(address[0]), address[1]
        return host in self.allowed or f"{host}:{port}" in self.allowed

    def check(self, address: Any) -> None:
        if self.permits(address):
            return
        self.attempts.append(tuple(address))
        raise NetworkBlockedError(
            f"jurybox blocked a connection to {address[0]}:{address[1]}: record mode 'none' replays "
            "cassettes and never touches the network. Record the missing interaction with "
            "--record-mode once (or new_episodes), or allow the host under [tool.jurybox.cassettes] allowed_hosts."
        )

    @contextmanager
    def active(self) -> Iterator[NetworkGuard]:
        real_connect = socket.socket.connect
        real_connect_ex = socket.socket.connect_ex
        guard = self

        def connect(sock: socket.socket, address: Any) -> None:
            guard.check(address)
            real_connect(sock, address)

        def connect_ex(sock: socket.socket, address: Any) -> int:
            guard.check(address)
            return real_connect_ex(sock, address)

        with (
            mock.patch.object(socket.socket, "connect", connect),
            mock.patch.object(socket.socket, "connect_ex", connect_ex),
        ):
            yield self


# -- the cassette context ------------------------------------------------------


def vcr_record_mode(mode: str) -> str:
    """Our record mode in vcrpy's terms (``rewrite`` is ``all`` that drops what it did not re-record)."""
    return "all" if mode == "rewrite" else mode


@contextmanager
def use_cassette(
    path: Path,
    *,
    record_mode: str,
    settings: CassetteSettings,
    options: Mapping[str, Any] | None = None,
) -> Iterator[Any]:
    """Open ``path`` as a vcrpy cassette with jurybox's matching, redaction and stream replay.

    Args:
        path: The cassette file.
        record_mode: none, once, new_episodes, all or rewrite.
        settings: Redaction and allowed hosts.
        options: Extra ``vcr.use_cassette`` keyword options from the marker (they win).

    Yields:
        The vcrpy Cassette; in mode ``none`` its ``jurybox_guard`` attribute holds the NetworkGuard.
    """
    vcr: Any = require("vcr", extra="cassettes", feature="recording and replaying cassettes", package="vcrpy")

    redactor = Redactor(
        settings.redact_headers,
        settings.redact_fields,
        patterns=settings.redact_patterns,
        pii=settings.pii_for(record_mode),
    )
    recorder = vcr.VCR(
        record_mode=vcr_record_mode(record_mode),
        match_on=LLM_MATCH_ON,
        serializer="jurybox-yaml",
        before_record_request=redactor.before_record_request,
        before_record_response=redactor.before_record_response,
    )
    recorder.register_matcher("json_body", json_body_matcher(ignore_empty=settings.ignore_empty_fields))
    recorder.register_matcher("query", query_matcher(frozenset(settings.ignore_query_params)))
    recorder.register_matcher("path", path_matcher)
    recorder.register_serializer("jurybox-yaml", BoundedYamlSerializer(path))
    recorder.register_persister(BoundedPersister)
    extra = dict(options or {})
    if record_mode == "rewrite":
        extra["drop_unused_requests"] = True
    with ExitStack() as stack:
        cassette = stack.enter_context(recorder.use_cassette(str(path), **extra))
        if record_mode == "rewrite":
            # Saved even when the test makes no request: the cassette then holds exactly this run.
            cassette.dirty = True
        stack.enter_context(chunked_streams())
        cassette.jurybox_misses = stack.enter_context(remembered_misses())
        cassette.jurybox_guard = None
        if record_mode == "none":
            cassette.jurybox_guard = stack.enter_context(NetworkGuard(settings.allowed_hosts).active())
        yield cassette
