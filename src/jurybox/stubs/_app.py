"""The stub's ASGI application: routing, replies, latency, faults, replay and the request log."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any

from jurybox.core import read_json
from jurybox.stubs._cassettes import RecordedResponse
from jurybox.stubs._replies import Fault, Provider, ReplySource, StubReply, StubRequest, coerce_reply
from jurybox.stubs._wire import WireResponse, error_body, json_response, render, validate_request
from jurybox.stubs._wire_more import generate_response, responses_response, route, validate_more

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

STATS_PATH = "/_stub/stats"


class StubState:
    """Everything a stub server knows, shared between the server thread and the test thread.

    Mutations from the test thread (``fail``, ``drop``...) and reads from the server
    thread go through one lock, so a fault queued before a request is always seen by it.
    """

    def __init__(
        self,
        provider: Provider,
        reply: ReplySource,
        *,
        latency: float = 0.0,
        replay: Sequence[RecordedResponse] | None = None,
    ) -> None:
        self.provider = provider
        self.reply = reply
        self.latency = latency
        self.replay = list(replay) if replay is not None else None
        self.requests: list[StubRequest] = []
        self.keep_requests = True
        """False for a stub serving a load run on its own: it counts requests instead of keeping each one."""
        self.received = 0
        self.connections = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.open_transports: dict[tuple[str, int], asyncio.Transport] = {}
        self._faults: list[list[Any]] = []  # [Fault, remaining count]
        self._reply_position = 0
        self._replay_position = 0
        self._lock = threading.Lock()

    # -------------------------------------------------------------- configuration (test thread)

    def add_fault(self, fault: Fault, times: int) -> None:
        if times < 1:
            raise ValueError(f"times must be at least 1, got {times}")
        with self._lock:
            self._faults.append([fault, times])

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    # -------------------------------------------------------------- per request (server thread)

    def take_fault(self) -> Fault | None:
        with self._lock:
            if not self._faults:
                return None
            entry = self._faults[0]
            entry[1] -= 1
            if entry[1] == 0:
                self._faults.pop(0)
            fault: Fault = entry[0]
            return fault

    def next_reply(self, body: dict[str, Any]) -> StubReply | None:
        """The reply for this request, or None when a reply list ran out (never a silent repeat)."""
        source = self.reply
        if callable(source):
            return coerce_reply(source(body))
        if isinstance(source, str | StubReply):
            return coerce_reply(source)
        with self._lock:
            if self._reply_position >= len(source):
                return None
            value = source[self._reply_position]
            self._reply_position += 1
        return coerce_reply(value)

    def next_recorded(self) -> RecordedResponse | None:
        assert self.replay is not None
        with self._lock:
            if self._replay_position >= len(self.replay):
                return None
            recorded = self.replay[self._replay_position]
            self._replay_position += 1
            return recorded

    def stats(self) -> dict[str, int]:
        """Counters: requests received, TCP connections accepted, most requests in flight at once."""
        with self._lock:
            requests = self.received
        return {"requests": requests, "connections": self.connections, "max_in_flight": self.max_in_flight}

    def log(self, request: StubRequest) -> None:
        with self._lock:
            self.received += 1
            if self.keep_requests:
                self.requests.append(request)


class StubApp:
    """An ASGI app answering like ``state.provider`` would."""

    def __init__(self, state: StubState) -> None:
        self.state = state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan and websockets are not part of any provider API we stub
            return
        raw = await _read_body(receive)
        if scope["path"] == STATS_PATH:
            # Counters for a stub running in another process (python -m jurybox.stubs); not logged as a request.
            await _send(send, json_response(200, self.state.stats()))
            return
        try:
            body: Any = read_json(raw) if raw else None
        except ValueError:
            body = None
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        state = self.state
        state.log(StubRequest(scope["method"], scope["path"], headers, body, raw))
        # Only the server thread's event loop touches these, so no lock is needed.
        state.in_flight += 1
        state.max_in_flight = max(state.max_in_flight, state.in_flight)
        try:
            await self._respond(scope, send, body)
        finally:
            state.in_flight -= 1

    async def _respond(self, scope: Scope, send: Send, body: Any) -> None:
        state = self.state

        fault = state.take_fault()
        delay = state.latency + (fault.delay if fault is not None and fault.kind == "slow" else 0.0)
        if delay > 0:
            await asyncio.sleep(delay)
        if fault is not None and fault.kind == "drop":
            self._abort(scope)
            return
        response = self._fault_response(fault) if fault is not None and fault.kind == "status" else None
        if response is None:
            response = self._answer(scope, body)
        if fault is not None and fault.kind == "drop_mid_body":
            await self._send_then_drop(scope, send, response)
            return
        await _send(send, response)

    def _answer(self, scope: Scope, body: Any) -> WireResponse:
        state = self.state
        if state.replay is not None:
            recorded = state.next_recorded()
            if recorded is None:
                message = f"stub replay ran out of recorded responses after {len(state.replay)}"
                return json_response(500, error_body(state.provider, 500, message))
            return WireResponse(recorded.status, list(recorded.headers), [recorded.body])
        path: str = scope["path"]
        api = route(state.provider, scope["method"], path)
        if api is None:
            message = f"stub {state.provider} server has no route {scope['method']} {path}"
            return json_response(404, error_body(state.provider, 404, message))
        more = api in ("responses", "generate")
        problem = validate_more(api, body) if more else validate_request(state.provider, body)
        if problem is not None:
            return json_response(400, error_body(state.provider, 400, problem))
        try:
            reply = state.next_reply(body)
        except Exception as error:  # a user reply function failed: say so in the reply, do not hang
            return json_response(500, error_body(state.provider, 500, f"stub reply function raised {error!r}"))
        if reply is None:
            return json_response(500, error_body(state.provider, 500, "stub ran out of replies"))
        if api == "responses":
            return responses_response(body, reply)
        if api == "generate":
            return generate_response(body, reply)
        return render(state.provider, body, reply)

    def _fault_response(self, fault: Fault) -> WireResponse:
        headers = dict(fault.headers)
        if fault.retry_after is not None:
            headers["retry-after"] = str(fault.retry_after)
        body = fault.body
        if body is None:
            body = error_body(self.state.provider, fault.status, f"stub injected HTTP {fault.status}")
        if isinstance(body, bytes | str):
            data = body.encode() if isinstance(body, str) else body
            return WireResponse(fault.status, [("content-type", "application/json"), *headers.items()], [data])
        return json_response(fault.status, dict(body), headers)

    def _abort(self, scope: Scope) -> None:
        client = scope.get("client")
        transport = self.state.open_transports.get(tuple(client)) if client else None
        if transport is None:
            raise RuntimeError("stub cannot find the connection to drop")
        transport.abort()

    async def _send_then_drop(self, scope: Scope, send: Send, response: WireResponse) -> None:
        body = response.body
        headers = [*response.headers, ("content-length", str(len(body)))]
        await send(
            {
                "type": "http.response.start",
                "status": response.status,
                "headers": [(k.encode(), v.encode()) for k, v in headers],
            }
        )
        await send({"type": "http.response.body", "body": body[: len(body) // 2], "more_body": True})
        self._abort(scope)


async def _read_body(receive: Receive) -> bytes:
    parts: list[bytes] = []
    while True:
        message = await receive()
        parts.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(parts)


async def _send(send: Send, response: WireResponse) -> None:
    headers = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in response.headers]
    if len(response.chunks) == 1:
        headers.append((b"content-length", str(len(response.chunks[0])).encode()))
    await send({"type": "http.response.start", "status": response.status, "headers": headers})
    # Several chunks go out as separate writes (chunked encoding), as a streaming server sends them.
    for index, chunk in enumerate(response.chunks):
        await send({"type": "http.response.body", "body": chunk, "more_body": index < len(response.chunks) - 1})
    if not response.chunks:
        await send({"type": "http.response.body", "body": b"", "more_body": False})
