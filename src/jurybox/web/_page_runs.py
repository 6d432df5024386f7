"""The runs list (``/runs``): every run, newest first, filtered by suite, status and date, a page at a time."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from jurybox.store import StoreBrowser
from jurybox.web import _urls as urls
from jurybox.web._common import (
    PER_PAGE,
    PageNumber,
    PerPage,
    browser,
    form_value,
    is_fragment,
    json_response,
    page_info,
    paging,
    render,
    run_summary,
)

router = APIRouter()

RUN_STATUSES = ("running", "completed", "interrupted", "failed")


@dataclass(frozen=True)
class RunFilters:
    """The runs list's filters and page, from its query parameters."""

    suite: str | None
    status: str | None
    since: date | None
    until: date | None
    page: int
    per_page: int


def runs_data(reader: StoreBrowser, chosen: RunFilters) -> dict[str, Any]:
    """The runs page's data (and the JSON of ``/api/runs``)."""
    since, until, per_page = chosen.since, chosen.until, chosen.per_page
    offset, limit = paging(chosen.page, per_page)
    start = datetime.combine(since, time.min, tzinfo=UTC) if since else None
    # ``until`` is a whole day, included.
    end = datetime.combine(until + timedelta(days=1), time.min, tzinfo=UTC) if until else None
    found = reader.runs.page(
        suite=chosen.suite, status=chosen.status, since=start, until=end, offset=offset, limit=limit
    )
    filters = {
        "suite": chosen.suite,
        "status": chosen.status,
        "since": since.isoformat() if since else None,
        "until": until.isoformat() if until else None,
    }

    def link(number: int) -> str:
        shown = number if number > 1 else None
        return urls.runs(**filters, page=shown, per_page=per_page if per_page != PER_PAGE else None)

    runs = [run_summary(run) for run in found.items]
    return {
        "filters": filters,
        "suites": reader.suites.names(),
        "statuses": list(RUN_STATUSES),
        "runs": runs,
        "page": page_info(found, link),
        "any_running": any(run["running"] for run in runs),
    }


Suite = Annotated[str | None, Query(max_length=512, description="Only runs of this suite.")]
Status = Annotated[str | None, Query(pattern="^(running|completed|interrupted|failed)?$", description="Run status.")]
Since = Annotated[str | None, Query(max_length=32, description="Runs started on or after this day (UTC), YYYY-MM-DD.")]
Until = Annotated[str | None, Query(max_length=32, description="Runs started on or before this day (UTC), YYYY-MM-DD.")]


def _day(text: str) -> date:
    return date.fromisoformat(text)


def run_filters(
    suite: Suite = None,
    status: Status = None,
    since: Since = None,
    until: Until = None,
    page: PageNumber = 1,
    per_page: PerPage = PER_PAGE,
) -> RunFilters:
    """The runs list's filters from its query parameters (a 400 page when a day is not YYYY-MM-DD)."""
    return RunFilters(
        suite=suite or None,
        status=status or None,
        since=form_value(since, "since", _day, "a day as YYYY-MM-DD"),
        until=form_value(until, "until", _day, "a day as YYYY-MM-DD"),
        page=page,
        per_page=per_page,
    )


Filters = Annotated[RunFilters, Depends(run_filters)]


@router.get("/", include_in_schema=False)
def home() -> Response:
    return RedirectResponse(urls.runs(), status_code=307)


@router.get("/runs", response_class=HTMLResponse)
def runs_page(request: Request, filters: Filters) -> Response:
    data = runs_data(browser(request), filters)
    if is_fragment(request, "runs-table"):
        response = render(request, "runs_table.html", data, title="Runs", refresh=data["any_running"])
        if request.headers.get("HX-Trigger") != "runs-table":  # a refresh of a live page pushes no history
            response.headers["HX-Push-Url"] = data["page"]["self"]
        return response
    return render(request, "runs.html", data, title="Runs", refresh=data["any_running"], nav="runs")


@router.get("/api/runs")
def runs_api(request: Request, filters: Filters) -> Response:
    """Runs, newest first: the data of the runs page."""
    return json_response(runs_data(browser(request), filters))
