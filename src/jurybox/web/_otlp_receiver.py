"""``POST /v1/traces``: OTLP/HTTP traces (protobuf or JSON) from holders of an ``ingest`` token.

A request is answered 2xx only after its sampled traces are committed to the store's queue,
so a server killed a moment later loses nothing it acknowledged; the requests that arrive
while one transaction is written are written together in the next (``_otlp_commit``). A body
too big is 413, one that is not OTLP is 400, a full queue is 429 with Retry-After, a missing
or wrong token 401/403: each counted, none a 500. The spans are redacted (the cassettes'
rules) before they are stored.
"""

from __future__ import annotations

import functools
import hashlib
import json
import time
from collections.abc import Mapping
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Receive, Scope, Send

from jurybox.store import INGEST_ROLE, Store, User
from jurybox.traces import (
    ProtobufUnavailableError,
    ReadStats,
    Span,
    by_trace,
    span_to_dict,
    spans_from_json_bytes,
    spans_from_proto_bytes,
)
from jurybox.web._otlp_commit import Fragment, GroupCommit
from jurybox.web._otlp_settings import RETRY_AFTER_SECONDS, OtlpCounters, OtlpSettings

router = APIRouter()
TOKEN_CACHE_SECONDS = 30.0
"""How long a token's user is remembered: a disabled ingest user is refused within this."""
PROTOBUF = "application/x-protobuf"
JSON = "application/json"
TRACES_PATH = "/v1/traces"
INLINE_BODY_BYTES = 64 * 1024
"""A body up to this size is parsed in the event loop's thread; a bigger one in the thread pool."""


def _answer(status: int, message: str, counters: OtlpCounters, counter: str, *, protobuf: bool) -> Response:
    counters.add(counter)
    headers = {"Retry-After": str(RETRY_AFTER_SECONDS)} if status in (429, 503) else {}
    if protobuf:  # an OTLP client reads the error as text when it cannot read it as a Status message
        return Response(message, status_code=status, media_type="text/plain", headers=headers)
    return Response(json.dumps({"error": message}), status_code=status, media_type=JSON, headers=headers)


class OtlpFastPath:
    """ASGI middleware: ``POST /v1/traces`` answered before the dashboard's routing and page middleware.

    A collector posts many small requests a second; matching the path against every dashboard
    route and passing through the login middleware (which lets this path through anyway) cost
    more CPU than reading the body. An error goes to the app's own exception handlers, as it
    would through the router (a store that is down is a 503, never a bare 500).
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != TRACES_PATH or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive)
        try:
            response = await receive_traces(request)
        except Exception as exc:
            handler = _handler_for(request.app.exception_handlers, exc)
            if handler is None:
                raise
            response = await handler(request, exc)
        await response(scope, receive, send)


def _handler_for(handlers: Mapping[Any, Any], exc: Exception) -> Any:
    for kind in type(exc).__mro__:
        if kind in handlers:
            return handlers[kind]
    return None


@router.post(TRACES_PATH, include_in_schema=False)
async def receive_traces(request: Request) -> Response:
    settings: OtlpSettings | None = getattr(request.app.state, "otlp", None)
    counters: OtlpCounters = request.app.state.otlp_counters
    if settings is None:
        return Response("online evaluation is off: start the server with jurybox serve --otlp", status_code=404)
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    protobuf = kind == PROTOBUF
    if kind not in (PROTOBUF, JSON):
        return _answer(415, f"send {PROTOBUF} or {JSON}", counters, "unsupported", protobuf=False)
    store: Store = request.app.state.jurybox.access.store()
    token = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
    user = await _user_of(request, store, token) if token else None
    if user is None:
        return _answer(
            401,
            "a valid ingest token is needed (Authorization: Bearer TOKEN)",
            counters,
            "unauthorized",
            protobuf=protobuf,
        )
    if not user.may(INGEST_ROLE):
        return _answer(403, f"user {user.name!r} is not an ingest user", counters, "forbidden", protobuf=protobuf)
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > settings.max_body_bytes:
        return _answer(413, f"a body over {settings.max_body_bytes:,} bytes", counters, "oversized", protobuf=protobuf)
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > settings.max_body_bytes:
            return _answer(
                413, f"a body over {settings.max_body_bytes:,} bytes", counters, "oversized", protobuf=protobuf
            )
    stats = ReadStats()
    try:
        # Parsing and redacting in the event loop's thread when the body is small: a hop to the
        # thread pool and back costs more than a one-trace body, and the loop is one core anyway.
        if len(body) <= INLINE_BODY_BYTES:
            fragments = _decode(bytes(body), protobuf, stats, settings, counters)
        else:
            fragments = await run_in_threadpool(_decode, bytes(body), protobuf, stats, settings, counters)
    except ProtobufUnavailableError as exc:
        return _answer(415, str(exc), counters, "unsupported", protobuf=False)
    except ValueError as exc:
        return _answer(400, str(exc), counters, "malformed", protobuf=protobuf)
    if stats.skipped:
        counters.add("spans_skipped", stats.skipped_total)
    commit = _group_commit(request, store, settings)
    stored = await commit.submit(fragments) if fragments else True
    if not stored:
        return _answer(429, "the trace queue is full; send again later", counters, "throttled", protobuf=protobuf)
    counters.add("accepted_requests")
    counters.add("accepted_traces", len(fragments))
    if protobuf:
        return Response(b"", media_type=PROTOBUF)  # an empty ExportTraceServiceResponse: all accepted
    return Response("{}", media_type=JSON)


def _decode(
    body: bytes, protobuf: bool, stats: ReadStats, settings: OtlpSettings, counters: OtlpCounters
) -> list[Fragment]:
    reader = spans_from_proto_bytes if protobuf else spans_from_json_bytes
    return _fragments(reader(body, stats, "request body"), settings, counters)


def _group_commit(request: Request, store: Store, settings: OtlpSettings) -> GroupCommit:
    """The app's group commit into ``store`` (made on the first request: the store may change)."""
    state = request.app.state
    found: tuple[Store, GroupCommit] | None = getattr(state, "otlp_commit", None)
    if found is None or found[0] is not store:
        commit = GroupCommit(functools.partial(store.trace_queue.enqueue_groups, max_queued=settings.max_queued))
        found = state.otlp_commit = (store, commit)
    return found[1]


async def _user_of(request: Request, store: Store, token: str) -> User | None:
    """The token's user, remembered for ``TOKEN_CACHE_SECONDS`` (a sender posts many times a second)."""
    cache: dict[str, tuple[float, User | None]] = request.app.state.otlp_tokens
    key = hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()
    found = cache.get(key)
    moment = time.monotonic()
    if found is not None and moment - found[0] < TOKEN_CACHE_SECONDS:
        return found[1]
    user = await run_in_threadpool(store.users.user_for_token, token)
    if len(cache) > 1_000:  # tokens tried at random must not grow it without bound
        cache.clear()
    cache[key] = (moment, user)
    return user


def _fragments(spans: list[Span], settings: OtlpSettings, counters: OtlpCounters) -> list[Fragment]:
    """(trace id, holds its root, redacted spans JSON) for each trace the rate keeps."""
    fragments = []
    for trace_id, trace in by_trace(spans).items():
        if not settings.sampler.keeps_id(trace_id):
            counters.add("sampled_out")
            continue
        text = json.dumps([span_to_dict(span) for span in trace], ensure_ascii=False, default=str)
        if settings.redact is not None:
            text = settings.redact(text)
        fragments.append((trace_id, any(span.parent_id is None for span in trace), text))
    return fragments
