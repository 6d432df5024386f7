"""``POST /v1/traces``: OTLP/HTTP traces (protobuf or JSON) from holders of an ``ingest`` token.

A request is answered 2xx only after its sampled traces are in the store's queue, so a
server killed a moment later loses nothing it acknowledged. A body too big is 413, one that
is not OTLP is 400, a full queue is 429 with Retry-After, a missing or wrong token 401/403:
each counted, none a 500. The spans are redacted (the cassettes' rules) before they are stored.
"""

from __future__ import annotations

import hashlib
import json
import time

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

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
from jurybox.web._otlp_settings import RETRY_AFTER_SECONDS, OtlpCounters, OtlpSettings

router = APIRouter()
TOKEN_CACHE_SECONDS = 30.0
"""How long a token's user is remembered: a disabled ingest user is refused within this."""
PROTOBUF = "application/x-protobuf"
JSON = "application/json"


def _answer(status: int, message: str, counters: OtlpCounters, counter: str, *, protobuf: bool) -> Response:
    counters.add(counter)
    headers = {"Retry-After": str(RETRY_AFTER_SECONDS)} if status in (429, 503) else {}
    if protobuf:  # an OTLP client reads the error as text when it cannot read it as a Status message
        return Response(message, status_code=status, media_type="text/plain", headers=headers)
    return Response(json.dumps({"error": message}), status_code=status, media_type=JSON, headers=headers)


@router.post("/v1/traces", include_in_schema=False)
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
        reader = spans_from_proto_bytes if protobuf else spans_from_json_bytes
        spans = await run_in_threadpool(reader, bytes(body), stats, "request body")
    except ProtobufUnavailableError as exc:
        return _answer(415, str(exc), counters, "unsupported", protobuf=False)
    except ValueError as exc:
        return _answer(400, str(exc), counters, "malformed", protobuf=protobuf)
    if stats.skipped:
        counters.add("spans_skipped", stats.skipped_total)
    fragments = _fragments(spans, settings, counters)
    stored = await run_in_threadpool(store.trace_queue.enqueue, fragments, max_queued=settings.max_queued)
    if not stored:
        return _answer(429, "the trace queue is full; send again later", counters, "throttled", protobuf=protobuf)
    counters.add("accepted_requests")
    counters.add("accepted_traces", len(fragments))
    if protobuf:
        return Response(b"", media_type=PROTOBUF)  # an empty ExportTraceServiceResponse: all accepted
    return Response("{}", media_type=JSON)


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


def _fragments(spans: list[Span], settings: OtlpSettings, counters: OtlpCounters) -> list[tuple[str, bool, str]]:
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
