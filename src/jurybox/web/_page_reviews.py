"""Human review: a reviewer agrees or disagrees with a judge on the case page; the queue; the labelled set.

The case page lists the judges' own verdicts (the nodes below each cascade tier)
with a form each for editors; a review is stored with the reviewer, the judge's
name and verdict, and the judge's identity when the run kept it (``jurybox run``
files each LLM judge's identity in the run's config). ``/reviews`` is the queue
of judgments nobody reviewed yet, ``/reviews/export.jsonl`` the labelled set
``jurybox calibrate`` reads.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse

from jurybox.core import TIERS, CaseRecord, Judgment
from jurybox.store import JUDGE_IDENTITIES_KEY, LABELS, Review, RunInfo, StoreError
from jurybox.web import _urls as urls
from jurybox.web._auth import check_csrf, read_form, require
from jurybox.web._common import json_response, login_of, render, store
from jurybox.web._review_flow import STATUSES, QueueView, view_from, view_from_query

router = APIRouter()


def reviewable(record: CaseRecord) -> list[dict[str, Any]]:
    """The judges' own verdicts of a case (and of each round with its own), as review forms need them."""
    found = _under_tiers(record.judgment, None)
    for round_ in record.rounds:
        if round_.judgment is not record.judgment and round_.judgment != record.judgment:
            found += _under_tiers(round_.judgment, round_.index)
    return found


def _under_tiers(root: Judgment, round_index: int | None) -> list[dict[str, Any]]:
    items = []
    for tier, tier_judgment in root.children.items():
        for name, verdict in tier_judgment.children.items():
            items.append(
                {
                    "path": f"{tier}/{name}",
                    "round": round_index,
                    "round_label": "" if round_index is None else f"round {round_index + 1}",
                    "judge": verdict.judge or name,
                    "tier": tier,
                    "status": verdict.status.value,
                    "reasoning": verdict.reasoning,
                }
            )
    return items


def review_data(review: Review) -> dict[str, Any]:
    return {
        "id": review.id,
        "run_id": review.run_id,
        "case": review.case,
        "path": review.path,
        "round": review.round_index,
        "reviewer": review.reviewer,
        "agree": review.agree,
        "label": review.label,
        "note": review.note,
        "judge": review.judge_name,
        "judge_status": review.judge_status,
        "judge_key": review.judge_key,
        "at": review.created_at.isoformat() if review.created_at else None,
        "links": {"case": urls.case(review.run_id, review.case)},
    }


def _int_or_none(value: str, field: str) -> int | None:
    if value == "":
        return None
    if not value.isdigit() or len(value) > 6:
        raise HTTPException(status_code=400, detail=f"Bad request: {field} must be a round number.")
    return int(value)


@router.post("/runs/{run_id}/case/reviews")
async def add_review(
    request: Request, run_id: str, name: Annotated[str, Query(min_length=1, max_length=512)]
) -> Response:
    login = require(request, "editor")
    form = await read_form(request, ("path", "round", "agree", "label", "note", "queue"))
    check_csrf(login, form)
    agree = form.get("agree", "")
    if agree not in ("yes", "no"):
        raise HTTPException(status_code=400, detail="Bad request: agree must be yes or no.")
    label = form.get("label", "")
    if label not in LABELS:
        raise HTTPException(status_code=400, detail=f"Bad request: label must be one of {', '.join(LABELS)}.")
    path = form.get("path", "")
    if not path or len(path) > 1024:
        raise HTTPException(status_code=400, detail="Bad request: path names the judgment reviewed.")
    round_index = _int_or_none(form.get("round", ""), "round")
    run = _run(request, run_id)
    identity = _identity(run, path)
    try:
        review_id = store(request).reviews.add_review(
            run.id,
            name,
            path,
            reviewer=login.user.name,
            agree=agree == "yes",
            label=label,
            note=form.get("note", ""),
            round_index=round_index,
            judge_key=identity.get("key") if isinstance(identity.get("key"), str) else None,
            judge_identity=identity or None,
        )
    except ValueError as exc:
        raise HTTPException(status_code=400, detail=f"Bad request: {exc}.") from None
    except StoreError as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from None
    detail = {"run": run.id, "path": path, "agree": agree == "yes", "label": label, "review": review_id}
    store(request).users.audit(login.user.name, "review.add", f"{run.id}/{name}", detail)
    if "queue" in form:  # reviewing from the queue: on to the next judgment it offers
        query = view_from_query(form["queue"]).query()
        return RedirectResponse("/reviews/next" + (f"?{query}" if query else ""), status_code=303)
    return RedirectResponse(urls.case(run.id, name) + "#reviews", status_code=303)


def _run(request: Request, run_id: str) -> RunInfo:
    try:
        return store(request).runs.get(run_id)
    except (StoreError, KeyError):
        raise HTTPException(status_code=404, detail=f"There is no run {run_id!r}.") from None


def _identity(run: RunInfo, path: str) -> dict[str, Any]:
    identities = run.config.get(JUDGE_IDENTITIES_KEY)
    found = identities.get(path) if isinstance(identities, dict) else None
    return dict(found) if isinstance(found, dict) else {}


PAGE_SIZE = 50


def _queue_data(request: Request, view: QueueView, offset: int) -> dict[str, Any]:
    reviews = store(request).reviews
    page = reviews.queue(view.filter, order=view.order, offset=offset, limit=PAGE_SIZE, seed=view.seed)  # type: ignore[arg-type]
    login = login_of(request)
    mine = reviews.reviews(reviewer=login.user.name, limit=10) if login is not None else []
    agreed, reviewed = reviews.agreement(run_id=view.filter.run_id)
    query = view.query()
    return {
        "order": view.order,
        "run": view.filter.run_id,
        "seed": view.seed,
        "filters": {
            "suite": view.filter.suite or "",
            "run": view.filter.run_id or "",
            "judge": view.filter.judge or "",
            "status": view.filter.status or "",
            "tier": view.filter.tier or "",
            "reviewed": view.filter.reviewed,
            "passes": view.filter.cheap_passes,
            "repeats": view.filter.repeats,
        },
        "choices": {"statuses": STATUSES, "tiers": TIERS, "suites": store(request).suites.names()},
        "total": page.total,
        "offset": page.offset,
        "shown": len(page.entries),
        "hidden_passes": page.hidden_passes,
        "agreement": {"agreed": agreed, "reviewed": reviewed, "rate": agreed / reviewed if reviewed else None},
        "items": [
            {
                "run_id": item.run_id,
                "suite": item.suite,
                "case": item.case,
                "path": item.path,
                "round": item.round_index,
                "judge": item.judge,
                "tier": item.tier,
                "status": item.status,
                "confidence": item.confidence,
                "reasoning": item.reasoning,
                "repeats": item.repeats,
                "reviews": item.reviews,
                "links": {"case": queue_case_url(item.run_id, item.case, query)},
            }
            for item in page.entries
        ],
        "reviews": [review_data(r) for r in reviews.reviews(run_id=view.filter.run_id, limit=20)],
        "mine": [review_data(r) for r in mine],
        "links": {
            "export": "/reviews/export.jsonl"
            + (f"?{urlencode({'run': view.filter.run_id})}" if view.filter.run_id else ""),
            "next": "/reviews/next" + (f"?{query}" if query else ""),
            "previous": f"/reviews?{view.query(offset=max(0, offset - PAGE_SIZE) or None)}" if offset > 0 else None,
            "later": f"/reviews?{view.query(offset=offset + PAGE_SIZE)}" if offset + PAGE_SIZE < page.total else None,
            "sample": f"/reviews?{view.query(order='sample', seed=view.seed or None)}",
            "attention": f"/reviews?{view.query(order=None)}",
        },
    }


def queue_case_url(run_id: str, case: str, query: str) -> str:
    """A case page opened from the queue: it carries the queue's filters for "save and review next"."""
    return urls.case(run_id, case) + (f"&{urlencode({'queue': query})}" if query else "&queue=") + "#reviews"


RunFilter = Annotated[str | None, Query(max_length=64, description="Only this run's judgments.")]
Offset = Annotated[int, Query(ge=0, le=10_000_000, description="Items to skip (paging).")]


@router.get("/reviews", response_class=HTMLResponse)
def queue_page(request: Request, offset: Offset = 0) -> Response:
    view = view_from(dict(request.query_params))
    data = _queue_data(request, view, offset)
    return render(request, "reviews.html", data, title="Review queue", nav="reviews")


@router.get("/api/reviews")
def queue_api(request: Request, offset: Offset = 0) -> Response:
    """Judgments waiting for review (filters: suite, run, judge, status, tier, reviewed, passes, repeats), a page."""
    return json_response(_queue_data(request, view_from(dict(request.query_params)), offset))


@router.get("/reviews/next")
def review_next(request: Request) -> Response:
    """The first judgment the queue offers now (the one just reviewed has left it): its case page, or the queue."""
    view = view_from(dict(request.query_params))
    unreviewed = QueueView(replace(view.filter, reviewed="no"), view.order, view.seed)
    page = store(request).reviews.queue(unreviewed.filter, order=view.order, limit=1, seed=view.seed)  # type: ignore[arg-type]
    query = unreviewed.query()
    if not page.entries:
        return RedirectResponse("/reviews" + (f"?{query}" if query else "") + "#done", status_code=303)
    item = page.entries[0]
    return RedirectResponse(queue_case_url(item.run_id, item.case, query), status_code=303)


@router.get("/reviews/export.jsonl")
def export(request: Request, run: RunFilter = None) -> Response:
    """The reviews as a labelled set: one JSON row per reviewed judgment, a label per reviewer."""
    rows = list(store(request).reviews.labelled_rows(run_id=run or None))

    def lines() -> Iterator[bytes]:
        for row in rows:
            yield (json.dumps(row, ensure_ascii=False) + "\n").encode()

    headers = {"Content-Disposition": 'attachment; filename="jurybox-reviews.jsonl"'}
    return StreamingResponse(lines(), media_type="application/x-ndjson", headers=headers)
