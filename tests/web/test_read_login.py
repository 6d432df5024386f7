"""``--read-login``: every page and the API need a login; log-in attempts are capped per client."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st
from webkit import WebStore

from jurybox.store import open_store
from jurybox.web import WebSettings, create_app
from jurybox.web._login_guard import LoginLimiter

CSRF = re.compile(r'name="csrf" value="([^"]+)"')


@pytest.fixture(scope="module")
def guarded(web_store: WebStore, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    copy = tmp_path_factory.mktemp("guarded") / "web.db"
    shutil.copy(web_store.path, copy)
    url = f"sqlite:///{copy}"
    with open_store(url) as store:
        token = store.users.add_user("vera", "viewer")
    return url, token


def _client(url: str, **settings: object) -> TestClient:
    app = create_app(url, settings=WebSettings(read_login=True, **settings))  # type: ignore[arg-type]
    return TestClient(app, raise_server_exceptions=False, follow_redirects=False)


def _log_in(client: TestClient, token: str) -> int:
    found = CSRF.search(client.get("/login").text)
    assert found is not None
    return client.post("/login", data={"token": token, "next": "/runs", "csrf": found.group(1)}).status_code


def test_every_page_and_the_api_need_a_login(guarded: tuple[str, str], web_store: WebStore) -> None:
    url, token = guarded
    run = web_store.example_runs[0]
    with _client(url) as client:
        for path in ("/runs", f"/runs/{run}", "/reviews", "/reviews/export.jsonl", "/suites", "/lessons"):
            page = client.get(path)
            assert page.status_code == 303 and page.headers["location"].startswith("/login?next="), path
        for path in ("/api/runs", "/api/reviews", f"/api/runs/{run}"):
            answer = client.get(path)
            assert answer.status_code == 401 and "Log in" in answer.json()["error"], path
        assert client.get("/login").status_code == 200 and client.get("/api/health").status_code == 200
        assert _log_in(client, token) == 303
        assert client.get("/runs").status_code == 200 and client.get("/api/runs").status_code == 200
        assert client.get("/reviews/export.jsonl").status_code == 200


def test_wrong_tokens_are_rate_limited_per_client(guarded: tuple[str, str]) -> None:
    url, token = guarded
    with _client(url, login_attempts=3, login_window=60.0) as client:
        answers = [_log_in(client, f"wrong-{n}") for n in range(6)]
        assert answers[:3] == [401, 401, 401] and set(answers[3:]) == {429}
        found = CSRF.search(client.get("/login").text)
        assert found is not None
        refused = client.post("/login", data={"token": token, "next": "/runs", "csrf": found.group(1)})
        # Even the right token waits: the limit is on the address, not on guessing right.
        assert refused.status_code == 429 and int(refused.headers["Retry-After"]) > 0
        assert "try again in" in refused.text


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.floats(0, 500)), max_size=40))
def test_the_limiter_never_lets_more_than_its_attempts_through_in_a_window(events: list[tuple[str, float]]) -> None:
    limiter = LoginLimiter(attempts=3, window=60.0)
    allowed: dict[str, list[float]] = {}
    for client, at in sorted(events, key=lambda event: event[1]):
        if limiter.wait(client, at) == 0:
            limiter.failed(client, at)
            allowed.setdefault(client, []).append(at)
    for times in allowed.values():
        for index, start in enumerate(times):
            assert len([t for t in times[index:] if t < start + 60.0]) <= 3


def test_the_limiter_forgets_the_oldest_client_when_full(tmp_path: Path) -> None:
    limiter = LoginLimiter(attempts=1, window=60.0, clients=2)
    limiter.failed("a", 0.0)
    limiter.failed("b", 1.0)
    limiter.failed("c", 2.0)
    assert limiter.wait("a", 3.0) == 0 and limiter.wait("c", 3.0) > 0
