"""The dashboard's queries on PostgreSQL (JSONB tags, GREATEST/LEAST, the same figures as on SQLite)."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text
from sqlalchemy.exc import OperationalError
from webkit import HOSTILE, HOSTILE_SUITE, plant_hostile, plant_running

from jurybox.store import compare_runs, open_store
from jurybox.web import create_app

pytestmark = pytest.mark.postgres

PG_ADMIN_URL = os.environ.get("JURYBOX_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/test")


@pytest.fixture(scope="module")
def pg_url() -> Iterator[str]:
    """A fresh schema on the test server, or skip (fail with CI=true) when PostgreSQL is unreachable."""
    admin = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT", connect_args={"connect_timeout": 5})
    try:
        with admin.connect() as connection:
            connection.execute(text("SELECT 1"))
    except OperationalError as exc:
        admin.dispose()
        reason = f"PostgreSQL at {PG_ADMIN_URL} is unreachable: {str(exc).splitlines()[0]}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{reason} (CI=true: PostgreSQL tests must run, not skip)")
        pytest.skip(reason)
    schema = f"jbx_web_{os.getpid()}_{secrets.token_hex(3)}"
    with admin.connect() as connection:
        connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    try:
        yield f"{PG_ADMIN_URL}?options=-csearch_path%3D{schema}"
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        admin.dispose()


def test_every_page_and_twin_on_postgresql(pg_url: str) -> None:
    with open_store(pg_url) as store:
        runs, names = plant_hostile(store)
        running = plant_running(store)
    suite = quote(HOSTILE_SUITE, safe="")
    with TestClient(create_app(pg_url), raise_server_exceptions=False) as client:
        paths = [
            "/runs",
            f"/runs?suite={suite}&status=completed",
            f"/runs/{runs[-1]}",
            f"/runs/{runs[-1]}?status=not_passed&sort=score&order=desc&q=case",
            f"/runs/{running}",
            f"/runs/{runs[-1]}/case?name={quote(names[0], safe='')}",
            f"/compare?a={runs[-2]}&b={runs[-1]}",
            "/suites",
            f"/suites/{suite}/trends",
            f"/suites/{suite}/cases",
            "/lessons",
        ]
        for path in paths:
            assert client.get(path).status_code == 200, path
            assert client.get("/api" + path).status_code == 200, path
        tagged = client.get(f"/api/runs/{runs[-1]}", params={"tag": HOSTILE}).json()["cases"]
        assert tagged["page"]["total"] == 4
        assert client.get(f"/api/runs/{runs[-1]}", params={"tag": "nope"}).json()["cases"]["page"]["total"] == 0
        data = client.get("/api/compare", params={"a": runs[-2], "b": runs[-1]}).json()
        with open_store(pg_url) as store:
            cli = compare_runs(store, runs[-2], runs[-1])
        assert data["flipped"] == len(cli.flipped) == 3
        assert data["figures"]["latency_p95"]["b"] == cli.latency_b.p95
        history = client.get(f"/api/suites/{suite}/cases").json()
        assert [row["flaky"] for row in history["rows"]] == [True, True, True, False]
        trend = client.get(f"/api/suites/{suite}/trends").json()
        assert trend["points"][-1]["metrics"]["overall"]["state"] == "regression"
        assert client.get("/api/lessons").json()["lessons"][0]["run_id"] == runs[-1]
