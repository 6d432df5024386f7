"""Two runs side by side (``/compare?a=...&b=...``): what broke, what was fixed, what moved, per case and per judge.

The figures are those of ``jurybox compare A B``: the same runs (ids, unique
prefixes or ``last``, resolved by the store), the same definitions of a flip,
a new error and a score change, the same latency statistics, and the same
paired statistics (``paired``: the pass-rate difference with its interval and
McNemar test, the paired mean differences, the judge-corrected differences),
computed by the same function. The URL is the comparison, so it can be shared.

The page comes at once: the counts and the first page of two final runs are kept once
computed (``run_comparisons``), and so are the paired statistics; when those are not
kept yet and the runs are big (``WebSettings.compare_inline_cases``), the page shows
"counting" and "computing" and fetches those parts after it (htmx): the changes from
this URL (``HX-Target: changes``), the statistics from ``/compare/paired``, each of
which computes and keeps them. Either way the figures are the ones ``/api/compare``
returns.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, Response

from jurybox.store import COMPARE_KINDS, ComparedSide, JudgeStats, RunInfo, StoreBrowser, StoreError, first_kind
from jurybox.web import _urls as urls
from jurybox.web._common import (
    PER_PAGE,
    PageNumber,
    PerPage,
    browser,
    is_fragment,
    json_response,
    page_info,
    paging,
    render,
    run_summary,
    state,
    store,
)

router = APIRouter()

KIND_LABELS = {
    "broke": "Newly failing",
    "fixed": "Newly passing",
    "still_failing": "Still failing",
    "scores": "Score changed",
    "new_errors": "New errors",
    "status": "Status changed",
    "only_a": "Only in A (removed)",
    "only_b": "Only in B (added)",
}


def _delta(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else b - a


def _figure(a: Any, b: Any, change: Any) -> dict[str, Any]:
    return {"a": a, "b": b, "change": change}


def _side(side: ComparedSide | None) -> dict[str, Any] | None:
    if side is None:
        return None
    return {"status": side.status.value, "score": side.score, "duration": side.duration}


def judges_data(a: tuple[JudgeStats, ...], b: tuple[JudgeStats, ...]) -> list[dict[str, Any]]:
    """Each judge (verdict-tree path) in both runs, the biggest change of mean score or pass rate first."""
    by_a = {j.path: j for j in a}
    by_b = {j.path: j for j in b}
    rows = []
    for path in sorted(set(by_a) | set(by_b)):
        ja, jb = by_a.get(path), by_b.get(path)
        either = jb or ja
        assert either is not None
        score_change = _delta(ja.mean_score if ja else None, jb.mean_score if jb else None)
        rate_change = _delta(ja.rate if ja else None, jb.rate if jb else None)
        rows.append(
            {
                "path": path,
                "judge": either.judge,
                "a": None if ja is None else {"ran": ja.ran, "rate": ja.rate, "mean_score": ja.mean_score},
                "b": None if jb is None else {"ran": jb.ran, "rate": jb.rate, "mean_score": jb.mean_score},
                "rate_change": rate_change,
                "score_change": score_change,
            }
        )
    return sorted(rows, key=_size_of_change)


def _size_of_change(row: dict[str, Any]) -> tuple[float, float, str]:
    score_change: float | None = row["score_change"]
    rate_change: float | None = row["rate_change"]
    return (-abs(score_change or 0.0), -abs(rate_change or 0.0), str(row["path"]))


def compare_data(
    reader: StoreBrowser,
    a: RunInfo,
    b: RunInfo,
    kind: str | None,
    page: int,
    per_page: int,
    *,
    later: bool = False,
    paired_later: bool | None = None,
) -> dict[str, Any]:
    """The compare page's data (and the JSON of ``/api/compare``).

    With ``later`` (the HTML page of two big runs) the parts that join both runs case by
    case are included only when ready without the join (kept, or in memory): otherwise
    ``counts`` (with the cases) or ``paired`` is None, and the page fetches them from
    ``links.changes`` and ``links.paired``, which compute (and keep) them.
    ``paired_later`` says it of the statistics alone (the counts' own request leaves them
    to theirs); None: as ``later``.
    """
    comparisons = reader.comparisons
    summary = comparisons.compare_ready(a, b) if later else comparisons.compare(a, b)
    paired_later = later if paired_later is None else paired_later
    paired = comparisons.paired_ready(a, b) if paired_later else comparisons.paired(a, b)
    stats_a, stats_b = reader.stats.of(a), reader.stats.of(b)
    la, lb = stats_a.latency, stats_b.latency  # what the comparison's latency figures are made of
    counts = None if summary is None else summary.counts
    chosen = kind or (first_kind(counts) if counts is not None else None)
    offset, limit = paging(page, per_page)
    cases = None
    if summary is not None and chosen is not None:
        cases = comparisons.cases(summary, chosen, offset=offset, limit=limit)

    def link(number: int) -> str:
        return urls.compare(a.id, b.id, kind=chosen, page=number, per_page=per_page if per_page != PER_PAGE else None)

    shown = {"kind": kind, "page": page if page > 1 else None, "per_page": per_page if per_page != PER_PAGE else None}
    return {
        "a": run_summary(a),
        "b": run_summary(b),
        "same_suite": a.suite == b.suite,
        "figures": {
            "cases": _figure(a.recorded, b.recorded, b.recorded - a.recorded),
            "pass_rate": _figure(a.pass_rate, b.pass_rate, _delta(a.pass_rate, b.pass_rate)),
            "errors": _figure(a.errored, b.errored, b.errored - a.errored),
            # No difference of two costs when either is only partly known: it would pass for exact.
            "cost": _figure(a.cost, b.cost, _cost_delta(a, b)),
            "tokens": _figure(
                a.tokens, b.tokens, None if a.tokens is None or b.tokens is None else b.tokens - a.tokens
            ),
            "latency_mean": _figure(la.mean, lb.mean, _delta(la.mean, lb.mean)),
            "latency_p50": _figure(la.p50, lb.p50, _delta(la.p50, lb.p50)),
            "latency_p95": _figure(la.p95, lb.p95, _delta(la.p95, lb.p95)),
        },
        "common": None if summary is None else summary.common,
        "paired": None if paired is None else paired.to_dict(),
        "flipped": None if summary is None else summary.flipped,
        "counts": counts,
        "kind": chosen,
        "kinds": [
            {
                "kind": k,
                "label": KIND_LABELS[k],
                "count": n,
                "html": urls.compare(a.id, b.id, kind=k),
                "current": k == chosen,
            }
            for k, n in (counts or {}).items()
        ],
        "rows": [
            {
                "case": item.case,
                "a": _side(item.a),
                "b": _side(item.b),
                "score_delta": item.score_delta,
                "links": {
                    "a": urls.case(a.id, item.case) if item.a else None,
                    "b": urls.case(b.id, item.case) if item.b else None,
                },
            }
            for item in (cases.items if cases is not None else ())
        ],
        "page": None if cases is None else page_info(cases, link),
        "judges": judges_data(stats_a.judges, stats_b.judges),
        "links": {
            "swap": urls.compare(b.id, a.id),
            "paired": urls.compare_paired(a.id, b.id),
            "changes": urls.compare(a.id, b.id, **shown, now=1),
            "api": urls.api(urls.compare(a.id, b.id)),
            "cli": f"jurybox compare {a.id} {b.id}",
        },
    }


def _cost_delta(a: RunInfo, b: RunInfo) -> float | None:
    """B's cost minus A's (``ComparisonSummary.cost_delta``, without the counts): None unless both are exact."""
    if not (a.cost_exact and b.cost_exact) or a.cost is None or b.cost is None:
        return None
    return b.cost - a.cost


def _resolve(request: Request, ref: str, label: str) -> RunInfo:
    reader = browser(request)
    found = reader.runs.find(ref)
    if found is not None:
        return found
    try:
        resolved = store(request).runs.resolve(ref)
    except StoreError as exc:
        raise HTTPException(status_code=404, detail=f"Run {label}: {exc}") from exc
    exact = reader.runs.find(resolved.id)
    assert exact is not None
    return exact


RunRef = Annotated[str | None, Query(max_length=64, description="Run id, unique id prefix or 'last'.")]
Kind = Annotated[str | None, Query(pattern="^(" + "|".join(COMPARE_KINDS) + ")?$", description="Which cases to list.")]


def _picker(request: Request, a: str | None, b: str | None) -> dict[str, Any]:
    recent = browser(request).runs.page(limit=100).items
    return {
        "picker": True,
        "a_ref": a or "",
        "b_ref": b or "",
        "runs": [
            {"id": r.id, "suite": r.suite, "status": r.status, "started_at": r.started_at.isoformat()} for r in recent
        ],
    }


Now = Annotated[bool, Query(description="Count and compute everything before answering (no part comes later).")]


@router.get("/compare", response_class=HTMLResponse)
def compare_page(
    request: Request,
    a: RunRef = None,
    b: RunRef = None,
    kind: Kind = None,
    page: PageNumber = 1,
    per_page: PerPage = PER_PAGE,
    now: Now = False,
) -> Response:
    if not a or not b:
        return render(request, "compare_pick.html", _picker(request, a, b), title="Compare two runs", nav="compare")
    run_a, run_b = _resolve(request, a, "A"), _resolve(request, b, "B")
    # Two big runs compared for the first time take seconds to join: their page comes first, those parts after.
    later = not now and run_a.recorded + run_b.recorded >= state(request).settings.compare_inline_cases
    refresh = run_a.status == "running" or run_b.status == "running"
    reader = browser(request)
    if is_fragment(request, "changes"):
        # The counts and the cases only: the statistics come by their own request, beside this one.
        data = compare_data(reader, run_a, run_b, kind or None, page, per_page, paired_later=True)
        return render(request, "compare_changes.html", data, title="What changed", refresh=refresh)
    data = compare_data(reader, run_a, run_b, kind or None, page, per_page, later=later)
    return render(
        request, "compare.html", data, title=f"Compare {run_a.id} → {run_b.id}", refresh=refresh, nav="compare"
    )


@router.get("/api/compare")
def compare_api(
    request: Request,
    a: Annotated[str, Query(max_length=64, description="Run A (the earlier): id, unique prefix or 'last'.")],
    b: Annotated[str, Query(max_length=64, description="Run B (the later): id, unique prefix or 'last'.")],
    kind: Kind = None,
    page: PageNumber = 1,
    per_page: PerPage = PER_PAGE,
) -> Response:
    """Run A against run B: the figures of ``jurybox compare``, per-judge changes and one page of cases of a kind."""
    run_a, run_b = _resolve(request, a, "A"), _resolve(request, b, "B")
    return json_response(compare_data(browser(request), run_a, run_b, kind or None, page, per_page))


def paired_data(reader: StoreBrowser, a: RunInfo, b: RunInfo) -> dict[str, Any]:
    """The paired statistics of B against A alone (``/compare/paired``, fetched by the compare page)."""
    return {
        "a": a.id,
        "b": b.id,
        "paired": reader.comparisons.paired(a, b).to_dict(),
        "links": {"compare": urls.compare(a.id, b.id), "api": urls.api(urls.compare_paired(a.id, b.id))},
    }


@router.get("/compare/paired", response_class=HTMLResponse)
def paired_page(
    request: Request,
    a: Annotated[str, Query(max_length=64, description="Run A: id, unique prefix or 'last'.")],
    b: Annotated[str, Query(max_length=64, description="Run B: id, unique prefix or 'last'.")],
) -> Response:
    """The compare page's statistics section (for htmx), or a page of its own (a plain link)."""
    run_a, run_b = _resolve(request, a, "A"), _resolve(request, b, "B")
    data = paired_data(browser(request), run_a, run_b)
    if is_fragment(request, "paired"):
        return render(request, "compare_paired.html", data, title="Is B better than A?")
    title = f"Statistics · {run_a.id} → {run_b.id}"
    return render(request, "compare_paired_page.html", data, title=title, nav="compare")


@router.get("/api/compare/paired")
def paired_api(
    request: Request,
    a: Annotated[str, Query(max_length=64, description="Run A: id, unique prefix or 'last'.")],
    b: Annotated[str, Query(max_length=64, description="Run B: id, unique prefix or 'last'.")],
) -> Response:
    """Run B against run A: the paired statistics alone (pass-rate difference, mean differences, corrected)."""
    run_a, run_b = _resolve(request, a, "A"), _resolve(request, b, "B")
    return json_response(paired_data(browser(request), run_a, run_b))
