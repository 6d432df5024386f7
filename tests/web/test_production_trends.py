"""Production runs on the trends page (a line of their own, with a legend) and the trace of a production judgment."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from jurybox.core import CaseRecord, Context, Judgment, run_sync
from jurybox.judges import contains
from jurybox.store import Store, open_store
from jurybox.traces import judge_context, trace_cascade
from jurybox.web import WebSettings, create_app

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
SPAN = "00f067aa0ba902b7"
HOSTILE_TRACE = '"><script>alert(1)</script>'


def _record(name: str, passed: bool) -> CaseRecord:
    return CaseRecord(case=name, judgment=Judgment.passed() if passed else Judgment.failed(reasoning="no"))


def _trace_record(trace_id: str, output: str) -> CaseRecord:
    context = Context(
        input="A hotel in Lisbon?",
        output=output,
        metadata={"trace_id": trace_id, "span_id": SPAN, "span_name": "invoke_agent travel"},
    )
    return run_sync(lambda: judge_context(context, trace_cascade([contains("EUR")])), thread_name="test")


def _ci_run(store: Store, passed: int, total: int) -> str:
    run = store.runs.begin("travel", cases={f"c{i}": {"prompt": "p"} for i in range(total)})
    store.results.record_many(run, [_record(f"c{i}", i < passed) for i in range(total)])
    store.finish_run(run)
    return run


def _production_run(store: Store, day: str, records: list[CaseRecord]) -> str:
    run = store.runs.begin("travel", cases={}, config={"kind": "production", "day": day, "source": "otlp"})
    store.results.record_many(run, records)
    store.finish_run(run)
    return run


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    url = f"sqlite:///{tmp_path_factory.mktemp('prod') / 'store.db'}"
    with open_store(url) as store:
        ci = [_ci_run(store, 4, 4), _ci_run(store, 4, 4)]
        production = _production_run(
            store,
            "2026-03-01",
            [_trace_record(TRACE, "Casa Azul, 95 EUR"), _trace_record(HOSTILE_TRACE, "nothing found")],
        )
        ci.append(_ci_run(store, 3, 4))  # a CI run after a bad production day: its baseline is the CI runs'
    return {"url": url, "ci": ci, "production": production}


@pytest.fixture(scope="module")
def client(runs: dict[str, Any]) -> Iterator[TestClient]:
    settings = WebSettings(trace_url="http://phoenix.local:6006/projects/default/traces/{trace_id}?span={span_id}")
    with TestClient(create_app(runs["url"], settings=settings)) as test_client:
        yield test_client


def test_production_runs_are_their_own_series_and_never_the_ci_baseline(
    client: TestClient, runs: dict[str, Any]
) -> None:
    data = client.get("/api/suites/travel/trends").json()
    kinds = {p["run_id"]: p["kind"] for p in data["points"]}
    assert kinds[runs["production"]] == "production" and {kinds[r] for r in runs["ci"]} == {"ci"}
    assert data["kinds"] == {"ci": 3, "production": 1}
    last = data["points"][-1]["metrics"]["overall"]
    assert last["baseline"] == 1.0  # the two CI runs; the production day at 50% is not in it
    production = next(p for p in data["points"] if p["kind"] == "production")
    assert production["metrics"]["overall"]["state"] == "production"
    html = client.get("/suites/travel/trends").text
    pass_rate = html.split("<figure", 2)[1]
    assert ">overall</span>" in pass_rate and ">overall, production</span>" in pass_rate  # the legend
    # The CI line runs over the production run without a break: one path per series.
    assert len(re.findall(r'<path class="line s-main"', pass_rate)) == 1
    assert len(re.findall(r'<path class="line s-prod prod"', pass_rate)) == 1
    assert f'href="/runs/{runs["production"]}"' in pass_rate and "production run(s)" in html


def test_a_production_judgment_shows_its_trace_and_links_to_it(client: TestClient, runs: dict[str, Any]) -> None:
    name = f"invoke_agent travel [{TRACE}/{SPAN}]"
    data = client.get(f"/api/runs/{runs['production']}/case", params={"name": name}).json()
    assert data["trace"]["trace_id"] == TRACE and data["trace"]["valid"]
    assert data["trace"]["viewer"] == f"http://phoenix.local:6006/projects/default/traces/{TRACE}?span={SPAN}"
    html = client.get(f"/runs/{runs['production']}/case", params={"name": name}).text
    assert f'href="http://phoenix.local:6006/projects/default/traces/{TRACE}?span={SPAN}"' in html
    assert f"q={TRACE}" in html  # every agent run of the trace, in this run


def test_a_hostile_trace_id_is_escaped_and_never_linked(client: TestClient, runs: dict[str, Any]) -> None:
    [hostile] = [
        r["case"]
        for r in client.get(f"/api/runs/{runs['production']}").json()["cases"]["rows"]
        if "script" in r["case"]
    ]
    data = client.get(f"/api/runs/{runs['production']}/case", params={"name": hostile}).json()
    assert data["trace"] == {"trace_id": None, "span_id": None, "valid": False, "viewer": None, "in_run": None}
    html = client.get(f"/runs/{runs['production']}/case", params={"name": hostile}).text
    assert "<script>alert(1)" not in html and "not a valid trace id" in html
    assert "phoenix.local" not in html


def test_a_trace_url_must_be_http_with_the_trace_id(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="trace_id"):
        WebSettings(trace_url="javascript:alert(1)//{trace_id}")
    with pytest.raises(ValueError, match="trace_id"):
        WebSettings(trace_url="https://viewer/traces")


def test_a_production_run_page_says_what_it_is(client: TestClient, runs: dict[str, Any]) -> None:
    assert client.get(f"/api/runs/{runs['production']}").json()["gate"]["verdict"] == "production"
    html = client.get(f"/runs/{runs['production']}").text
    assert "A production run" in html and 'class="tag production"' in html and "Not checked: a production run" in html
