"""Two guards in front of the dashboard: reading behind a login (``--read-login``) and a cap on log-in attempts.

With ``read_login`` every page and the API need a logged-in user: a page without one
is sent to ``/login`` (and back after), an API call gets a 401. Only the login page,
the static files and the health check stay open. ``jurybox serve`` turns it on when it
serves beyond this machine, where the labelled-set export (reviewers' names and notes),
prompts and replies would otherwise be readable by anyone who can reach the address.

Log-in attempts are counted per client address: after ``attempts`` wrong tokens within
``window`` seconds the next ones get a 429 saying how long to wait, so a token cannot be
guessed at the speed of the network.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable
from urllib.parse import quote

from fastapi import Request
from fastapi.responses import RedirectResponse, Response

from jurybox.web._common import json_response, login_of, state

# /v1/traces checks its own bearer token (the ingest role): an OTLP exporter has no session to log in with.
OPEN_PATHS = ("/login", "/api/health", "/static/", "/v1/traces")


class LoginLimiter:
    """Wrong log-in tokens per client address, in a sliding window (one per server, shared by its threads)."""

    def __init__(self, attempts: int = 5, window: float = 60.0, *, clients: int = 10_000) -> None:
        self.attempts = attempts
        self.window = window
        self._clients = clients
        self._failures: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def wait(self, client: str, now: float | None = None) -> float:
        """Seconds ``client`` must wait before trying again (0: it may try now)."""
        now = time.monotonic() if now is None else now
        with self._lock:
            recent = self._recent(client, now)
            if len(recent) < self.attempts:
                return 0.0
            return max(0.0, recent[0] + self.window - now)

    def failed(self, client: str, now: float | None = None) -> None:
        """Count a wrong token from ``client``."""
        now = time.monotonic() if now is None else now
        with self._lock:
            if client not in self._failures and len(self._failures) >= self._clients:
                # Bounded memory under a flood of addresses: forget the client seen least recently.
                oldest = min(self._failures, key=lambda key: self._failures[key][-1] if self._failures[key] else 0.0)
                del self._failures[oldest]
            self._recent(client, now).append(now)

    def _recent(self, client: str, now: float) -> deque[float]:
        recent = self._failures.setdefault(client, deque())
        while recent and recent[0] <= now - self.window:
            recent.popleft()
        return recent


async def read_login(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
    """The middleware: with ``read_login`` set, nothing but the open paths is served without a login."""
    if not state(request).settings.read_login or request.url.path.startswith(OPEN_PATHS):
        return await call_next(request)
    if login_of(request) is None:
        if request.url.path.startswith("/api/"):
            return json_response({"error": "Log in to read this store: /login", "status": 401}, status_code=401)
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        return RedirectResponse("/login?next=" + quote(target, safe=""), status_code=303)
    return await call_next(request)
