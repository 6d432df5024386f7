"""One run (``/runs/{id}``): the summary, the gate's verdict, then its cases, filtered and sorted on the server."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from jurybox.core import Status
from jurybox.report import explain
from jurybox.store import (
    CASE_SORTS,
    CaseQuery,
    CaseRow,
    MetricCheck,
    RegressionPolicy,
    RunInfo,
    RunStats,
    StoreBrowser,
    StoreError,
)
from jurybox.web import _format as fmt
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
    state,
    store,
)
from jurybox.web._page_calibrations import run_calibrations_data

router = APIRouter()

CASE_STATUSES = ("not_passed", "fail", "error", "abstain", "pass")
REASON_LIMIT = 300


def find_run(request: Request, run_id: str) -> RunInfo:
    """The run with this id (or unique id prefix, or ``last``), or a 404 that says so."""
    reader = browser(request)
    found = reader.runs.find(run_id)
    if found is None:
        resolved = resolve_run(request, run_id)
        found = reader.runs.find(resolved.id) if resolved is not None else None
    if found is None:
        raise HTTPException(status_code=404, detail=f"There is no run {run_id!r} in this store.")
    return found


def resolve_run(request: Request, ref: str) -> RunInfo | None:
    """A run by unique id prefix or ``last``, as the CLI accepts; None when nothing or several match."""
    try:
        return store(request).runs.resolve(ref)
    except StoreError:
        return None


def stats_data(stats: RunStats) -> dict[str, Any]:
    llm_saved = sum(tier.not_needed for tier in stats.tiers if tier.name.startswith("llm"))
    return {
        "metrics": {
            name: {"passed": rate.passed, "total": rate.total, "rate": rate.value}
            for name, rate in stats.metrics.items()
        },
        "tiers": [
            {
                "name": tier.name,
                "ran": tier.ran,
                "passed": tier.passed,
                "rate": tier.rate,
                "mean_score": tier.mean_score,
                "decided": tier.decided,
                "not_needed": tier.not_needed,
            }
            for tier in stats.tiers
        ],
        "judges": [
            {
                "path": j.path,
                "judge": j.judge,
                "ran": j.ran,
                "passed": j.passed,
                "rate": j.rate,
                "mean_score": j.mean_score,
            }
            for j in stats.judges
        ],
        "latency": {"mean": stats.latency.mean, "p50": stats.latency.p50, "p95": stats.latency.p95},
        "tags": list(stats.tags),
        "tier_checks_not_needed": sum(tier.not_needed for tier in stats.tiers),
        "llm_tier_checks_not_needed": llm_saved,
        "last_recorded_at": fmt.iso(stats.last_recorded),
    }


def gate_data(run: RunInfo, checks: list[MetricCheck], policy: RegressionPolicy) -> dict[str, Any]:
    """The regression verdict against the rolling baseline, as ``jurybox gate --run`` gives it."""
    if run.production:
        verdict = "production"  # live traffic judged online: never held to the CI runs' baseline
    elif run.status != "completed":
        verdict = "not completed"
    elif run.partial:
        verdict = "partial"  # some of the cases: not held to the whole suite's baseline
    elif any(c.state == "regression" for c in checks):
        verdict = "regression"
    elif any(c.state in ("warmup", "warning") and c.target_met is False for c in checks):
        verdict = "below target"  # during warm-up the targets gate: jurybox gate exits 1
    elif any(c.state == "warning" for c in checks):
        verdict = "warning"
    elif any(c.state == "warmup" for c in checks):
        verdict = "warm-up"
    else:
        verdict = "ok"
    return {
        "verdict": verdict,
        "window": policy.window,
        "baseline": policy.baseline,
        "metrics": [
            {
                "metric": c.metric,
                "current": c.current.value,
                "passed": c.current.passed,
                "total": c.current.total,
                "baseline": c.baseline,
                "baseline_runs": c.baseline_runs,
                "drop": c.drop,
                "threshold": c.threshold,
                "target": c.target,
                "target_met": c.target_met,
                "state": c.state,
            }
            for c in checks
        ],
    }


def case_row(run_id: str, row: CaseRow) -> dict[str, Any]:
    reason = row.error if row.status is Status.ERROR and row.error else explain(row.judgment)
    return {
        "case": row.case,
        "status": row.status.value,
        "score": row.score,
        "reason": fmt.short(reason, REASON_LIMIT),
        "decided_by": row.decided_by,
        "degraded": any(node.degraded for _, node in row.judgment.walk()),
        "duration": row.duration,
        "tokens": row.tokens,
        "cost": row.cost,
        "cost_unpriced_calls": row.unpriced_calls,
        "cost_text": fmt.cost_label(row.cost, row.unpriced_calls),
        "cost_figure": fmt.cost_parts(row.cost, row.unpriced_calls)[0],
        "cost_note": fmt.cost_parts(row.cost, row.unpriced_calls)[1],
        "tags": list(row.tags),
        "links": {"html": urls.case(run_id, row.case), "api": urls.api(urls.case(run_id, row.case))},
    }


def run_data(reader: StoreBrowser, run: RunInfo, query: CaseQuery, policy: RegressionPolicy) -> dict[str, Any]:
    """The run page's data (and the JSON of ``/api/runs/{id}``)."""
    stats = reader.stats.of(run)
    previous = reader.runs.previous(run)
    baseline = reader.runs.previous(run, completed=True)
    cases = reader.cases.page(run, query)
    per_page = query.limit
    filters = {
        "status": query.status,
        "tag": query.tag,
        "q": query.search,
        "min_score": query.min_score,
        "max_score": query.max_score,
        "sort": query.sort if query.sort != "attention" else None,
        "order": "desc" if query.descending else None,
    }

    def link(number: int) -> str:
        shown = number if number > 1 else None
        return urls.run(run.id, **filters, page=shown, per_page=per_page if per_page != PER_PAGE else None)

    def sort_link(key: str) -> str:
        descending = key == query.sort and not query.descending
        return urls.run(run.id, **{**filters, "sort": key, "order": "desc" if descending else None})

    def neighbour(other: RunInfo | None) -> dict[str, Any] | None:
        if other is None:
            return None
        return {
            "id": other.id,
            "status": other.status,
            "html": urls.run(other.id),
            "compare": urls.compare(other.id, run.id),
        }

    return {
        "run": run_summary(run),
        "stats": stats_data(stats),
        "gate": gate_data(run, reader.stats.check(run, policy), policy),
        "calibrations": run_calibrations_data(run),
        "previous": neighbour(previous),
        "baseline": neighbour(baseline),
        "links": {
            "trends": urls.trends(run.suite),
            "case_history": urls.case_history(run.suite),
            "lessons": urls.lessons(suite=run.suite),
            "runs_of_suite": urls.runs(suite=run.suite),
        },
        "cases": {
            "filters": filters,
            "statuses": list(CASE_STATUSES),
            "sorts": list(CASE_SORTS),
            "sort_links": {key: sort_link(key) for key in CASE_SORTS},
            "rows": [case_row(run.id, row) for row in cases.items],
            "page": page_info(cases, link),
        },
    }


CaseStatus = Annotated[
    str | None, Query(pattern="^(not_passed|pass|fail|error|abstain)?$", description="Only cases with this status.")
]
Tag = Annotated[str | None, Query(max_length=512, description="Only cases with this tag.")]
Search = Annotated[str | None, Query(max_length=512, description="Text in the case name, reasoning or error.")]
MinScore = Annotated[str | None, Query(max_length=32, description="Lowest score, 0..1 (empty: no bound).")]
MaxScore = Annotated[str | None, Query(max_length=32, description="Highest score, 0..1 (empty: no bound).")]
Sort = Annotated[str, Query(pattern="^(" + "|".join(CASE_SORTS) + ")$", description="Sort key.")]
Order = Annotated[str, Query(pattern="^(asc|desc)$")]


def _score(text: str) -> float:
    number = float(text)
    if not 0.0 <= number <= 1.0:
        raise ValueError(text)
    return number


def case_query(
    status: CaseStatus = None,
    tag: Tag = None,
    q: Search = None,
    min_score: MinScore = None,
    max_score: MaxScore = None,
    sort: Sort = "attention",
    order: Order = "asc",
    page: PageNumber = 1,
    per_page: PerPage = PER_PAGE,
) -> CaseQuery:
    """The case table's filters, order and page from a run page's query parameters (a 400 page when one is bad)."""
    offset, limit = paging(page, per_page)
    return CaseQuery(
        status=status or None,
        tag=tag or None,
        search=(q or "").strip() or None,
        min_score=form_value(min_score, "min_score", _score, "a number from 0 to 1"),
        max_score=form_value(max_score, "max_score", _score, "a number from 0 to 1"),
        sort=sort,
        descending=order == "desc",
        offset=offset,
        limit=limit,
    )


CaseFilters = Annotated[CaseQuery, Depends(case_query)]


@router.get("/runs/{run_id}", response_class=HTMLResponse)
def run_page(request: Request, run_id: str, query: CaseFilters) -> Response:
    reader = browser(request)
    run = reader.runs.find(run_id)
    if run is None:
        # `last` or an id prefix, as the CLI takes them: redirect to the run's own, shareable URL.
        resolved = resolve_run(request, run_id)
        if resolved is None:
            raise HTTPException(status_code=404, detail=f"There is no run {run_id!r} in this store.")
        return RedirectResponse(urls.run(resolved.id), status_code=307)
    data = run_data(reader, run, query, state(request).settings.policy)
    refresh = run.status == "running"
    if is_fragment(request, "cases"):
        response = render(request, "run_cases.html", data, title=run.id, refresh=refresh)
        # The address bar gets the clean, shareable URL of what is shown (no empty form fields).
        if request.headers.get("HX-Trigger") != "cases":  # a refresh of a live page pushes no history
            response.headers["HX-Push-Url"] = data["cases"]["page"]["self"]
        return response
    if is_fragment(request, "run-live"):
        return render(request, "run_live.html", data, title=run.id, refresh=refresh)
    return render(request, "run.html", data, title=f"{run.suite} · {run.id}", refresh=refresh, nav="runs")


@router.get("/api/runs/{run_id}")
def run_api(request: Request, run_id: str, query: CaseFilters) -> Response:
    """One run: summary, gate verdict, stats and one page of its cases."""
    run = find_run(request, run_id)
    return json_response(run_data(browser(request), run, query, state(request).settings.policy))
