"""Calibrations (``/calibrations``): each judge measured against people, and one calibration in full.

The store keeps a calibration as plain JSON (see ``jurybox calibrate``); these
pages read it as data, never as the calibrate package's types, and show every
value through the templates' escaping. A run's corrected pass rates are on its
own page (``run_calibrations_data``), read from the notes stored with the run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Query, Request
from fastapi.responses import HTMLResponse, Response

from jurybox.report import CALIBRATIONS_KEY, stored_calibrations
from jurybox.store import RunInfo, Store, StoredCalibration, StoreError
from jurybox.web import _format as fmt
from jurybox.web import _urls as urls
from jurybox.web._common import json_response, paging, render, store

router = APIRouter()

PER_PAGE = 50
LISTED_FIGURES = ("accuracy", "tpr", "tnr", "kappa", "alpha", "spearman", "positional_agreement")
"""The headline figures a calibration keeps as plain numbers, in the list's column order."""
HISTORY = 20


def calibration_row(calibration: StoredCalibration) -> dict[str, Any]:
    """One stored calibration as the list (and the detail page's head) shows it."""
    identity = calibration.identity
    link = urls.calibration(calibration.id)
    return {
        "id": calibration.id,
        "judge": calibration.name,
        "key": calibration.key,
        "kind": _text(identity.get("kind")),
        "model": _text(identity.get("model")),
        "template_hash": _text(identity.get("template_hash")),
        "dataset": calibration.dataset,
        "label_kind": _text(calibration.figures.get("kind")),
        "n": _count(calibration.figures.get("n")),
        "positives": _count(calibration.figures.get("positives")),
        "negatives": _count(calibration.figures.get("negatives")),
        "figures": {name: calibration.figure(name) for name in LISTED_FIGURES},
        "created_at": fmt.iso(calibration.created_at),
        "links": {"html": link, "api": urls.api(link)},
    }


def calibrations_data(source: Store, judge: str | None, page: int, per_page: int) -> dict[str, Any]:
    """The calibrations page's data (and the JSON of ``/api/calibrations``), newest first."""
    offset, limit = paging(page, per_page)
    # Newest first with a limit, as lessons: reading up to this page and one more row tells whether a next one exists.
    found = source.calibrations.find(judge, limit=offset + limit + 1)
    number = offset // limit + 1
    return {
        "filters": {"judge": judge},
        "calibrations": [calibration_row(item) for item in found[offset : offset + limit]],
        "page": {
            "page": number,
            "per_page": limit,
            "previous": urls.calibrations(judge=judge, page=number - 1) if number > 1 else None,
            "next": urls.calibrations(judge=judge, page=number + 1) if len(found) > offset + limit else None,
        },
    }


def calibration_data(source: Store, calibration: StoredCalibration) -> dict[str, Any]:
    """One calibration in full: who the judge is, every figure with its interval, the confusion, the disagreements."""
    whole = calibration.calibration
    overall = _mapping(whole.get("overall"))
    figures = _mapping(overall.get("figures"))
    return {
        "calibration": calibration_row(calibration),
        "identity": dict(calibration.identity),
        "counts": {str(k): _count(v) for k, v in _mapping(overall.get("counts")).items()},
        "figures": [
            {"name": str(name), **{part: _number(_mapping(value).get(part)) for part in ("value", "low", "high")}}
            for name, value in figures.items()
        ],
        "confusion": _confusion(overall.get("confusion")),
        "disagreements": [_disagreement(item) for item in _list(whole.get("disagreements"))],
        "disagreement_count": _count(whole.get("disagreement_count")),
        "history": [calibration_row(item) for item in source.calibrations.find(calibration.name, limit=HISTORY)],
    }


def run_calibrations_data(run: RunInfo) -> list[dict[str, Any]]:
    """A run's judges against their calibrations, as stored with the run by ``jurybox run``."""
    notes = stored_calibrations(run.config.get(CALIBRATIONS_KEY))
    return [
        {
            **note.to_dict(),
            "links": {"calibration": urls.calibration(note.calibration_id) if note.calibration_id else None},
        }
        for note in notes
    ]


def _confusion(value: Any) -> dict[str, Any] | None:
    data = _mapping(value)
    rows, columns = [_text(r) for r in _list(data.get("rows"))], [_text(c) for c in _list(data.get("columns"))]
    counts = [[_count(c) for c in _list(row)] for row in _list(data.get("counts"))]
    if not rows or not columns or len(counts) != len(rows):
        return None
    return {"rows": rows, "columns": columns, "counts": counts}


def _disagreement(value: Any) -> dict[str, Any]:
    data = _mapping(value)
    return {
        "id": _text(data.get("id")),
        "human": data.get("human") if isinstance(data.get("human"), str | int | float) else None,
        "judge": _text(data.get("judge")),
        "confidence": _number(data.get("confidence")),
        "reasoning": _text(data.get("reasoning")) or "",
        "input": _text(data.get("input")) or "",
        "output": _text(data.get("output")) or "",
        "tags": [_text(tag) for tag in _list(data.get("tags"))],
    }


# What the store hands back is JSON someone wrote: each part is read as the type it should be, or left out.
def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


Judge = Annotated[str | None, Query(max_length=255, description="Only calibrations of the judge with this name.")]
PageNumber = Annotated[int, Query(ge=1, le=100_000)]
PerPage = Annotated[int, Query(ge=1, le=200)]
CalibrationId = Annotated[int, Path(ge=1, le=2**62)]


def _find(source: Store, calibration_id: int) -> StoredCalibration:
    try:
        return source.calibrations.get(calibration_id)
    except StoreError:
        detail = f"There is no calibration {calibration_id} in this store."
        raise HTTPException(status_code=404, detail=detail) from None


@router.get("/calibrations", response_class=HTMLResponse)
def calibrations_page(
    request: Request, judge: Judge = None, page: PageNumber = 1, per_page: PerPage = PER_PAGE
) -> Response:
    data = calibrations_data(store(request), judge or None, page, per_page)
    return render(request, "calibrations.html", data, title="Calibrations", nav="calibrations")


@router.get("/api/calibrations")
def calibrations_api(
    request: Request, judge: Judge = None, page: PageNumber = 1, per_page: PerPage = PER_PAGE
) -> Response:
    """Stored calibrations, newest first: the judge, its identity, the data set and its headline figures."""
    return json_response(calibrations_data(store(request), judge or None, page, per_page))


@router.get("/calibrations/{calibration_id}", response_class=HTMLResponse)
def calibration_page(request: Request, calibration_id: CalibrationId) -> Response:
    source = store(request)
    data = calibration_data(source, _find(source, calibration_id))
    title = f"{data['calibration']['judge']} · calibration {calibration_id}"
    return render(request, "calibration.html", data, title=title, nav="calibrations")


@router.get("/api/calibrations/{calibration_id}")
def calibration_api(request: Request, calibration_id: CalibrationId) -> Response:
    """One calibration: identity, every figure with its interval, counts, confusion matrix, disagreements."""
    source = store(request)
    return json_response(calibration_data(source, _find(source, calibration_id)))
