"""The dashboard's FastAPI app: pages, their JSON twins under ``/api``, static assets, errors as words.

One router per page (``_page_*.py``). Reading is open; what writes (reviews
today; cases and runs next) needs a login (``_auth.py``: session cookie, CSRF
token per form, a role per action) and is written to the audit log.
"""

from __future__ import annotations

import gc
import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from jurybox import __version__
from jurybox.store import StoreAccessError
from jurybox.web import (
    _auth,
    _otlp_receiver,
    _page_authoring,
    _page_calibrations,
    _page_case,
    _page_compare,
    _page_experiments,
    _page_launch,
    _page_lessons,
    _page_reviews,
    _page_run,
    _page_runs,
    _page_trends,
)
from jurybox.web._access import RETRY_SECONDS, StoreAccess, StoreUnavailableError, explain_database_error
from jurybox.web._common import (
    HERE,
    WebSettings,
    WebState,
    compile_templates,
    json_response,
    make_templates,
    render,
    state,
)
from jurybox.web._login_guard import LoginLimiter, read_login
from jurybox.web._otlp_receiver import OtlpFastPath
from jurybox.web._otlp_settings import OtlpCounters, OtlpSettings
from jurybox.web._otlp_worker import OtlpWorker
from jurybox.web._page_launch import stop_launched_runs
from jurybox.web._security import SecurityHeaders

logger = logging.getLogger("jurybox.web")

ROUTERS = (
    _page_runs.router,
    _page_run.router,
    _page_case.router,
    _page_compare.router,
    _page_experiments.router,
    _page_trends.router,
    _page_lessons.router,
    _page_calibrations.router,
    _page_reviews.router,
    _page_authoring.router,
    _page_launch.router,
    _auth.router,
    _otlp_receiver.router,
)


def create_app(
    store_url: str | None = None, *, settings: WebSettings | None = None, otlp: OtlpSettings | None = None
) -> FastAPI:
    """The dashboard as an ASGI app on the store at ``store_url``.

    The store is opened on the first request (an older schema is migrated as
    the CLI does; a newer one, a missing file or a database that is down shows
    a page saying so, and later requests try again).

    Args:
        store_url: The store; None means ``JURYBOX_STORE`` or ``sqlite:///.jurybox/jurybox.db``.
        settings: Everything else (refresh interval, regression policy, lock timeout).
        otlp: Online evaluation (``jurybox serve --otlp``): ``POST /v1/traces`` takes traces and a
            background worker judges them; None (the default) leaves it off.
    """
    settings = settings or WebSettings()
    if store_url is not None:
        settings.store_url = store_url
    access = StoreAccess(settings.store_url, busy_timeout=settings.busy_timeout)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        worker = OtlpWorker(access, otlp, app.state.otlp_counters) if otlp is not None and otlp.worker else None
        if worker is not None:
            worker.start()
        # Compiled on first use, a page's templates cost its first load some 100 ms: compile them now, before
        # serving (`jurybox serve`) or beside the first requests (Jinja's template cache is thread-safe).
        templates = app.state.jurybox.templates
        if settings.compile_templates:
            compile_templates(templates)
        else:
            threading.Thread(target=compile_templates, args=(templates,), name="jurybox-templates", daemon=True).start()
        if settings.freeze_startup:
            # What start-up made (some 700 modules, the app, the templates) lives as long as the server: out of
            # the collector's sight, a full collection no longer walks it. One used to land in whichever request
            # came after a big one (a 1,000-run trend's first load after a comparison: 135 ms of its 220).
            gc.collect()
            gc.freeze()
        yield
        if worker is not None:
            worker.stop()
        stop_launched_runs(app)  # runs started from the browser stop as on Ctrl-C: resumable
        access.close()

    app = FastAPI(
        title="jurybox dashboard",
        version=__version__,
        description="Runs, cases with every judgment, comparisons, trends and lessons of a jurybox store.",
        # The interactive docs load scripts from a CDN, which the policy (and no-internet use) forbids;
        # the schema itself is served and docs/web.md documents the API.
        docs_url=None,
        redoc_url=None,
        openapi_url="/api/openapi.json",
        lifespan=lifespan,
    )
    app.state.jurybox = WebState(settings, access, make_templates())
    app.state.otlp = otlp
    app.state.otlp_counters = OtlpCounters()
    app.state.otlp_tokens = {}
    app.state.login_limiter = LoginLimiter(settings.login_attempts, settings.login_window)
    app.middleware("http")(read_login)
    app.add_middleware(OtlpFastPath)  # inside the security headers, outside the login check and the routing
    app.add_middleware(SecurityHeaders)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    for router in ROUTERS:
        app.include_router(router)

    @app.get("/api/health")
    def health(request: Request) -> Response:
        """Whether the store can be read: ``{"ok": true, "store": URL}`` or 503 with the reason."""
        state(request).access.store()
        return json_response({"ok": True, "store": state(request).access.shown_url, "version": __version__})

    @app.get("/api/otlp")
    def otlp_counts(request: Request) -> Response:
        """What online evaluation did: requests accepted, traces queued, judged, refused and why."""
        enabled = request.app.state.otlp is not None
        queued = state(request).access.store().trace_queue.size() if enabled else 0
        counts = request.app.state.otlp_counters.snapshot()
        return json_response({"enabled": enabled, "queued": queued, "counts": counts})

    _install_error_pages(app)
    return app


def _wants_json(request: Request) -> bool:
    return request.url.path.startswith("/api/")


def _error(request: Request, status_code: int, message: str, *, retry: bool = False, title: str = "") -> Response:
    if _wants_json(request):
        response = json_response({"error": message, "status": status_code}, status_code=status_code)
    else:
        data = {"error": message, "status": status_code, "retry": retry, "retry_seconds": RETRY_SECONDS}
        response = render(request, "error.html", data, title=title or "Error", status_code=status_code)
    if retry:
        response.headers["Retry-After"] = str(RETRY_SECONDS)
    return response


def _install_error_pages(app: FastAPI) -> None:
    """Every failure becomes a page (or JSON) in words; a stack trace only ever reaches the server log."""

    @app.exception_handler(StoreUnavailableError)
    async def store_unavailable(request: Request, exc: StoreUnavailableError) -> Response:
        return _error(request, 503, exc.message, retry=exc.retry, title="Store unavailable")

    @app.exception_handler(StoreAccessError)
    async def database_error(request: Request, exc: StoreAccessError) -> Response:
        # Locked, down, connection lost: a retry may work. Any other database error is a bug: a 500.
        logger.warning("store read failed: %s", exc)
        problem = explain_database_error(exc, state(request).access.shown_url)
        return _error(request, 503, problem.message, retry=True, title="Store unavailable")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        message = exc.detail if isinstance(exc.detail, str) else "This page does not exist."
        if exc.status_code == 404 and message == "Not Found":
            message = f"There is no page at {request.url.path}."
        response = _error(request, exc.status_code, message, title="Not found" if exc.status_code == 404 else "Error")
        response.headers.update(exc.headers or {})  # Retry-After of a refused log-in
        return response

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> Response:
        problems = "; ".join(_problem(error) for error in exc.errors())
        return _error(request, 400, f"Bad request: {problems}.", title="Bad request")

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> Response:
        logger.exception("error serving %s", request.url.path)
        return _error(
            request,
            500,
            f"Something went wrong while building this page ({type(exc).__name__}). "
            "The server log has the details; please report it.",
            title="Error",
        )


def _problem(error: dict[str, Any]) -> str:
    where = ".".join(str(part) for part in error.get("loc", ()) if part not in ("query", "path"))
    return f"{where or 'request'}: {error.get('msg', 'invalid')}"
