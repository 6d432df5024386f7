"""The review queue as a reviewer works it: a count, filters, pages, repeats folded, and "review next"."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from webkit import WebStore

from jurybox.store import QueueFilter, open_store
from jurybox.web import create_app
from jurybox.web._review_flow import view_from_query

CSRF = re.compile(r'name="csrf" value="([^"]+)"')


@pytest.fixture(scope="module")
def queue_store(web_store: WebStore, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """A copy of the session store with an editor: (store URL, the editor's token)."""
    copy = tmp_path_factory.mktemp("queue") / "web.db"
    shutil.copy(web_store.path, copy)
    url = f"sqlite:///{copy}"
    with open_store(url) as store:
        token = store.users.add_user("rita", "editor")
    yield url, token


def _logged_in(url: str, token: str) -> TestClient:
    client = TestClient(create_app(url), raise_server_exceptions=False, follow_redirects=False)
    found = CSRF.search(client.get("/login").text)
    assert found is not None
    done = client.post("/login", data={"token": token, "next": "/reviews", "csrf": found.group(1)})
    assert done.status_code == 303
    return client


def test_a_judgment_repeated_across_runs_is_one_item_with_its_count(queue_store: tuple[str, str]) -> None:
    url, _ = queue_store
    with open_store(url) as store:
        folded = store.reviews.queue(QueueFilter(suite="property-agent"), limit=200)
        every = store.reviews.queue(QueueFilter(suite="property-agent", repeats=True), limit=200)
    # The example suite ran twice with the same agent: most judgments are the same twice over.
    assert every.total > folded.total > 0
    assert sum(entry.repeats for entry in folded.entries) == every.total
    assert any(entry.repeats == 2 for entry in folded.entries)
    keys = [(e.case, e.path, e.round_index, e.status, e.reasoning) for e in folded.entries]
    assert len(keys) == len(set(keys))


def test_the_queue_page_counts_filters_and_pages(queue_store: tuple[str, str]) -> None:
    url, token = queue_store
    with _logged_in(url, token) as client:
        everything = client.get("/api/reviews", params={"repeats": "1", "passes": "1"}).json()
        assert everything["total"] > 50 and len(everything["items"]) == 50  # a page, with the count of all
        later = client.get("/api/reviews", params={"repeats": "1", "passes": "1", "offset": "50"}).json()
        assert later["offset"] == 50 and later["items"] and later["items"][0] != everything["items"][0]
        failing = client.get("/api/reviews", params={"status": "fail"}).json()
        assert failing["items"] and {i["status"] for i in failing["items"]} == {"fail"}
        llm = client.get("/api/reviews", params={"tier": "similarity"}).json()
        assert {i["tier"] for i in llm["items"]} <= {"similarity"}
        page = client.get("/reviews", params={"status": "fail"}).text
        assert 'id="queue-total"' in page and "Start reviewing" in page and "unknown" in page
        # A filter value that is not one of the choices is dropped, never a 500.
        odd = client.get("/reviews", params={"status": "<script>", "tier": "x" * 9000, "offset": "3"})
        assert odd.status_code in (200, 422) and "<script>" not in odd.text


def test_saving_a_review_from_the_queue_opens_the_next_one(queue_store: tuple[str, str]) -> None:
    url, token = queue_store
    with _logged_in(url, token) as client:
        start = client.get("/reviews/next", params={"status": "fail"})
        assert start.status_code == 303
        first = start.headers["location"]
        assert first.startswith("/runs/") and "queue=" in first
        page = client.get(first).text
        assert "Save and review next" in page and 'name="queue"' in page
        before = client.get("/api/reviews", params={"status": "fail"}).json()
        item = before["items"][0]
        csrf = CSRF.search(page)
        assert csrf is not None
        run, case = item["run_id"], item["case"]
        posted = client.post(
            f"/runs/{run}/case/reviews",
            params={"name": case},
            data={
                "csrf": csrf.group(1), "path": item["path"],
                "round": "" if item["round"] is None else str(item["round"]), "agree": "yes", "label": "fail",
                "note": "", "queue": "status=fail&evil=https://example.com",
            },
        )  # fmt: skip
        assert posted.status_code == 303 and posted.headers["location"] == "/reviews/next?status=fail"
        after = client.get("/api/reviews", params={"status": "fail"}).json()
        assert after["total"] == before["total"] - 1
        assert (item["case"], item["path"]) not in {(i["case"], i["path"]) for i in after["items"]}
        following = client.get(posted.headers["location"])
        assert following.status_code == 303 and following.headers["location"].startswith("/runs/")
        mine = client.get("/reviews").text
        assert "Your recent reviews" in mine and "reviewers agreed with the judge" in mine


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=300))
def test_a_hostile_queue_value_only_ever_yields_known_filters(text: str) -> None:
    query = view_from_query(text).query()
    known = {"suite", "run", "judge", "status", "tier", "reviewed", "passes", "repeats", "order", "seed"}
    assert set(parse_qs(query)) <= known
    assert urlsplit("/reviews/next?" + query).netloc == ""
