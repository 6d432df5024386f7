"""Suites (``/suites``), a suite's trend (``/suites/{name}/trends``) and its cases over recent runs.

The trend draws, per run, the pass rate overall and per tier with the rolling
baseline and the regression threshold the gate uses, the mean score per tier,
the cost and the p50 / p95 case latency. Each point links to its run;
regressions are marked. Production runs (``jurybox serve --otlp``: one per day of
judged traces) are a line of their own beside the CI runs', never in their baseline.
The case history shows each case's status over the last runs, the flakiest (passing
in some runs and not in others) first.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, Response

from jurybox.store import RegressionPolicy, StoreBrowser, TrendPoint
from jurybox.web import _format as fmt
from jurybox.web import _urls as urls
from jurybox.web._charts import Chart, Series, line_chart
from jurybox.web._common import (
    PER_PAGE,
    PageNumber,
    PerPage,
    browser,
    json_response,
    page_info,
    paging,
    render,
    run_summary,
    state,
)

router = APIRouter()

DEFAULT_RUNS = 50
MAX_RUNS = 2000
EVERY_POINT_LIMIT = 200
"""Charts beyond the first mark every point only up to this many runs (then only regressions and warnings)."""


def suites_data(reader: StoreBrowser) -> dict[str, Any]:
    """The suites page's data: each suite and its latest run."""
    rows = []
    for name in reader.suites.names():
        latest = reader.runs.page(suite=name, limit=1)
        rows.append(
            {
                "suite": name,
                "runs": latest.total,
                "latest": run_summary(latest.items[0]) if latest.items else None,
                "links": {
                    "trends": urls.trends(name),
                    "case_history": urls.case_history(name),
                    "runs": urls.runs(suite=name),
                    "lessons": urls.lessons(suite=name),
                },
            }
        )
    return {"suites": rows}


PRODUCTION = "production"
CI = "ci"


def point_data(point: TrendPoint) -> dict[str, Any]:
    run, stats = point.run, point.stats
    kind = PRODUCTION if run.production else CI

    def state_of(name: str) -> str | None:
        if kind == PRODUCTION:
            return PRODUCTION  # live traffic: never held to the suite's baseline
        return point.states.get(name) if run.status == "completed" else "not completed"

    return {
        "run_id": run.id,
        "kind": kind,
        "started_at": fmt.iso(run.started_at),
        "status": run.status,
        "cases": run.recorded,
        "metrics": {
            name: {
                "rate": rate.value,
                "passed": rate.passed,
                "total": rate.total,
                "baseline": point.baselines.get(name),
                "threshold": point.thresholds.get(name),
                "floor": _floor(point.baselines.get(name), point.thresholds.get(name)),
                "state": state_of(name),
            }
            for name, rate in stats.metrics.items()
        },
        "mean_scores": {tier.name: tier.mean_score for tier in stats.tiers},
        "cost": run.cost,
        "tokens": run.tokens,
        "latency": {"p50": stats.latency.p50, "p95": stats.latency.p95, "mean": stats.latency.mean},
        "html": urls.run(run.id),
    }


def _floor(baseline: float | None, threshold: float | None) -> float | None:
    """The rate under which the gate calls a regression: baseline minus the relative threshold."""
    return None if baseline is None or threshold is None else baseline * (1 - threshold)


def trends_data(reader: StoreBrowser, suite: str, runs: int, policy: RegressionPolicy) -> dict[str, Any]:
    """The trends page's data (and the JSON of ``/api/suites/{name}/trends``)."""
    points = [point_data(p) for p in reader.trends.points(suite, limit=runs, policy=policy)]
    metrics: list[str] = []
    tiers: list[str] = []
    for point in points:
        metrics += [m for m in point["metrics"] if m not in metrics]
        tiers += [t for t in point["mean_scores"] if t not in tiers]
    metrics.sort(key=lambda m: (m != "overall", m))
    return {
        "suite": suite,
        "runs": runs,
        "kinds": {kind: sum(1 for p in points if p["kind"] == kind) for kind in (CI, PRODUCTION)},
        "window": policy.window,
        "metrics": metrics,
        "tiers": sorted(tiers),
        "points": points,
        "regressions": [
            {"run_id": p["run_id"], "metric": name, "html": p["html"]}
            for p in points
            for name, m in p["metrics"].items()
            if m["state"] == "regression"
        ],
        "links": {
            "case_history": urls.case_history(suite),
            "runs": urls.runs(suite=suite),
            "lessons": urls.lessons(suite=suite),
            "api": urls.api(urls.trends(suite, runs=runs)),
        },
    }


def _split(points: list[dict[str, Any]], value: Any) -> tuple[list[Any], list[Any]]:
    """``value(point)`` per point, as (CI values, production values), None where a point is of the other kind."""
    ci = [value(p) if p["kind"] == CI else None for p in points]
    production = [value(p) if p["kind"] == PRODUCTION else None for p in points]
    return ci, production


def _lines(
    name: str, ci: list[Any], production: list[Any], css: str, *, markers: bool, own_colour: bool = True
) -> list[Series]:
    """A CI line and a production line (each only when it has a value): joined over the other kind's runs.

    The production line is dotted with hollow dots, in a colour of its own where the chart has one
    line per kind (``own_colour``), else in its CI line's colour (one pair per tier or percentile).
    """
    found = []
    if any(v is not None for v in ci):
        found.append(Series(name, ci, css, markers=markers, joined=True))
    if any(v is not None for v in production):
        style = "s-prod prod" if own_colour else f"{css} prod"
        found.append(Series(f"{name}, production", production, style, markers=markers, joined=True))
    return found


def charts(data: dict[str, Any]) -> list[Chart]:
    """The SVG charts of a trends page, built from exactly the JSON twin's data.

    CI runs and production runs are two lines with their own legend entries; the baseline and
    the regression floor are the CI runs' (a production run neither makes nor meets one).
    """
    points = data["points"]
    whens = [fmt.when(p["started_at"]) for p in points]  # parsed once for labels and ticks
    labels = [
        f"{p['run_id']} ({'production, ' if p['kind'] == PRODUCTION else ''}{when})"
        for p, when in zip(points, whens, strict=True)
    ]
    hrefs = [p["html"] for p in points]
    ticks = [when[:16] for when in whens]
    every = len(points) <= EVERY_POINT_LIMIT
    found: list[Chart] = []
    for index, metric in enumerate(data["metrics"]):
        rows = [p["metrics"].get(metric) for p in points]
        ci, production = _split(points, lambda p, m=metric: (p["metrics"].get(m) or {}).get("rate"))
        baseline, _ = _split(points, lambda p, m=metric: (p["metrics"].get(m) or {}).get("baseline"))
        floor, _ = _split(points, lambda p, m=metric: (p["metrics"].get(m) or {}).get("floor"))
        found.append(
            line_chart(
                "Pass rate, overall" if metric == "overall" else f"Pass rate, tier {metric}",
                labels=labels,
                hrefs=hrefs,
                ticks=ticks,
                series=[
                    *_lines(metric, ci, production, "s-main", markers=True),
                    Series("baseline", baseline, "s-baseline", dashed=True, joined=True),
                    Series("regression below", floor, "s-floor", dashed=True, joined=True),
                ],
                y_format=lambda v: f"{v:.0%}",
                y_range=(0.0, 1.0),
                states=[(r["state"] if r else "") or "" for r in rows],
                mark_every_point=index == 0 or every,
            )
        )
    if data["tiers"]:
        found.append(
            line_chart(
                "Mean score per tier",
                labels=labels,
                hrefs=hrefs,
                ticks=ticks,
                series=[
                    line
                    for i, tier in enumerate(data["tiers"])
                    for line in _lines(
                        tier,
                        *_split(points, lambda p, t=tier: p["mean_scores"].get(t)),
                        f"s-{i % 6}",
                        markers=every,
                        own_colour=False,
                    )
                ],
                y_format=lambda v: f"{v:.2f}",
                y_range=(0.0, 1.0),
            )
        )
    found.append(
        line_chart(
            "Cost per run (USD; gaps: unknown)",
            labels=labels,
            hrefs=hrefs,
            ticks=ticks,
            series=_lines("cost", *_split(points, lambda p: p["cost"]), "s-main", markers=every),
            y_format=lambda v: f"${v:.4f}",
        )
    )
    found.append(
        line_chart(
            "Case latency (seconds)",
            labels=labels,
            hrefs=hrefs,
            ticks=ticks,
            series=[
                *_lines("p50", *_split(points, lambda p: p["latency"]["p50"]), "s-0", markers=every, own_colour=False),
                *_lines("p95", *_split(points, lambda p: p["latency"]["p95"]), "s-1", markers=every, own_colour=False),
            ],
            y_format=lambda v: f"{v:.2f}s",
        )
    )
    return found


def history_data(reader: StoreBrowser, suite: str, runs: int, page: int, per_page: int) -> dict[str, Any]:
    """Each case's status over the suite's last runs, flakiest first (``/api/suites/{name}/cases``)."""
    offset, limit = paging(page, per_page)
    recent, rows = reader.trends.case_history(suite, runs=runs, offset=offset, limit=limit)

    def link(number: int) -> str:
        return urls.case_history(suite, runs=runs, page=number, per_page=per_page if per_page != PER_PAGE else None)

    return {
        "suite": suite,
        "runs": [
            {"id": r.id, "started_at": fmt.iso(r.started_at), "status": r.status, "html": urls.run(r.id)}
            for r in recent
        ],
        "rows": [
            {
                "case": row.case,
                "flips": row.flips,
                "passed": row.passed,
                "ran": row.ran,
                "flaky": 0 < row.passed < row.ran,
                "cells": [
                    {
                        "run_id": run.id,
                        "status": status,
                        "html": urls.case(run.id, row.case) if status is not None else None,
                    }
                    for run, status in zip(recent, row.statuses, strict=True)
                ],
            }
            for row in rows.items
        ],
        "page": page_info(rows, link),
        "links": {"trends": urls.trends(suite)},
    }


def _known(reader: StoreBrowser, suite: str) -> None:
    if suite not in reader.suites.names():
        raise HTTPException(status_code=404, detail=f"There is no suite {suite!r} in this store.")


Runs = Annotated[int, Query(ge=1, le=MAX_RUNS, description="How many of the latest runs.")]
HistoryRuns = Annotated[int, Query(ge=1, le=100, description="How many of the latest runs.")]


@router.get("/suites", response_class=HTMLResponse)
def suites_page(request: Request) -> Response:
    return render(request, "suites.html", suites_data(browser(request)), title="Suites", nav="suites")


@router.get("/api/suites")
def suites_api(request: Request) -> Response:
    """Every suite with its number of runs and its latest run."""
    return json_response(suites_data(browser(request)))


@router.get("/suites/{suite:path}/trends", response_class=HTMLResponse)
def trends_page(request: Request, suite: str, runs: Runs = DEFAULT_RUNS) -> Response:
    reader = browser(request)
    _known(reader, suite)
    data = trends_data(reader, suite, runs, state(request).settings.policy)
    return render(request, "trends.html", data, title=f"Trends · {suite}", nav="suites", extra={"charts": charts(data)})


@router.get("/api/suites/{suite:path}/trends")
def trends_api(request: Request, suite: str, runs: Runs = DEFAULT_RUNS) -> Response:
    """Per run of the suite, oldest first: pass rates with baseline, threshold and gate state; scores, cost, latency."""
    reader = browser(request)
    _known(reader, suite)
    return json_response(trends_data(reader, suite, runs, state(request).settings.policy))


@router.get("/suites/{suite:path}/cases", response_class=HTMLResponse)
def history_page(
    request: Request, suite: str, runs: HistoryRuns = 20, page: PageNumber = 1, per_page: PerPage = PER_PAGE
) -> Response:
    reader = browser(request)
    _known(reader, suite)
    data = history_data(reader, suite, runs, page, per_page)
    return render(request, "case_history.html", data, title=f"Cases over time · {suite}", nav="suites")


@router.get("/api/suites/{suite:path}/cases")
def history_api(
    request: Request, suite: str, runs: HistoryRuns = 20, page: PageNumber = 1, per_page: PerPage = PER_PAGE
) -> Response:
    """Each case's status in the suite's last runs, flakiest first."""
    reader = browser(request)
    _known(reader, suite)
    return json_response(history_data(reader, suite, runs, page, per_page))
