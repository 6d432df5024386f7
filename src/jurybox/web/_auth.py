"""Logins and the rules every write follows: a session cookie, a CSRF token per form, a role per action.

Reading may stay open on 127.0.0.1; anything that writes needs a login. A user
logs in with the token ``jurybox web add-user`` printed; the session cookie is
HttpOnly and SameSite=Strict (Secure over HTTPS), and the store keeps only its
hash. Every form carries the login's CSRF token, compared in constant time; a
form post is read with a size cap, urlencoded only, unknown fields refused, so
bad input is a 400 in words and never a 500 or a write.
"""

from __future__ import annotations

import secrets
from collections.abc import Collection
from datetime import UTC, datetime
from typing import Annotated
from urllib.parse import parse_qsl

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from jurybox.store import Login, Role
from jurybox.web._common import SESSION_COOKIE, json_response, login_of, render, store

router = APIRouter()

LOGIN_COOKIE = "jurybox_login_csrf"
MAX_FORM_BYTES = 64 * 1024
"""A form post larger than this is refused (a note is at most 10,000 characters)."""


def require(request: Request, role: Role) -> Login:
    """The login, when its role may do what needs ``role``; a 401 or 403 in words otherwise."""
    login = login_of(request)
    if login is None:
        raise HTTPException(status_code=401, detail="Log in to do this (your session may have expired): /login")
    if not login.user.may(role):
        raise HTTPException(status_code=403, detail=f"{login.user.name} is a {login.user.role}; this needs {role}.")
    return login


async def read_form(request: Request, fields: Collection[str]) -> dict[str, str]:
    """A urlencoded form of these fields only (``csrf`` is always allowed), at most ``MAX_FORM_BYTES``."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/x-www-form-urlencoded":
        raise HTTPException(status_code=400, detail="Bad request: send the form as application/x-www-form-urlencoded.")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            raise HTTPException(status_code=413, detail=f"Bad request: a form is at most {MAX_FORM_BYTES:,} bytes.")
    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, strict_parsing=False, max_num_fields=50)
    except (UnicodeDecodeError, ValueError):
        raise HTTPException(status_code=400, detail="Bad request: the form is not valid UTF-8 form data.") from None
    allowed = {*fields, "csrf"}
    unknown = sorted({name for name, _ in pairs if name not in allowed})
    if unknown:
        raise HTTPException(status_code=400, detail=f"Bad request: unknown field(s) {', '.join(unknown)[:200]}.")
    form: dict[str, str] = {}
    for name, value in pairs:
        if name in form:
            raise HTTPException(status_code=400, detail=f"Bad request: field {name} is given twice.")
        form[name] = value
    return form


def check_csrf(login: Login, form: dict[str, str]) -> None:
    """The form must carry this login's CSRF token (a page of this server put it there)."""
    sent = form.get("csrf", "")
    if not sent or not secrets.compare_digest(sent.encode(), login.csrf_token.encode()):
        raise HTTPException(status_code=403, detail="This form is out of date or was not sent by this dashboard.")


def local_path(target: str | None) -> str:
    """Where to go after a login: a path on this server only (never ``//host`` or a scheme)."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/runs"
    return target


def _cookie(response: Response, request: Request, name: str, value: str, *, max_age: int | None) -> None:
    response.set_cookie(
        name,
        value,
        max_age=max_age,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
        path="/",
    )


NextPath = Annotated[str | None, Query(max_length=2048, alias="next")]


@router.get("/login", response_class=HTMLResponse)
def login_page(request: Request, next_path: NextPath = None) -> Response:
    # The login form's own CSRF token, in a cookie and the form (double submit): a page elsewhere
    # cannot log a browser in as someone else.
    token = secrets.token_urlsafe(24)
    data = {"next": local_path(next_path), "users": store(request).users.user_count()}
    response = render(request, "login.html", data, title="Log in", extra={"login_csrf": token, "no_json": True})
    _cookie(response, request, LOGIN_COOKIE, token, max_age=600)
    return response


@router.post("/login")
async def log_in(request: Request) -> Response:
    form = await read_form(request, ("token", "next"))
    expected = request.cookies.get(LOGIN_COOKIE, "")
    if not expected or not secrets.compare_digest(form.get("csrf", "").encode(), expected.encode()):
        raise HTTPException(status_code=403, detail="This login form is out of date: open /login again.")
    limiter = request.app.state.login_limiter
    client = request.client.host if request.client is not None else "unknown"
    wait = limiter.wait(client)
    if wait > 0:
        raise HTTPException(
            status_code=429,
            detail=f"Too many wrong log-in tokens from your address: try again in {int(wait) + 1} seconds.",
            headers={"Retry-After": str(int(wait) + 1)},
        )
    logged = store(request).users.log_in(form.get("token", "").strip())
    if logged is None:
        limiter.failed(client)
        raise HTTPException(status_code=401, detail="That token is not a user's (or the user was disabled).")
    session_id, login = logged
    response = RedirectResponse(local_path(form.get("next")), status_code=303)
    seconds = int((login.expires_at - datetime.now(UTC)).total_seconds())
    _cookie(response, request, SESSION_COOKIE, session_id, max_age=max(60, seconds))
    response.delete_cookie(LOGIN_COOKIE, path="/")
    return response


@router.post("/logout")
async def log_out(request: Request) -> Response:
    login = require(request, "viewer")
    check_csrf(login, await read_form(request, ()))
    session_id = request.cookies.get(SESSION_COOKIE, "")
    store(request).users.log_out(session_id)
    response = RedirectResponse("/runs", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


def _audit_data(request: Request, before: int | None) -> dict[str, object]:
    entries = store(request).users.audit_entries(limit=100, before=before)
    return {
        "entries": [
            {
                "id": e.id,
                "actor": e.actor,
                "action": e.action,
                "target": e.target,
                "detail": dict(e.detail),
                "at": e.created_at.isoformat() if e.created_at else None,
            }
            for e in entries
        ],
        "older": f"/audit?before={entries[-1].id}" if len(entries) == 100 else None,
    }


Before = Annotated[int | None, Query(ge=1, le=2**62, description="Entries older than this id.")]


@router.get("/audit", response_class=HTMLResponse)
def audit_page(request: Request, before: Before = None) -> Response:
    require(request, "viewer")
    return render(request, "audit.html", _audit_data(request, before), title="Audit log", nav="audit")


@router.get("/api/audit")
def audit_api(request: Request, before: Before = None) -> Response:
    """Every write made through the dashboard and the user commands, newest first (needs a login)."""
    require(request, "viewer")
    return json_response(_audit_data(request, before))
