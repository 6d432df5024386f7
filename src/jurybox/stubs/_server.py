"""StubServer: a provider stub on 127.0.0.1, run by uvicorn in a background thread or its own process."""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from jurybox.stubs._app import StubApp, StubState
from jurybox.stubs._cassettes import RecordedResponse, load_cassette
from jurybox.stubs._replies import PROVIDERS, Fault, Provider, ReplySource, StubRequest

_START_TIMEOUT = 10.0

# httptools' C parser and uvloop's event loop (the stubs extra installs both where they build) cut
# the stub's CPU per request by about 40%: a stub sharing the machine with the client under test
# takes less of it from the client. Without them the stub runs on h11 and asyncio, as it always did.
try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as _HttpProtocol
except ImportError:  # httptools is not installed
    _HttpProtocol = H11Protocol  # type: ignore[assignment,misc]
_new_event_loop: Callable[[], asyncio.AbstractEventLoop]
try:
    import uvloop

    _new_event_loop = uvloop.new_event_loop
except ImportError:  # uvloop is not installed (or not available on this platform)
    _new_event_loop = asyncio.new_event_loop


def _protocol_class(state: StubState) -> type[_HttpProtocol]:
    """uvicorn's HTTP protocol, counting every TCP connection it accepts and keeping it droppable."""

    class CountingProtocol(_HttpProtocol):
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            state.connections += 1
            sock = transport.get_extra_info("socket")
            if sock is not None:
                # asyncio sets TCP_NODELAY only on sockets created with proto=IPPROTO_TCP; without it the
                # header and body writes of a reply meet the client's delayed ACK and every reply waits ~40 ms.
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            peer = transport.get_extra_info("peername")
            if peer:
                state.open_transports[(peer[0], peer[1])] = transport
            super().connection_made(transport)

        def connection_lost(self, exc: Exception | None) -> None:
            if self.client:
                state.open_transports.pop(self.client, None)
            super().connection_lost(exc)

    return CountingProtocol


def _serve(server: uvicorn.Server, sock: socket.socket) -> None:
    """Run ``server`` on ``sock`` in this thread until it exits, on the fastest event loop installed."""
    with asyncio.Runner(loop_factory=_new_event_loop) as runner:
        runner.run(server.serve(sockets=[sock]))


def _listen(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    # Listen before anyone learns the URL, so an early client queues instead of being refused.
    sock.listen(4096)
    return sock


class StubServer:
    """A stub LLM provider speaking the real wire protocol, on 127.0.0.1.

    Example:
        >>> with StubServer("openai", reply="PASS", latency=0.05) as stub:  # doctest: +SKIP
        ...     model = get_model("openai:gpt-4o-mini", base_url=stub.base_url, api_key="test")

    Args:
        provider: ``openai`` (/v1/chat/completions and the Responses API /v1/responses),
            ``anthropic`` (/v1/messages) or ``ollama`` (/api/chat and /api/generate).
        reply: A fixed reply, a list used in order (running out is an HTTP 500, never a
            repeat), or a function of the parsed JSON request body (``load_script`` makes
            one from a YAML file). A reply is a string or a ``StubReply`` (text, tool calls,
            finish reason, token counts).
        latency: Seconds to wait before answering each request (requests wait concurrently).
        replay: A vcrpy cassette (path) or recorded responses; each request then gets the next
            recorded response byte for byte instead of a generated reply.
        interactions: With ``replay``, the interaction indexes to serve, in order (default: all).
        port: TCP port; 0 picks a free one.

    Attributes:
        requests: Every request received (``StubRequest``: method, path, headers, parsed body).
        connections: How many TCP connections the server accepted.
        max_in_flight: The most requests handled at the same moment (proves nothing serializes).
        base_url: The URL to give the provider's client (``.../v1`` for OpenAI, the root otherwise).
    """

    def __init__(
        self,
        provider: Provider = "openai",
        reply: ReplySource = "ok",
        *,
        latency: float = 0.0,
        replay: str | Path | Sequence[RecordedResponse] | None = None,
        interactions: Sequence[int] | None = None,
        port: int = 0,
    ) -> None:
        if provider not in PROVIDERS:
            raise ValueError(f"unknown stub provider {provider!r}; choose one of {', '.join(PROVIDERS)}")
        recorded: list[RecordedResponse] | None = None
        if replay is not None:
            recorded = load_cassette(replay) if isinstance(replay, str | Path) else list(replay)
            if interactions is not None:
                recorded = [recorded[i] for i in interactions]
        self.provider: Provider = provider
        self.state = StubState(provider, reply, latency=latency, replay=recorded)
        self._port = port
        self._socket: socket.socket | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    # -------------------------------------------------------------- facts

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        if self._socket is None:
            raise RuntimeError("the stub server is not running; use it as a context manager or call start()")
        host, port = self._socket.getsockname()[:2]
        return f"http://{host}:{port}"

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1" if self.provider == "openai" else self.url

    @property
    def requests(self) -> list[StubRequest]:
        return self.state.requests

    @property
    def connections(self) -> int:
        return self.state.connections

    @property
    def max_in_flight(self) -> int:
        """The most requests the server was handling at the same moment."""
        return self.state.max_in_flight

    # -------------------------------------------------------------- faults

    def fail(
        self,
        status: int,
        *,
        body: Mapping[str, Any] | str | bytes | None = None,
        retry_after: float | str | None = None,
        headers: Mapping[str, str] | None = None,
        times: int = 1,
    ) -> None:
        """Answer the next ``times`` requests with HTTP ``status`` (body None -> the provider's error shape)."""
        fault = Fault("status", status=status, body=body, retry_after=retry_after, headers=dict(headers or {}))
        self.state.add_fault(fault, times)

    def drop(self, *, times: int = 1, mid_body: bool = False) -> None:
        """Close the connection of the next ``times`` requests without a reply (or halfway through the body)."""
        self.state.add_fault(Fault("drop_mid_body" if mid_body else "drop"), times)

    def slow(self, delay: float, *, times: int = 1) -> None:
        """Delay the next ``times`` replies by ``delay`` extra seconds."""
        self.state.add_fault(Fault("slow", delay=delay), times)

    def clear_faults(self) -> None:
        self.state.clear_faults()

    # -------------------------------------------------------------- life cycle

    def _make_server(self) -> uvicorn.Server:
        config = uvicorn.Config(
            StubApp(self.state),
            http=_protocol_class(self.state),
            interface="asgi3",
            lifespan="off",
            ws="none",
            proxy_headers=False,
            server_header=False,
            date_header=False,
            access_log=False,
            log_config=None,
            log_level=logging.CRITICAL,
            backlog=4096,
            timeout_keep_alive=30,
        )
        return uvicorn.Server(config)

    def start(self) -> StubServer:
        """Start serving in a background thread; returns once the server accepts connections."""
        if self._thread is not None:
            raise RuntimeError("the stub server is already running")
        self._socket = _listen(self._port)
        self._server = server = self._make_server()
        sock = self._socket
        self._thread = threading.Thread(
            target=_serve, args=(server, sock), name=f"jurybox-stub-{self.provider}", daemon=True
        )
        self._thread.start()
        waited = 0.0
        while not server.started:
            if not self._thread.is_alive() or waited > _START_TIMEOUT:
                raise RuntimeError(f"the {self.provider} stub server did not start")
            threading.Event().wait(0.01)
            waited += 0.01
        return self

    def stop(self) -> None:
        """Stop serving and wait for the thread to finish."""
        if self._server is not None:
            self._server.should_exit = True
            # A stub does not drain: slow replies still pending are cut off, as a crashing server would.
            self._server.force_exit = True
        if self._thread is not None:
            self._thread.join(timeout=_START_TIMEOUT)
        if self._socket is not None:
            self._socket.close()
        self._thread = self._server = None

    def serve_forever(self, *, on_ready: Callable[[StubServer], None] | None = None) -> None:
        """Serve in this thread until interrupted (the ``python -m jurybox.stubs`` mode)."""
        self._socket = _listen(self._port)
        server = self._make_server()
        if on_ready is not None:
            on_ready(self)
        try:
            _serve(server, self._socket)
        finally:
            self._socket.close()

    def __enter__(self) -> StubServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        where = self.url if self._socket is not None else "stopped"
        return f"StubServer({self.provider!r}, {where}, requests={len(self.requests)})"
