"""Lessons (``/lessons``): what each regression taught, with the run and the comparison that show it."""

from __future__ import annotations

import re
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, Response

from jurybox.store import Lesson, Store, StoreBrowser
from jurybox.web import _format as fmt
from jurybox.web import _urls as urls
from jurybox.web._common import browser, json_response, paging, render, store

router = APIRouter()

PER_PAGE = 20
_ROUND_SUFFIX = re.compile(r" \(round \d+\)$")
"""A tier lesson names a multi-round case's failing round as ``name (round 2)``."""


def lesson_data(reader: StoreBrowser, lesson: Lesson) -> dict[str, Any]:
    run = reader.runs.find(lesson.run_id)
    previous = reader.runs.previous(run) if run is not None else None
    return {
        "id": lesson.id,
        "suite": lesson.suite,
        "run_id": lesson.run_id,
        "metric": lesson.metric,
        "baseline": lesson.baseline,
        "current": lesson.current,
        "drop": lesson.drop,
        "threshold": lesson.threshold,
        "created_at": fmt.iso(lesson.created_at),
        "text": lesson.text,
        "failing": [
            {
                "case": str(item.get("case", "")),
                "status": str(item.get("status", "")),
                "reason": str(item.get("reason") or ""),
                "html": urls.case(lesson.run_id, _ROUND_SUFFIX.sub("", str(item.get("case", "")))),
            }
            for item in lesson.failing
            if isinstance(item, dict)
        ],
        "links": {
            "run": urls.run(lesson.run_id),
            "compare_previous": urls.compare(previous.id, lesson.run_id) if previous is not None else None,
            "trends": urls.trends(lesson.suite),
        },
    }


def lessons_data(
    source: Store, reader: StoreBrowser, suite: str | None, topic: str | None, page: int, per_page: int
) -> dict[str, Any]:
    """The lessons page's data (and the JSON of ``/api/lessons``), newest first."""
    offset, limit = paging(page, per_page)
    # The store reads lessons newest first with a limit; lessons are few (one per regression), so
    # reading up to this page and one more row tells whether a next page exists.
    found = source.lessons.find(suite, topic=topic, limit=offset + limit + 1)
    shown = found[offset : offset + limit]
    more = len(found) > offset + limit
    filters = {"suite": suite, "topic": topic}
    number = offset // limit + 1
    return {
        "filters": filters,
        "suites": reader.suites.names(),
        "lessons": [lesson_data(reader, lesson) for lesson in shown],
        "page": {
            "page": number,
            "per_page": limit,
            "previous": urls.lessons(**filters, page=number - 1) if number > 1 else None,
            "next": urls.lessons(**filters, page=number + 1) if more else None,
        },
    }


Suite = Annotated[str | None, Query(max_length=512, description="Only lessons of this suite.")]
Topic = Annotated[str | None, Query(max_length=200, description="A tier name, or a word of the lesson.")]
PageNumber = Annotated[int, Query(ge=1, le=100_000)]
PerPage = Annotated[int, Query(ge=1, le=100)]


@router.get("/lessons", response_class=HTMLResponse)
def lessons_page(
    request: Request, suite: Suite = None, topic: Topic = None, page: PageNumber = 1, per_page: PerPage = PER_PAGE
) -> Response:
    data = lessons_data(store(request), browser(request), suite or None, topic or None, page, per_page)
    return render(request, "lessons.html", data, title="Lessons", nav="lessons")


@router.get("/api/lessons")
def lessons_api(
    request: Request, suite: Suite = None, topic: Topic = None, page: PageNumber = 1, per_page: PerPage = PER_PAGE
) -> Response:
    """Stored lessons, newest first: the regression, the baseline, the drop and the failing cases."""
    return json_response(lessons_data(store(request), browser(request), suite or None, topic or None, page, per_page))
