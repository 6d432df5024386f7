"""Every link the dashboard makes, in one place, for the pages and their JSON twins.

Case names, suite names and search text come from the store and from users:
they only ever go into a URL through ``urlencode``/``quote`` with nothing left
unescaped, and every link is a path on this server (no scheme, no host), so a
case named ``javascript:alert(1)`` is a harmless query value.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlencode


def _query(params: dict[str, Any]) -> str:
    kept = {key: value for key, value in params.items() if value is not None and value != ""}
    return "?" + urlencode(kept) if kept else ""


def runs(**params: Any) -> str:
    return "/runs" + _query(params)


def run(run_id: str, **params: Any) -> str:
    return f"/runs/{quote(run_id, safe='')}" + _query(params)


def case(run_id: str, name: str) -> str:
    return f"/runs/{quote(run_id, safe='')}/case" + _query({"name": name})


def compare(a: str, b: str, **params: Any) -> str:
    return "/compare" + _query({"a": a, "b": b, **params})


def compare_paired(a: str, b: str) -> str:
    return "/compare/paired" + _query({"a": a, "b": b})


def experiments() -> str:
    return "/experiments"


def experiment(experiment_id: str, **params: Any) -> str:
    return f"/experiments/{quote(experiment_id, safe='')}" + _query(params)


def suites() -> str:
    return "/suites"


def trends(suite: str, **params: Any) -> str:
    return f"/suites/{quote(suite, safe='')}/trends" + _query(params)


def case_history(suite: str, **params: Any) -> str:
    return f"/suites/{quote(suite, safe='')}/cases" + _query(params)


def lessons(**params: Any) -> str:
    return "/lessons" + _query(params)


def calibrations(**params: Any) -> str:
    return "/calibrations" + _query(params)


def calibration(calibration_id: int) -> str:
    return f"/calibrations/{int(calibration_id)}"


def api(path: str) -> str:
    """The JSON twin of a page's URL."""
    return "/api" + path


URLS = {
    "runs": runs,
    "run": run,
    "case": case,
    "compare": compare,
    "suites": suites,
    "trends": trends,
    "case_history": case_history,
    "lessons": lessons,
    "calibrations": calibrations,
    "calibration": calibration,
    "api": api,
}
"""What templates call as ``url.run(...)`` and so on."""
