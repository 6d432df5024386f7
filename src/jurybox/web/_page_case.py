"""One case of a run (``/runs/{id}/case?name=...``): every round and the whole judgment tree, nothing hidden.

The page a product manager reads to learn *why* a case failed: each round's
prompt, the agent's reply, its tool calls with arguments and results, the
follow-up exchanges and revival marks, then every verdict of the tree (cascade
tiers, jury members, checks) with status, score, reasoning, cost and which
tier decided. Reasoning is always shown, never behind a click; for ABSTAIN
and ERROR the raw model output or the exception is shown too.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, Response

from jurybox.core import CaseRecord, Context, Judgment, RoundRecord, Status
from jurybox.report import skipped_tiers, summarize_case
from jurybox.store import RunInfo, StoreBrowser
from jurybox.web import _format as fmt
from jurybox.web import _urls as urls
from jurybox.web._common import browser, json_response, render, run_summary, state, store
from jurybox.web._page_reviews import review_data, reviewable
from jurybox.web._page_run import find_run
from jurybox.web._review_flow import view_from_query
from jurybox.web._trace_link import trace_data

router = APIRouter()

RAW_KEYS = ("raw", "raw_output", "raw_replies", "parse_error")
"""Metadata of a verdict that holds what the model actually said: shown in full for ABSTAIN and ERROR."""
HISTORY_RUNS = 20


def judgment_tree(name: str, judgment: Judgment, parent: Judgment | None = None) -> dict[str, Any]:
    """A verdict and everything under it, as the page and the JSON show it."""
    metadata = dict(judgment.metadata)
    raw = {key: metadata.pop(key) for key in RAW_KEYS if key in metadata}
    skipped = metadata.pop("skipped", None) if judgment.decided_by else None
    error = judgment.error
    children = [judgment_tree(child_name, child, judgment) for child_name, child in judgment.children.items()]
    # A verdict that only repeats what a verdict under it says ("deterministic decided: <its reason>")
    # names it instead: the same reason is read once, where it comes from.
    repeated = next(
        (c["name"] for c in children if c["reasoning"] and judgment.reasoning.endswith(c["reasoning"])), None
    )
    return {
        "repeats": repeated,
        "name": name,
        "judge": judgment.judge,
        "status": judgment.status.value,
        "score": judgment.value,
        "score_text": fmt.judgment_score(judgment),
        "threshold": metadata.get("threshold"),
        "reasoning": judgment.reasoning,
        "confidence": judgment.confidence,
        "degraded": judgment.degraded,
        "decided": parent is not None and parent.decided_by == name,
        "decided_by": judgment.decided_by,
        "not_needed": [str(tier) for tier in skipped] if isinstance(skipped, list | tuple) else [],
        "checks": [{"name": c.name, "passed": c.passed, "message": c.message} for c in judgment.checks],
        "error": None
        if error is None
        else {"type": error.type, "message": error.message, "traceback": error.traceback},
        "raw": raw,
        "show_raw": bool(raw) and judgment.status in (Status.ABSTAIN, Status.ERROR),
        "cost": metadata.get("cost") if isinstance(metadata.get("cost"), int | float) else None,
        "tokens": _tokens(metadata),
        "metadata": {k: v for k, v in metadata.items() if k not in ("cost", "threshold")},
        "children": children,
    }


def _tokens(metadata: dict[str, Any]) -> Any:
    value = metadata.get("tokens", metadata.get("usage"))
    return value if isinstance(value, int | dict) else None


def context_data(context: Context) -> dict[str, Any]:
    return {
        "input": context.input,
        "output": context.output,
        "expected": context.expected,
        "messages": [{"role": m.role, "content": m.content} for m in context.messages],
        "tool_calls": [
            {"name": call.name, "arguments": dict(call.arguments), "result": call.result, "id": call.id}
            for call in context.tool_calls
        ],
        "sources": list(context.sources),
        "status": context.status,
        "duration": context.duration,
        "revived": context.metadata.get("revived") is True,
        "metadata": dict(context.metadata),
    }


def round_data(record: CaseRecord, round_: RoundRecord) -> dict[str, Any]:
    own = round_.judgment is not record.judgment and round_.judgment != record.judgment
    return {
        "index": round_.index,
        "number": round_.index + 1,
        "prompt": round_.prompt,
        "status": round_.judgment.status.value,
        "score": round_.judgment.value,
        "follow_ups": [{"question": q, "reply": a} for q, a in round_.follow_ups],
        "context": context_data(round_.context),
        # A single-round case's one verdict is the case's: shown once, below.
        "judgment": judgment_tree(f"round {round_.index + 1}", round_.judgment) if own else None,
    }


def case_data(reader: StoreBrowser, run: RunInfo, record: CaseRecord) -> dict[str, Any]:
    """The case page's data (and the JSON of ``/api/runs/{id}/case?name=...``)."""
    before, after = reader.cases.neighbours(run.id, record.case)
    rounds = [round_data(record, r) for r in record.rounds]
    show_context = record.context is not None and all(record.context != r.context for r in record.rounds)
    history = reader.cases.in_runs(run.suite, record.case, limit=HISTORY_RUNS)
    return {
        "run": run_summary(run),
        "case": {
            "name": record.case,
            "status": record.status.value,
            "score": record.score,
            "reason": summarize_case(record).reason,
            "decided_by": record.judgment.decided_by,
            "duration": record.duration,
            "tokens": record.tokens,
            "cost": record.cost,
            "cost_text": fmt.cost_label(*record.cost_parts),
            "judge_calls": record.judge_calls,
            "tags": list(record.tags),
            "error": record.error,
            "started_at": fmt.iso(record.started_at),
            "skipped_tiers": skipped_tiers(record),
            "metadata": dict(record.metadata),
        },
        "definition": reader.cases.definition(run.id, record.case),
        "rounds": rounds,
        "context": context_data(record.context) if show_context and record.context is not None else None,
        "judgment": judgment_tree("case", record.judgment),
        "history": [
            {
                "run_id": other.id,
                "started_at": fmt.iso(other.started_at),
                "status": None if status is None else status.value,
                "current": other.id == run.id,
                "html": urls.case(other.id, record.case) if status is not None else urls.run(other.id),
            }
            for other, status in reversed(history)
        ],
        "neighbours": {
            "previous": urls.case(run.id, before) if before is not None else None,
            "next": urls.case(run.id, after) if after is not None else None,
        },
        "links": {"run": urls.run(run.id), "api": urls.api(urls.case(run.id, record.case))},
    }


CaseName = Annotated[str, Query(min_length=1, max_length=512, description="The case name, exactly.")]


def _load(request: Request, run_id: str, name: str) -> tuple[RunInfo, CaseRecord]:
    run = find_run(request, run_id)
    record = browser(request).cases.record(run.id, name)
    if record is None:
        raise HTTPException(status_code=404, detail=f"Run {run.id} has no result for a case named {name!r}.")
    return run, record


def _with_reviews(request: Request, run: RunInfo, record: CaseRecord) -> dict[str, Any]:
    data = case_data(browser(request), run, record)
    data["trace"] = trace_data(run.id, record.metadata, state(request).settings.trace_url)
    data["reviewable"] = reviewable(record)
    data["reviews"] = [review_data(r) for r in store(request).reviews.reviews(run_id=run.id, case=record.case)]
    return data


QueueParam = Annotated[
    str | None, Query(max_length=4096, description="The review queue's filters, when opened from the queue.")
]


@router.get("/runs/{run_id}/case", response_class=HTMLResponse)
def case_page(request: Request, run_id: str, name: CaseName, queue: QueueParam = None) -> Response:
    run, record = _load(request, run_id, name)
    data = _with_reviews(request, run, record)
    data["queue"] = None
    if queue is not None:  # opened from the review queue: saving a review goes on to the next one
        query = view_from_query(queue).query()
        data["queue"] = {"query": query, "back": "/reviews" + (f"?{query}" if query else "")}
    return render(request, "case.html", data, title=f"{record.case} · {run.id}", nav="runs")


@router.get("/api/runs/{run_id}/case")
def case_api(request: Request, run_id: str, name: CaseName) -> Response:
    """One case: rounds, contexts, the whole judgment tree, people's reviews, and its recent runs."""
    run, record = _load(request, run_id, name)
    return json_response(_with_reviews(request, run, record))
