"""Experiments (``/experiments``, ``/experiments/ID``): a suite's variants side by side, with paired statistics.

The figures are those of ``jurybox experiment show ID``: the same view
(``jurybox.experiments.experiment_view``), so the page, its JSON twin and the
console cannot disagree. Cases the variants agree on are listed only on request
(``?cases=all``), as in the HTML report.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, Response

from jurybox.core import Status
from jurybox.experiments import CaseOutcome, ExperimentView, experiment_view
from jurybox.store import RunInfo, StoreError
from jurybox.web import _urls as urls
from jurybox.web._common import json_response, render, store

router = APIRouter()

RUNS_LOOKED_AT = 1000
"""Runs of experiments the list reads, newest first (each experiment is one run per variant)."""
ExperimentRef = Annotated[str, "an experiment id, a unique prefix of it, or 'last'"]
Shown = Annotated[str | None, Query(pattern="^(all|disagreements)?$", description="Which cases to list.")]


def experiments_data(runs: list[RunInfo]) -> dict[str, Any]:
    """The list page's data (and ``/api/experiments``): each experiment with its variants' runs, newest first."""
    found: dict[str, dict[str, Any]] = {}
    for run in runs:
        if run.experiment_id is None:
            continue
        entry = found.setdefault(
            run.experiment_id,
            {
                "id": run.experiment_id,
                "suite": run.suite.split("@", 1)[0],
                "started_at": run.started_at.isoformat(),
                "variants": [],
                "links": {"html": urls.experiment(run.experiment_id)},
            },
        )
        entry["started_at"] = min(entry["started_at"], run.started_at.isoformat())
        entry["variants"].insert(
            0,
            {
                "name": run.variant or run.suite,
                "run": run.id,
                "status": run.status,
                "pass_rate": run.pass_rate,
                "links": {"html": urls.run(run.id)},
            },
        )
    return {"experiments": list(found.values())}


def _outcome(outcome: CaseOutcome | None, run_id: str) -> dict[str, Any] | None:
    if outcome is None:
        return None
    return {
        "status": outcome.status.value,
        "passed": outcome.passed,
        "trials": outcome.count,
        "rule": outcome.rule,
        "interval": list(outcome.interval) if outcome.rule is not None else None,
        "score": outcome.score,
        "reply": outcome.reply,
        "reasoning": outcome.reasoning,
        "links": {"html": urls.case(run_id, outcome.case)},
    }


def experiment_data(view: ExperimentView, shown: str) -> dict[str, Any]:
    """The experiment page's data: the view's JSON plus the cases listed (disagreements, or all)."""
    disagree = set(view.disagreements())
    listed = [case for case in view.cases if shown == "all" or case in disagree or len(view.columns) < 2]
    figures = view.to_dict()
    for column, variant in zip(view.columns, figures["variants"], strict=True):
        variant["links"] = {"html": urls.run(column.run_id)}
        variant["unknown_cost"] = column.cost is None
    return {
        **figures,
        "findings": [f"{c.paired.b} against {c.paired.a}: {c.describe()}" for c in view.comparisons],
        "shown": shown,
        "listed": [
            {
                "case": case,
                "agree": case not in disagree,
                "variants": [_outcome(column.cases.get(case), column.run_id) for column in view.columns],
            }
            for case in listed
        ],
        "counts": {"cases": len(view.cases), "disagree": len(disagree)},
        "links": {
            "all": urls.experiment(view.id, cases="all"),
            "disagreements": urls.experiment(view.id),
            "api": urls.api(urls.experiment(view.id)),
            "cli": f"jurybox experiment show {view.id}",
        },
        "statuses": [status.value for status in Status],
    }


def _view(request: Request, ref: str) -> ExperimentView:
    try:
        return experiment_view(store(request), ref)
    except StoreError as exc:
        raise HTTPException(status_code=404, detail=f"Experiment {ref}: {exc}") from exc


def _recent(request: Request) -> list[RunInfo]:
    return [run for run in store(request).runs.newest(limit=RUNS_LOOKED_AT) if run.experiment_id is not None]


@router.get("/experiments", response_class=HTMLResponse)
def experiments_page(request: Request) -> Response:
    data = experiments_data(_recent(request))
    return render(request, "experiments.html", data, title="Experiments", nav="experiments")


@router.get("/api/experiments")
def experiments_api(request: Request) -> Response:
    """Experiments, newest first: each with its suite and each variant's run, status and pass rate."""
    return json_response(experiments_data(_recent(request)))


@router.get("/experiments/{ref}", response_class=HTMLResponse)
def experiment_page(request: Request, ref: ExperimentRef, cases: Shown = None) -> Response:
    view = _view(request, ref)
    data = experiment_data(view, cases or "disagreements")
    running = any(column.status == "running" for column in view.columns)
    return render(request, "experiment.html", data, title=f"Experiment {view.id}", refresh=running, nav="experiments")


@router.get("/api/experiments/{ref}")
def experiment_api(request: Request, ref: ExperimentRef, cases: Shown = None) -> Response:
    """One experiment: each variant's pass rate with its Wilson interval, cost and latency; each variant
    against the first (paired bootstrap interval, exact McNemar, Holm-adjusted beyond two); the cases listed."""
    return json_response(experiment_data(_view(request, ref), cases or "disagreements"))
