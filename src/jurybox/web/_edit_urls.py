"""The links of the case editor's pages (suite and case names always go through ``quote``/``urlencode``)."""

from __future__ import annotations

from urllib.parse import quote, urlencode


def edit_url(suite: str) -> str:
    return f"/suites/{quote(suite, safe='')}/edit"


def case_form_url(suite: str, case: str | None) -> str:
    return edit_url(suite) + "/case" + (f"?{urlencode({'name': case})}" if case else "")


def history_url(suite: str, case: str) -> str:
    return edit_url(suite) + "/history?" + urlencode({"name": case})


def start_run_url(suite: str) -> str:
    return f"/suites/{quote(suite, safe='')}/run"
