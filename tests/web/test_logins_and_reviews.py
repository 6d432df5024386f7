"""Logins, reviews from the case page, the review queue, the audit log, and hostile form posts.

Each test module works on its own copy of the session's store, so the reviews and
users it writes never show in the read-only pages other modules check.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient
from webkit import WebStore

from jurybox.store import open_store
from jurybox.web import create_app

CSRF = re.compile(r'name="csrf" value="([^"]+)"')


@pytest.fixture(scope="module")
def writable(web_store: WebStore, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    """A copy of the session store with an editor and a viewer: (store URL, tokens by name)."""
    copy = tmp_path_factory.mktemp("writable") / "web.db"
    shutil.copy(web_store.path, copy)
    url = f"sqlite:///{copy}"
    with open_store(url) as store:
        tokens = {"pm.alice": store.users.add_user("pm.alice", "editor"), "vic": store.users.add_user("vic", "viewer")}
    yield url, tokens


def _client(url: str) -> TestClient:
    return TestClient(create_app(url), raise_server_exceptions=False, follow_redirects=False)


def _log_in(client: TestClient, token: str) -> None:
    page = client.get("/login")
    found = CSRF.search(page.text)
    assert found is not None
    done = client.post("/login", data={"token": token, "next": "/reviews", "csrf": found.group(1)})
    assert done.status_code == 303 and done.headers["location"] == "/reviews"
    cookie = done.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict")


def _case_page(client: TestClient, web_store: WebStore) -> tuple[str, str]:
    run = web_store.example_runs[1]
    return run, client.get(f"/runs/{run}/case", params={"name": web_store.failing_case}).text


def _reviews_count(url: str) -> int:
    with open_store(url) as store:
        return len(store.reviews.reviews())


def test_an_editor_reviews_a_judgment_and_it_leaves_the_queue(
    writable: tuple[str, dict[str, str]], web_store: WebStore
) -> None:
    url, tokens = writable
    with _client(url) as client:
        run, before = _case_page(client, web_store)
        assert "Log in</a> to review" in before and 'name="agree"' not in before
        _log_in(client, tokens["pm.alice"])
        _, page = _case_page(client, web_store)
        assert "pm.alice" in page and 'name="agree"' in page
        csrf = CSRF.search(page)
        assert csrf is not None
        reviewable = client.get(f"/api/runs/{run}/case", params={"name": web_store.failing_case}).json()["reviewable"]
        # Passing deterministic checks wait only when asked for: they would bury the judgments that need a person.
        cheap = next(i for i in reviewable if i["tier"] == "deterministic" and i["status"] == "pass")
        shown = {(i["case"], i["path"]) for i in client.get("/api/reviews", params={"run": run}).json()["items"]}
        assert (web_store.failing_case, cheap["path"]) not in shown
        every = client.get("/api/reviews", params={"run": run, "passes": "1"}).json()
        assert (web_store.failing_case, cheap["path"]) in {(i["case"], i["path"]) for i in every["items"]}
        item = next(i for i in reviewable if i is not cheap and i["status"] != "pass")
        queue_before = client.get("/api/reviews", params={"run": run}).json()["items"]
        note = "<script>alert('x')</script> the listing was right"
        posted = client.post(
            f"/runs/{run}/case/reviews",
            params={"name": web_store.failing_case},
            data={
                "csrf": csrf.group(1), "path": item["path"],
                "round": "" if item["round"] is None else str(item["round"]),
                "agree": "no", "label": "pass", "note": note,
            },
        )  # fmt: skip
        assert posted.status_code == 303, posted.text
        _, after = _case_page(client, web_store)
        assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; the listing was right" in after
        assert "<script>alert" not in after
        queue_after = client.get("/api/reviews", params={"run": run}).json()["items"]
        key = (web_store.failing_case, item["path"], item["round"])
        assert key in {(i["case"], i["path"], i["round"]) for i in queue_before}
        assert key not in {(i["case"], i["path"], i["round"]) for i in queue_after}
        exported = client.get("/reviews/export.jsonl", params={"run": run})
        assert exported.status_code == 200 and '"pm.alice": "pass"' in exported.text
        audit = client.get("/api/audit").json()["entries"]
        assert audit[0]["actor"] == "pm.alice" and audit[0]["action"] == "review.add"


def test_a_viewer_may_read_but_not_review(writable: tuple[str, dict[str, str]], web_store: WebStore) -> None:
    url, tokens = writable
    with _client(url) as client:
        _log_in(client, tokens["vic"])
        run, page = _case_page(client, web_store)
        assert 'name="agree"' not in page
        csrf = CSRF.search(page)  # the logout form's token
        assert csrf is not None
        refused = client.post(
            f"/runs/{run}/case/reviews",
            params={"name": web_store.failing_case},
            data={"csrf": csrf.group(1), "path": "llm_judge/x", "round": "", "agree": "yes", "label": "pass"},
        )
        assert refused.status_code == 403 and "vic is a viewer" in refused.text


def test_logging_out_ends_the_session(writable: tuple[str, dict[str, str]], web_store: WebStore) -> None:
    url, tokens = writable
    with _client(url) as client:
        _log_in(client, tokens["pm.alice"])
        session = client.cookies.get("jurybox_session")
        _, page = _case_page(client, web_store)
        csrf = CSRF.search(page)
        assert csrf is not None and session
        assert client.post("/logout", data={"csrf": csrf.group(1)}).status_code == 303
    with open_store(url) as store:
        assert store.users.login(session) is None


def test_hostile_posts_are_refused_in_words_and_write_nothing(
    writable: tuple[str, dict[str, str]], web_store: WebStore
) -> None:
    url, tokens = writable
    with _client(url) as alice:
        _log_in(alice, tokens["pm.alice"])
        run, page = _case_page(alice, web_store)
        csrf_match = CSRF.search(page)
        assert csrf_match is not None
        csrf = csrf_match.group(1)
        session = alice.cookies.get("jurybox_session") or ""
        item = alice.get(f"/api/runs/{run}/case", params={"name": web_store.failing_case}).json()["reviewable"][0]
    good = {"csrf": csrf, "path": item["path"], "round": "", "agree": "yes", "label": "fail", "note": "ok"}
    target = f"/runs/{run}/case/reviews"
    params = {"name": web_store.failing_case}
    with open_store(url) as store:
        viewer = store.users.log_in(tokens["vic"])
        expired = store.users.log_in(tokens["pm.alice"], lifetime=timedelta(seconds=-1))
    assert viewer is not None and expired is not None
    attempts: list[tuple[str, dict[str, str], dict[str, str], object]] = [
        ("no session", {}, good, None),
        ("expired session", {"jurybox_session": expired[0]}, good, None),
        ("forged session", {"jurybox_session": "x" * 43}, good, None),
        ("viewer's session", {"jurybox_session": viewer[0]}, good, None),
        ("missing csrf", {"jurybox_session": session}, {k: v for k, v in good.items() if k != "csrf"}, None),
        ("another login's csrf", {"jurybox_session": session}, {**good, "csrf": viewer[1].csrf_token}, None),
        ("agree is not yes/no", {"jurybox_session": session}, {**good, "agree": "maybe"}, None),
        ("label out of range", {"jurybox_session": session}, {**good, "label": "excellent"}, None),
        ("round not a number", {"jurybox_session": session}, {**good, "round": "1; DROP TABLE reviews"}, None),
        ("unknown judgment", {"jurybox_session": session}, {**good, "path": "llm_judge/nope"}, None),
        ("unknown field", {"jurybox_session": session}, {**good, "admin": "true"}, None),
        ("note too long", {"jurybox_session": session}, {**good, "note": "n" * 10_001}, None),
        ("body too large", {"jurybox_session": session}, {**good, "note": "n" * 70_000}, None),
        ("json body", {"jurybox_session": session}, {}, {**good}),
    ]
    before = _reviews_count(url)
    statuses = {}
    with _client(url) as client:
        for name, cookies, form, json_body in attempts:
            client.cookies.clear()
            for cookie, value in cookies.items():
                client.cookies.set(cookie, value)
            if json_body is not None:
                response = client.post(target, params=params, json=json_body)
            else:
                response = client.post(target, params=params, data=form)
            statuses[name] = response.status_code
            assert "Traceback" not in response.text
        client.cookies.clear()
        client.cookies.set("jurybox_session", session)
        raw = client.post(
            target,
            params=params,
            content=b"csrf=\xff\xfe",
            headers={"content-type": "application/x-www-form-urlencoded"},
        )
        statuses["invalid utf-8"] = raw.status_code
        login_forged = client.post("/login", data={"token": tokens["pm.alice"], "csrf": "made-up"})
        statuses["login without its form's token"] = login_forged.status_code
        logout_forged = client.post("/logout", data={"csrf": "made-up"})
        statuses["logout with a forged token"] = logout_forged.status_code
    assert all(code in (400, 401, 403, 404, 413) for code in statuses.values()), statuses
    assert _reviews_count(url) == before
    assert statuses["no session"] == 401 and statuses["viewer's session"] == 403
    assert statuses["missing csrf"] == 403 and statuses["body too large"] == 413
