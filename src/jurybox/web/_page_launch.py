"""Starting a run of a stored suite from the browser, its live progress, cancel and resume.

An editor starts a run from the suite's cases page (a filter and a concurrency; the
judge model is an admin's to pick, as it is the suite's); it runs in a thread of this
server through the run service ``jurybox run`` uses (``_launches``). The progress page polls with htmx:
cases done of planned, pass / fail so far and cost, read from the store, where the
runner writes each case as it ends. Cancel stops it like Ctrl-C; a stopped run (or one
a server restart left unfinished) is resumed here or with ``jurybox run --resume``.
"""

from __future__ import annotations

import re
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from jurybox.store import CaseQuery, RunInfo, StoreError
from jurybox.suites import MAX_CONCURRENCY
from jurybox.web import _urls as urls
from jurybox.web._auth import check_csrf, read_form, require
from jurybox.web._common import browser, is_fragment, json_response, login_of, render, run_summary, state, store
from jurybox.web._edit_urls import edit_url, start_run_url
from jurybox.web._launches import LaunchError, Launches, launch_view

router = APIRouter()

MAX_SELECTORS = 20
_SELECTOR = re.compile(r"^[^\s,]{1,200}$")
FRAGMENT = "launch-progress"
FINISHED_SHOWN = 20
"""Finished cases the progress lists (the latest first); the run page has them all."""


def launches(request: Request) -> Launches:
    """The runs this server started (made with the app's first start request)."""
    found = getattr(request.app.state, "jurybox_launches", None)
    if found is None:
        found = Launches(state(request).settings.store_url)
        request.app.state.jurybox_launches = found
    return found


def stop_launched_runs(app: Any) -> None:
    """At shutdown: stop the runs this server started, as Ctrl-C would (each stays resumable)."""
    found = getattr(app.state, "jurybox_launches", None)
    if isinstance(found, Launches):
        found.stop_all()


def progress_url(run_id: str) -> str:
    return urls.run(run_id) + "/progress"


def _selectors(text: str) -> tuple[str, ...]:
    selectors = tuple(part for part in re.split(r"[\s,]+", text.strip()) if part)
    if len(selectors) > MAX_SELECTORS or not all(_SELECTOR.match(s) for s in selectors):
        raise HTTPException(
            status_code=400, detail=f"Bad request: a filter is at most {MAX_SELECTORS} names, tags or globs."
        )
    return selectors


def _concurrency(text: str) -> int | None:
    if not text.strip():
        return None
    if not text.strip().isdigit() or not 1 <= int(text.strip()[:6]) <= MAX_CONCURRENCY:
        raise HTTPException(
            status_code=400, detail=f"Bad request: concurrency is a whole number, 1 to {MAX_CONCURRENCY}."
        )
    return int(text.strip())


def _run(request: Request, run_id: str) -> RunInfo:
    try:
        return store(request).runs.get(run_id)
    except (StoreError, KeyError):
        raise HTTPException(status_code=404, detail=f"There is no run {run_id!r}.") from None


@router.post("/suites/{suite:path}/run")
async def start_run(request: Request, suite: str) -> Response:
    login = require(request, "editor")
    form = await read_form(request, ("filter", "concurrency", "judge_model", "resume"))
    check_csrf(login, form)
    selectors = _selectors(form.get("filter", ""))
    concurrency = _concurrency(form.get("concurrency", ""))
    judge_model = form.get("judge_model", "").strip() or None
    if judge_model is not None and not login.user.may("admin"):
        raise HTTPException(status_code=403, detail="Only an admin picks the judge model of a run.")
    if judge_model is not None and len(judge_model) > 300:
        raise HTTPException(status_code=400, detail="Bad request: a judge model spec is at most 300 characters.")
    resume = form.get("resume", "").strip() or None
    if resume is not None:
        earlier = _run(request, resume[:64])
        if earlier.suite != suite or earlier.status == "completed" or selectors:
            raise HTTPException(
                status_code=400, detail="Bad request: resume an unfinished run of this suite, without a filter."
            )
        if launches(request).get(earlier.id) is not None and launch_view(launches(request).get(earlier.id))["running"]:
            raise HTTPException(status_code=409, detail=f"Run {earlier.id} is still running.")
        resume = earlier.id
    try:
        launch = launches(request).start(
            suite, started_by=login.user.name, selectors=selectors, concurrency=concurrency,
            judge_model=judge_model, resume=resume,
        )  # fmt: skip
    except LaunchError as exc:
        raise HTTPException(status_code=422, detail=f"The run did not start: {exc}") from None
    run_id = launch.run_id or ""
    detail = {"run": run_id, "filter": list(selectors), "concurrency": concurrency, "judge_model": judge_model}
    store(request).users.audit(
        login.user.name, "run.resume" if resume else "run.start", suite, {**detail, "resume": resume}
    )
    return RedirectResponse(progress_url(run_id), status_code=303)


def _progress_data(request: Request, run_id: str) -> dict[str, Any]:
    run = _run(request, run_id)
    summary = run_summary(run)
    here = launch_view(launches(request).get(run.id))
    # The cases as they finish, the latest first: a failing one can be opened while the run goes on.
    latest = browser(request).cases.page(run, CaseQuery(sort="finished", descending=True, limit=FINISHED_SHOWN))
    finished = [
        {
            "case": row.case,
            "status": row.status.value,
            "reason": row.error or row.reasoning,
            "link": urls.case(run.id, row.case) if row.status.value != "pass" else None,
        }
        for row in latest.items
    ]
    return {
        "run": summary,
        "finished": finished,
        "launch": dict(here),
        "resumable": run.status != "completed" and not here["running"],
        "resume_command": f"jurybox run --suite {run.suite} --resume {run.id}",
        "links": {
            "run": urls.run(run.id),
            "suite": edit_url(run.suite),
            "start": start_run_url(run.suite),
            "self": progress_url(run.id),
        },
    }


@router.get("/runs/{run_id}/progress", response_class=HTMLResponse)
def progress_page(request: Request, run_id: str) -> Response:
    data = _progress_data(request, run_id)
    login = login_of(request)
    extra = {"may_edit": login is not None and login.user.may("editor"), "fragment": is_fragment(request, FRAGMENT)}
    live = data["run"]["running"] or data["launch"]["running"]
    template = "launch_progress.html" if extra["fragment"] else "launch.html"
    return render(request, template, data, title=f"Run {run_id}", nav="runs", refresh=live, extra=extra)


@router.get("/api/runs/{run_id}/progress")
def progress_api(request: Request, run_id: str) -> Response:
    """A run's progress as it is written: cases done of planned, pass / fail so far, cost; whether it is resumable."""
    return json_response(_progress_data(request, run_id))


@router.post("/runs/{run_id}/cancel")
async def cancel_run(request: Request, run_id: str) -> Response:
    login = require(request, "editor")
    check_csrf(login, await read_form(request, ()))
    run = _run(request, run_id)
    launch = launches(request).get(run.id)
    if launch is None or not launch.stop():
        raise HTTPException(status_code=409, detail=f"Run {run.id} is not running on this server.")
    store(request).users.audit(login.user.name, "run.cancel", run.suite, {"run": run.id})
    return RedirectResponse(progress_url(run.id), status_code=303)
