"""Writing cases in the browser: a suite's cases, the case form, duplicate, retire, history and revert.

Every write needs an editor's login and the form's CSRF token, goes through
``Store.authoring`` (each save names the version it started from, so a second
writer's save is refused with the difference instead of overwriting the first)
and is written to the audit log. A case is checked by the suite loader before it
is saved (``_case_check``): a problem is shown next to its field in the words
``jurybox run`` would use. What runs code on the server (the suite's agent, SQL
checks, judges that run commands or pick a model) is an admin's to change.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlencode

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from jurybox.store import CaseVersion, EditConflictError, Login, StoreError
from jurybox.web import _format as fmt
from jurybox.web._auth import check_csrf, read_form, require
from jurybox.web._case_check import as_yaml, check_agent, check_case, diff_lines, privileged_parts
from jurybox.web._case_form import (
    FIELDS,
    PASS_MARK_RANGE,
    CaseForm,
    FormError,
    definition_of,
    field_of,
    form_of,
    ordered,
    yaml_mapping,
)
from jurybox.web._common import json_response, login_of, render, store
from jurybox.web._edit_urls import case_form_url, edit_url, history_url, start_run_url

router = APIRouter()

MAX_NAME = 200
CaseName = Annotated[str, Query(min_length=1, max_length=512, description="The case's name.")]
NewCaseName = Annotated[str | None, Query(max_length=512, description="The case's name (none: a new case).")]


def _versions(request: Request, suite: str) -> list[CaseVersion]:
    try:
        return store(request).authoring.case_versions(suite, include_retired=True)
    except StoreError:
        raise HTTPException(status_code=404, detail=f"There is no suite {suite!r} in this store.") from None


def _suite_file(request: Request, suite: str) -> dict[str, Any]:
    try:
        return store(request).suites.export(suite)
    except StoreError:
        raise HTTPException(status_code=404, detail=f"There is no suite {suite!r} in this store.") from None


def _may_edit(request: Request) -> bool:
    login = login_of(request)
    return login is not None and login.user.may("editor")


def _list_data(request: Request, suite: str) -> dict[str, Any]:
    versions = _versions(request, suite)
    exported = _suite_file(request, suite)
    cases = []
    for version in versions:
        definition = version.definition
        rounds = definition.get("rounds")
        tags = definition.get("tags")
        cases.append(
            {
                "name": version.name,
                "version": version.id,
                "number": version.number,
                "versions": version.versions,
                "current": version.current,
                "description": str(definition.get("description") or ""),
                "tags": [str(t) for t in tags] if isinstance(tags, list) else [],
                "rounds": len(rounds) if isinstance(rounds, list) else 1,
                "saved_at": fmt.iso(version.created_at),
                "links": {"edit": case_form_url(suite, version.name), "history": history_url(suite, version.name)},
            }
        )
    return {
        "suite": suite,
        "agent": exported.get("agent"),
        "defaults": exported.get("defaults"),
        "cases": cases,
        "links": {"new": case_form_url(suite, None), "self": edit_url(suite), "run": start_run_url(suite)},
    }


@router.get("/suites/{suite:path}/edit", response_class=HTMLResponse)
def cases_page(request: Request, suite: str, saved: NewCaseName = None) -> Response:
    return _cases_response(request, suite, saved=saved)


def _cases_response(
    request: Request,
    suite: str,
    agent_text: str | None = None,
    agent_errors: list[str] | None = None,
    *,
    saved: str | None = None,
) -> Response:
    data = _list_data(request, suite)
    login = login_of(request)
    # The confirmation of a save: the case and its version, as the list now shows it.
    data["saved"] = next(
        (
            {"name": c["name"], "number": c["number"], "href": c["links"]["edit"]}
            for c in data["cases"]
            if c["name"] == saved
        ),
        None,
    )
    extra = {
        "may_edit": _may_edit(request),
        "may_admin": login is not None and login.user.may("admin"),
        "agent_yaml": as_yaml(data["agent"]) if data["agent"] else "",
        "agent_text": agent_text if agent_text is not None else (as_yaml(data["agent"]) if data["agent"] else ""),
        "agent_errors": agent_errors or [],
    }
    status = 422 if agent_errors else 200
    title = f"{suite}: cases"
    return render(request, "edit_suite.html", data, title=title, nav="suites", status_code=status, extra=extra)


@router.post("/suites/{suite:path}/edit/agent")
async def set_agent(request: Request, suite: str) -> Response:
    """An admin changes the suite's agent (it runs on the server): checked by building it, as a run would."""
    login = require(request, "admin")
    form = await read_form(request, ("agent",))
    check_csrf(login, form)
    text = form.get("agent", "")
    exported = _suite_file(request, suite)
    try:
        agent = yaml_mapping(text, "agent", "the agent is a YAML mapping: python:, openai:, http: or mcp:")
        folder = store(request).suites.folder(suite)
        problems = (
            check_agent(exported, agent, Path(folder) if folder else None)
            if agent
            else ["agent: the suite needs an agent"]
        )
    except FormError as exc:
        problems = [f"agent: {exc}"]
    if problems:
        return _cases_response(request, suite, text, problems)
    store(request).authoring.set_agent(suite, agent)
    store(request).users.audit(login.user.name, "suite.agent", suite, {"suite": suite, "agent": agent})
    return RedirectResponse(edit_url(suite) + "#agent", status_code=303)


@router.get("/api/suites/{suite:path}/edit")
def cases_api(request: Request, suite: str) -> Response:
    """The suite's cases as stored (current and retired), with the suite's agent and defaults."""
    return json_response(_list_data(request, suite))


def _render_form(
    request: Request,
    suite: str,
    name: str | None,
    form: CaseForm,
    *,
    status_code: int = 200,
    conflict: list[dict[str, str]] | None = None,
    suite_problems: list[str] | None = None,
    version: CaseVersion | None = None,
) -> Response:
    data = {"suite": suite, "case": name, **form.view()}
    data["version"] = (
        {"number": version.number, "versions": version.versions, "current": version.current} if version else None
    )
    extra = {
        "may_edit": _may_edit(request),
        "conflict": conflict,
        "suite_problems": suite_problems or [],
        "action": case_form_url(suite, name),
        "back": edit_url(suite),
        "history": history_url(suite, name) if name else None,
        "no_json": True,
    }
    title = f"{suite}: {name}" if name else f"{suite}: new case"
    return render(request, "edit_case.html", data, title=title, nav="suites", status_code=status_code, extra=extra)


@router.get("/suites/{suite:path}/edit/case", response_class=HTMLResponse)
def case_form(request: Request, suite: str, name: NewCaseName = None) -> Response:
    if not name:
        _versions(request, suite)  # a 404 for a suite that is not there
        return _render_form(request, suite, None, form_of(None, None))
    found = next((v for v in _versions(request, suite) if v.name == name), None)
    if found is None:
        raise HTTPException(status_code=404, detail=f"Suite {suite!r} has no case {name!r}.")
    # A retired case opens with its last version; saving it brings it back.
    form = form_of(found.definition, found.id if found.current else None)
    return _render_form(request, suite, name, form, version=found)


def _out_of_range(message: str) -> bool:
    return "less than or equal to" in message or "greater than or equal to" in message


def _base_version(text: str) -> int | None:
    if text == "":
        return None
    if not text.isdigit() or len(text) > 18:
        raise HTTPException(status_code=400, detail="Bad request: base_version is a version number.")
    return int(text)


@router.post("/suites/{suite:path}/edit/case")
async def save_case(request: Request, suite: str, name: NewCaseName = None) -> Response:
    login = require(request, "editor")
    posted = await read_form(request, FIELDS)
    check_csrf(login, posted)
    base = _base_version(posted.get("base_version", ""))
    authoring = store(request).authoring
    exported = _suite_file(request, suite)
    existing = authoring.current_version(suite, name) if name else None
    form = form_of(None, base)
    form.values.update({k: v for k, v in posted.items() if k in form.values})
    for index, one in enumerate(form.rounds):
        one.update({k: posted.get(f"r{index}_{k}", "") for k in one})
    original = existing.definition if existing is not None else None
    try:
        definition, rounds_from = definition_of(posted, original)
    except FormError as exc:
        form.add_error(exc.field, str(exc))
        return _render_form(request, suite, name, form, status_code=422)
    case = definition["name"]
    if len(case) > MAX_NAME:
        form.add_error("name", f"a case name is at most {MAX_NAME} characters")
    elif name and case != name:
        form.add_error("name", "to rename a case, duplicate it under the new name and retire this one")
    elif not login.user.may("admin") and privileged_parts(definition) != privileged_parts(original or {}):
        form.add_error(
            "other",
            "only an admin may add or change SQL checks, judges that run code or read files "
            "(python, command, build, code_coverage, file_*) or a judge's model or database",
        )
    if form.errors:
        return _render_form(request, suite, name, form, status_code=422)
    problems, elsewhere, spec = check_case(exported, definition, name)
    for path, message in problems:
        where = field_of(path, rounds_from)
        form.add_error(where, PASS_MARK_RANGE if where.endswith("threshold") and _out_of_range(message) else message)
    if form.errors:
        return _render_form(request, suite, name, form, status_code=422, suite_problems=elsewhere)
    definition = ordered(spec) if spec is not None else definition
    action: Literal["create", "edit"] = "edit" if name and base is not None else "create"
    try:
        version = authoring.save_case(suite, case, definition, author=login.user.name, base_version=base, action=action)
    except EditConflictError as exc:
        return _conflict(request, suite, name, form, definition, exc)
    except StoreError:
        raise HTTPException(status_code=404, detail=f"There is no suite {suite!r} in this store.") from None
    _audit(request, login, f"case.{action}", suite, case, {"version": version, "base_version": base})
    return RedirectResponse(f"{edit_url(suite)}?{urlencode({'saved': case})}#saved", status_code=303)


def _conflict(
    request: Request, suite: str, name: str | None, form: CaseForm, mine: dict[str, Any], exc: EditConflictError
) -> Response:
    now_there = exc.current
    label = f"saved now (version {now_there.id})" if now_there is not None else "saved now"
    diff = diff_lines(
        as_yaml(now_there.definition if now_there is not None else None),
        as_yaml(mine),
        before_label=label,
        after_label="yours (not saved)",
    )
    form.values["base_version"] = str(now_there.id) if now_there is not None else ""
    form.add_error("case", str(exc))
    return _render_form(request, suite, name, form, status_code=409, conflict=diff)


def _audit(request: Request, login: Login, action: str, suite: str, case: str, detail: dict[str, Any]) -> None:
    store(request).users.audit(login.user.name, action, f"{suite}/{case}", {"suite": suite, "case": case, **detail})


def _case_field(form: dict[str, str], field: str = "case") -> str:
    value = form.get(field, "")
    if not value or len(value) > 512:
        raise HTTPException(status_code=400, detail=f"Bad request: {field} names a case of the suite.")
    return value


@router.post("/suites/{suite:path}/edit/duplicate")
async def duplicate_case(request: Request, suite: str) -> Response:
    login = require(request, "editor")
    form = await read_form(request, ("case", "new_name"))
    check_csrf(login, form)
    case = _case_field(form)
    new_name = form.get("new_name", "").strip()
    if not new_name or len(new_name) > MAX_NAME:
        raise HTTPException(
            status_code=400, detail=f"Bad request: the copy needs a name of 1 to {MAX_NAME} characters."
        )
    try:
        version = store(request).authoring.duplicate_case(suite, case, new_name, author=login.user.name)
    except EditConflictError:
        raise HTTPException(status_code=409, detail=f"Suite {suite!r} already has a case {new_name!r}.") from None
    except StoreError as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from None
    _audit(request, login, "case.duplicate", suite, new_name, {"from": case, "version": version})
    return RedirectResponse(case_form_url(suite, new_name), status_code=303)


@router.post("/suites/{suite:path}/edit/retire")
async def retire_case(request: Request, suite: str) -> Response:
    login = require(request, "editor")
    form = await read_form(request, ("case", "base_version"))
    check_csrf(login, form)
    case = _case_field(form)
    base = _base_version(form.get("base_version", ""))
    if base is None:
        raise HTTPException(status_code=400, detail="Bad request: base_version names the version you retire.")
    try:
        store(request).authoring.retire_case(suite, case, author=login.user.name, base_version=base)
    except EditConflictError as exc:
        raise HTTPException(status_code=409, detail=f"{exc}. Reload the page and try again.") from None
    except StoreError as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from None
    _audit(request, login, "case.retire", suite, case, {"base_version": base})
    return RedirectResponse(edit_url(suite), status_code=303)


def _history_data(request: Request, suite: str, name: str) -> dict[str, Any]:
    _versions(request, suite)
    edits = store(request).authoring.case_history(suite, name)
    if not edits:
        raise HTTPException(status_code=404, detail=f"Suite {suite!r} has no case {name!r}.")
    current = store(request).authoring.current_version(suite, name)
    numbers = store(request).authoring.version_numbers(suite, name)
    rows = []
    for index, edit in enumerate(edits):
        before = edits[index + 1] if index + 1 < len(edits) else None
        old = as_yaml(before.definition) if before is not None else ""
        rows.append(
            {
                "id": edit.id,
                "action": edit.action,
                "author": edit.author,
                "at": fmt.iso(edit.created_at),
                "version": edit.version_id,
                "number": numbers.get(edit.version_id) if edit.version_id is not None else None,
                "current": current is not None and edit.version_id == current.id,
                "diff": diff_lines(old, as_yaml(edit.definition), before_label="before", after_label="after"),
            }
        )
    return {
        "suite": suite,
        "case": name,
        "current_version": current.id if current is not None else None,
        "edits": rows,
        "links": {"edit": case_form_url(suite, name), "cases": edit_url(suite)},
    }


@router.get("/suites/{suite:path}/edit/history", response_class=HTMLResponse)
def history_page(request: Request, suite: str, name: CaseName) -> Response:
    data = _history_data(request, suite, name)
    extra = {"may_edit": _may_edit(request)}
    return render(request, "edit_history.html", data, title=f"{name}: history", nav="suites", extra=extra)


@router.get("/api/suites/{suite:path}/edit/history")
def history_api(request: Request, suite: str, name: CaseName) -> Response:
    """Every change to a case, newest first: who, when, what, and the diff from the version before."""
    return json_response(_history_data(request, suite, name))


@router.post("/suites/{suite:path}/edit/revert")
async def revert_case(request: Request, suite: str) -> Response:
    login = require(request, "editor")
    form = await read_form(request, ("case", "version", "base_version"))
    check_csrf(login, form)
    case = _case_field(form)
    target = _base_version(form.get("version", ""))
    if target is None:
        raise HTTPException(status_code=400, detail="Bad request: version names the version to go back to.")
    base = _base_version(form.get("base_version", ""))
    _versions(request, suite)  # a 404 for a suite that is not there
    authoring = store(request).authoring
    old = authoring.version(target)
    known = {edit.version_id for edit in authoring.case_history(suite, case)}
    if old is None or old.name != case or target not in known:
        raise HTTPException(status_code=404, detail=f"Case {case!r} of suite {suite!r} has no version {target}.")
    current = authoring.current_version(suite, case)
    before = current.definition if current is not None else {}
    if not login.user.may("admin") and privileged_parts(old.definition) != privileged_parts(before):
        raise HTTPException(
            status_code=403,
            detail="Only an admin may go back to this version: it changes SQL checks, judges that run code "
            "or a judge's model.",
        )
    try:
        version = authoring.revert_case(suite, case, target, author=login.user.name, base_version=base)
    except EditConflictError as exc:
        raise HTTPException(status_code=409, detail=f"{exc}. Reload the history and try again.") from None
    except StoreError as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from None
    _audit(request, login, "case.revert", suite, case, {"to": target, "version": version, "base_version": base})
    return RedirectResponse(history_url(suite, case), status_code=303)
