"""What every page shares: the app's settings, rendering a page or its JSON twin, paging, run summaries."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, TypeVar

from fastapi import HTTPException, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.templating import Jinja2Templates
from jinja2 import Environment, FileSystemLoader, StrictUndefined

from jurybox import __version__
from jurybox.store import Login, Paged, RegressionPolicy, RunInfo, Store, StoreBrowser
from jurybox.web import _format as fmt
from jurybox.web import _urls as urls
from jurybox.web._access import StoreAccess
from jurybox.web._trace_link import valid_trace_url

T = TypeVar("T")

HERE = Path(__file__).parent
PER_PAGE = 50
MAX_PER_PAGE = 200

PageNumber = Annotated[int, Query(ge=1, le=1_000_000, description="1-based page number.")]
PerPage = Annotated[int, Query(ge=1, le=MAX_PER_PAGE, description="Rows per page.")]


@dataclass
class WebSettings:
    """How the dashboard was started.

    Attributes:
        store_url: The store URL as given (None: ``JURYBOX_STORE`` or the default file).
        read_only: Always True in this version; part 2 adds writes behind a login.
        policy: Thresholds and window the regression verdicts use (the store's default policy).
        refresh_seconds: How often a page of a running run refreshes itself.
        busy_timeout: Seconds a read waits for a SQLite lock before the page says the store is busy.
        read_login: Every page and the API need a login, not only writes (``jurybox serve --read-login``).
        login_attempts: Wrong log-in tokens a client may send within ``login_window`` seconds.
        login_window: Seconds over which wrong log-in tokens are counted.
        trace_url: Where a trace viewer shows a trace (``{trace_id}``, ``{span_id}`` filled in): a judgment
            of a production trace links there (``jurybox serve --trace-url``); None: the id alone.
        compile_templates: Compile every page's template when the app starts (``jurybox serve``), so no
            page's first load pays for it (some 100 ms each); otherwise they compile in a thread beside
            the first requests.
        freeze_startup: Once started, move every object start-up made into the collector's permanent
            generation (``gc.freeze``, ``jurybox serve``), so a full collection during a request walks only
            what requests made (it took 135 ms of a 1,000-run trend's first load after a comparison).
        compare_inline_cases: A comparison of at least this many cases (both runs together) not kept yet
            shows its page first and its counts and statistics when computed (joining two 100,000-case
            runs takes seconds); smaller ones are computed with the page. The same size from which
            ``finish_run`` keeps a run's comparison with its baseline (``KEEP_AT_FINISH``).
    """

    store_url: str | None = None
    read_only: bool = True
    policy: RegressionPolicy = field(default_factory=RegressionPolicy)
    refresh_seconds: int = 5
    busy_timeout: float = 5.0
    read_login: bool = False
    login_attempts: int = 5
    login_window: float = 60.0
    trace_url: str | None = None
    compile_templates: bool = False
    freeze_startup: bool = False
    compare_inline_cases: int = 40_000

    def __post_init__(self) -> None:
        if self.trace_url is not None:
            valid_trace_url(self.trace_url)


@dataclass
class WebState:
    """Kept on ``app.state.jurybox``: the settings, the store access and the templates."""

    settings: WebSettings
    access: StoreAccess
    templates: Jinja2Templates


def make_templates() -> Jinja2Templates:
    """Jinja2 with autoescaping on for every template: store text is always escaped."""
    env = Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=True,  # every template, whatever its name: nothing from the store is ever markup
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(fmt.FILTERS)
    env.globals["url"] = urls.URLS
    env.globals["version"] = __version__
    return Jinja2Templates(env=env)


def compile_templates(templates: Jinja2Templates) -> None:
    """Load (compile) every template into the environment's cache."""
    for name in templates.env.list_templates(extensions=["html"]):
        templates.env.get_template(name)


def state(request: Request) -> WebState:
    found: WebState = request.app.state.jurybox
    return found


def browser(request: Request) -> StoreBrowser:
    return state(request).access.browser()


def store(request: Request) -> Store:
    return state(request).access.store()


SESSION_COOKIE = "jurybox_session"
_UNSET = object()


def login_of(request: Request) -> Login | None:
    """The request's live login, or None (read from the store once per request)."""
    cached = getattr(request.state, "jurybox_login", _UNSET)
    if cached is not _UNSET:
        return cached  # type: ignore[return-value]
    session_id = request.cookies.get(SESSION_COOKIE)
    login = store(request).users.login(session_id) if session_id else None
    request.state.jurybox_login = login
    return login


def _page_login(request: Request) -> Login | None:
    if not request.cookies.get(SESSION_COOKIE):
        return None
    try:
        return login_of(request)
    except Exception:  # an error page about the store itself: shown without the login line
        return None


def is_fragment(request: Request, target: str) -> bool:
    """True when htmx asks for the part of the page with id ``target`` only."""
    return request.headers.get("HX-Request") == "true" and request.headers.get("HX-Target") == target


def render(
    request: Request,
    template: str,
    data: dict[str, Any],
    *,
    title: str,
    status_code: int = 200,
    refresh: bool = False,
    nav: str = "",
    extra: dict[str, Any] | None = None,
) -> HTMLResponse:
    """A page: ``data`` is exactly what its JSON twin returns, so the HTML never shows a figure the JSON lacks.

    ``extra`` holds presentation only (chart geometry drawn from ``data``), never a figure of its own.
    """
    web = state(request)
    response: HTMLResponse = web.templates.TemplateResponse(
        request,
        template,
        {
            "data": data,
            "title": title,
            "nav": nav,
            "refresh": refresh,
            "refresh_seconds": web.settings.refresh_seconds,
            "store_url": web.access.shown_url,
            "read_only": web.settings.read_only,
            # Who is logged in (presentation only: never part of ``data``, so the JSON twins stay the same).
            "login": _page_login(request),
            **(extra or {}),
        },
        status_code=status_code,
    )
    if refresh:
        # A running run changes under the reader: never serve it from a cache.
        response.headers["Cache-Control"] = "no-store"
    return response


def json_response(data: dict[str, Any], *, status_code: int = 200) -> Response:
    return JSONResponse(data, status_code=status_code)


def form_value(value: str | None, name: str, parse: Callable[[str], T], expected: str) -> T | None:
    """A filter form's field: None when empty, else ``parse(value)``; a 400 page saying ``expected`` if it fails.

    Filters are text parameters because a form sends an empty field as ``""`` (no bound), which
    a number or date parameter would refuse.
    """
    if value is None or not value.strip():
        return None
    try:
        return parse(value.strip())
    except ValueError:
        raise HTTPException(status_code=400, detail=f"Bad request: {name} must be {expected}, not {value!r}.") from None


def paging(page: int, per_page: int) -> tuple[int, int]:
    """``(offset, limit)`` of a 1-based page; the size is kept to 1..``MAX_PER_PAGE``."""
    size = max(1, min(per_page, MAX_PER_PAGE))
    return (max(1, page) - 1) * size, size


def page_info(paged: Paged[Any], link: Any) -> dict[str, Any]:
    """Where a page is and the links to its neighbours; ``link(page)`` builds a URL."""
    pages = max(1, math.ceil(paged.total / paged.limit))
    number = paged.offset // paged.limit + 1
    return {
        "page": number,
        "pages": pages,
        "per_page": paged.limit,
        "total": paged.total,
        "first": paged.offset + 1 if paged.items else 0,
        "last": paged.offset + len(paged.items),
        "previous": link(number - 1) if number > 1 else None,
        "next": link(number + 1) if number < pages else None,
        "self": link(number),
    }


STATUS_LABELS = {"interrupted": "stopped"}
"""Run statuses as people say them: Ctrl-C leaves a run *stopped* (the store says interrupted)."""


def run_summary(run: RunInfo) -> dict[str, Any]:
    """A run's facts as the runs list, the run page and the JSON API show them."""
    config = run.config
    branch = config.get("git_branch") if isinstance(config.get("git_branch"), str) else None
    return {
        "id": run.id,
        "suite": run.suite,
        "status": run.status,
        "status_label": STATUS_LABELS.get(run.status, run.status),
        "running": run.status == "running",
        "partial": run.partial,
        "production": run.production,
        "started_at": fmt.iso(run.started_at),
        "finished_at": fmt.iso(run.finished_at),
        "wall_time": run.wall_time,
        "case_time": run.duration,
        "planned": run.planned,
        "recorded": run.recorded,
        "missing": max(0, run.planned - run.recorded),
        "counts": {"pass": run.passed, "fail": run.failed, "error": run.errored, "abstain": run.abstained},
        "pass_rate": run.pass_rate,
        "judge_model": run.judge_model,
        "agent_version": run.agent_version,
        "git_commit": run.git_commit,
        "git_branch": branch,
        "tokens": run.tokens,
        "cost": run.cost,
        # The known part when some calls or cases had no price: cost_text says so ("≥ $X (price unknown...)").
        "cost_unpriced_calls": run.unpriced_calls,
        "cost_unknown_cases": run.cost_unknown,
        "cost_text": fmt.cost_label(run.cost, run.unpriced_calls, run.cost_unknown),
        "cost_figure": fmt.cost_parts(run.cost, run.unpriced_calls, run.cost_unknown)[0],
        "cost_note": fmt.cost_parts(run.cost, run.unpriced_calls, run.cost_unknown)[1],
        "config": dict(config),
        "experiment": run.experiment_id,
        "variant": run.variant,
        "links": {
            "html": urls.run(run.id),
            "api": urls.api(urls.run(run.id)),
            "experiment": urls.experiment(run.experiment_id) if run.experiment_id else None,
        },
    }
