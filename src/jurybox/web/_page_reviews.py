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
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse

from jurybox.core import CaseRecord, Judgment
from jurybox.store import JUDGE_IDENTITIES_KEY, LABELS, Review, RunInfo, StoreError
from jurybox.web import _urls as urls
from jurybox.web._auth import check_csrf, read_form, require
from jurybox.web._common import json_response, render, store

router = APIRouter()

QUEUE_LIMIT = 100


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
    form = await read_form(request, ("path", "round", "agree", "label", "note"))
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


Order = Annotated[str, Query(pattern="^(attention|sample)$", description="attention (default) or sample.")]
RunFilter = Annotated[str | None, Query(max_length=64, description="Only this run's judgments.")]
Seed = Annotated[int, Query(ge=0, le=2**31, description="The sample's seed.")]


def _queue_data(request: Request, order: str, run: str | None, seed: int) -> dict[str, Any]:
    items = store(request).reviews.review_queue(
        run_id=run or None, order="sample" if order == "sample" else "attention", limit=QUEUE_LIMIT, seed=seed
    )
    return {
        "order": order,
        "run": run,
        "seed": seed,
        "items": [
            {
                "run_id": item.run_id,
                "case": item.case,
                "path": item.path,
                "round": item.round_index,
                "judge": item.judge,
                "tier": item.tier,
                "status": item.status,
                "confidence": item.confidence,
                "reasoning": item.reasoning,
                "links": {"case": urls.case(item.run_id, item.case) + "#reviews"},
            }
            for item in items
        ],
        "reviews": [review_data(r) for r in store(request).reviews.reviews(run_id=run or None, limit=50)],
        "links": {"export": "/reviews/export.jsonl" + (f"?run={run}" if run else "")},
    }


@router.get("/reviews", response_class=HTMLResponse)
def queue_page(request: Request, order: Order = "attention", run: RunFilter = None, seed: Seed = 0) -> Response:
    data = _queue_data(request, order, run, seed)
    return render(request, "reviews.html", data, title="Review queue", nav="reviews")


@router.get("/api/reviews")
def queue_api(request: Request, order: Order = "attention", run: RunFilter = None, seed: Seed = 0) -> Response:
    """Judgments nobody reviewed (failing and least confident first, or a seeded sample of passes); latest reviews."""
    return json_response(_queue_data(request, order, run, seed))


@router.get("/reviews/export.jsonl")
def export(request: Request, run: RunFilter = None) -> Response:
    """The reviews as a labelled set: one JSON row per reviewed judgment, a label per reviewer."""
    rows = list(store(request).reviews.labelled_rows(run_id=run or None))

    def lines() -> Iterator[bytes]:
        for row in rows:
            yield (json.dumps(row, ensure_ascii=False) + "\n").encode()

    headers = {"Content-Disposition": 'attachment; filename="jurybox-reviews.jsonl"'}
    return StreamingResponse(lines(), media_type="application/x-ndjson", headers=headers)
