"""Every page and its JSON twin, on a store of real example runs plus hostile records (FastAPI TestClient)."""

from __future__ import annotations

from html.parser import HTMLParser
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient
from webkit import HOSTILE, HOSTILE_SUITE, PAYLOADS, WebStore

from jurybox.store import compare_runs, open_store
from jurybox.web import CONTENT_SECURITY_POLICY


def _pages(store: WebStore) -> list[str]:
    """Every page of the dashboard, with the hostile and the example data in each kind of page."""
    first, second = store.example_runs
    hostile = store.hostile_runs[-1]
    name = quote(store.hostile_case_names[0], safe="")
    suite = quote(HOSTILE_SUITE, safe="")
    return [
        "/runs",
        "/runs?suite=property-agent&status=completed",
        f"/runs?suite={suite}",
        f"/runs/{second}",
        f"/runs/{second}?status=not_passed&sort=score&order=desc",
        f"/runs/{hostile}",
        f"/runs/{hostile}?tag={quote(HOSTILE, safe='')}&q=case",
        f"/runs/{store.running_run}",
        f"/runs/{second}/case?name={store.failing_case}",
        f"/runs/{hostile}/case?name={name}",
        f"/runs/{hostile}/case?name={quote(store.hostile_case_names[2], safe='')}",
        f"/compare?a={first}&b={second}",
        f"/compare?a={store.hostile_runs[-2]}&b={hostile}",
        f"/compare?a={store.hostile_runs[-2]}&b={hostile}&kind=broke",
        "/compare",
        "/suites",
        "/suites/property-agent/trends",
        f"/suites/{suite}/trends",
        f"/suites/{suite}/cases",
        "/suites/property-agent/cases",
        "/lessons",
        f"/lessons?suite={suite}",
    ]


def test_every_page_renders_with_its_security_headers(client: TestClient, web_store: WebStore) -> None:
    for path in _pages(web_store):
        response = client.get(path)
        assert response.status_code == 200, (path, response.text[:500])
        assert response.headers["content-type"].startswith("text/html")
        assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        assert "'unsafe-inline'" not in CONTENT_SECURITY_POLICY and "unsafe-eval" not in CONTENT_SECURITY_POLICY
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["x-frame-options"] == "DENY"


def test_every_page_has_a_json_twin(client: TestClient, web_store: WebStore) -> None:
    for path in _pages(web_store):
        if path == "/compare":
            continue  # the run picker is a form; its twin needs a and b
        response = client.get("/api" + path)
        assert response.status_code == 200, (path, response.text[:500])
        assert response.headers["content-type"] == "application/json"
        assert isinstance(response.json(), dict)


class _Markup(HTMLParser):
    """Every tag and attribute the browser would build from a page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))


def test_no_page_has_markup_from_the_store_scripts_or_inline_styles(client: TestClient, web_store: WebStore) -> None:
    for path in _pages(web_store):
        html = client.get(path).text
        parser = _Markup()
        parser.feed(html)
        tags = {tag for tag, _ in parser.tags}
        assert not tags & {"img", "iframe", "object", "embed", "style", "base", "textarea"}, (path, tags)
        scripts = [dict(attrs) for tag, attrs in parser.tags if tag == "script"]
        assert scripts == [{"src": "/static/htmx.min.js?v=2.0.11", "defer": None}], (path, scripts)
        for tag, attrs in parser.tags:
            for name, value in attrs:
                assert not name.startswith("on"), (path, tag, name)  # no event handler attribute at all
                assert name != "style", (path, tag)  # the CSP allows no inline style
                if name in ("href", "src", "action", "hx-get", "xlink:href"):
                    assert value is not None and (value.startswith("/") or value.startswith("#")), (path, tag, value)
        for payload in (p for p in PAYLOADS if "<" in p):
            assert payload not in html, (path, payload)  # markup only ever arrives escaped


def test_hostile_text_is_shown_as_text(client: TestClient, web_store: WebStore) -> None:
    name = web_store.hostile_case_names[0]
    html = client.get(f"/runs/{web_store.hostile_runs[-1]}/case", params={"name": name}).text
    assert "case &lt;script&gt;window.__xss=1&lt;/script&gt;" in html
    assert "&#34;&gt;&lt;img src=x onerror=&#34;window.__xss=1&#34;&gt;" in html
    data = client.get(f"/api/runs/{web_store.hostile_runs[-1]}/case", params={"name": name}).json()
    assert data["case"]["name"] == name
    assert data["rounds"][0]["prompt"] == HOSTILE
    assert data["rounds"][0]["follow_ups"] == [{"question": HOSTILE, "reply": HOSTILE}]
    assert data["rounds"][0]["context"]["tool_calls"][0]["arguments"]["q"] == HOSTILE


def test_runs_list_filters_and_pages(client: TestClient, web_store: WebStore) -> None:
    data = client.get("/api/runs", params={"suite": "property-agent"}).json()
    assert [r["id"] for r in data["runs"]] == list(reversed(web_store.example_runs))  # newest first
    paged = client.get("/api/runs", params={"per_page": 2, "page": 2}).json()
    assert paged["page"]["page"] == 2 and len(paged["runs"]) == 2 and paged["page"]["total"] == 9
    assert paged["page"]["previous"] and paged["page"]["next"]
    assert client.get("/api/runs", params={"status": "running"}).json()["runs"][0]["id"] == web_store.running_run
    assert client.get("/api/runs", params={"since": "2999-01-01"}).json()["runs"] == []
    assert client.get("/api/runs", params={"status": "nonsense"}).status_code == 400


def test_run_page_summary_gate_and_case_table(client: TestClient, web_store: WebStore) -> None:
    second = web_store.example_runs[1]
    data = client.get(f"/api/runs/{second}").json()
    run = data["run"]
    assert run["counts"] == {"pass": 18, "fail": 2, "error": 0, "abstain": 0}
    assert run["recorded"] == run["planned"] == 20
    assert data["previous"]["id"] == web_store.example_runs[0]
    assert data["baseline"]["compare"] == f"/compare?a={web_store.example_runs[0]}&b={second}"
    # One earlier run: a drop is only a warning, but a tier under its target fails the gate (warm-up).
    missed = [m for m in data["gate"]["metrics"] if m["target"] is not None and m["current"] < m["target"]]
    assert data["gate"]["verdict"] in (("below target",) if missed else ("warning", "warm-up"))
    assert data["gate"]["baseline"] == "passing"
    assert {m["metric"] for m in data["gate"]["metrics"]} >= {"overall", "deterministic"}
    assert data["stats"]["tiers"] and data["stats"]["latency"]["p95"] is not None
    rows = data["cases"]["rows"]
    assert [r["status"] for r in rows[:2]] == ["fail", "fail"]  # failing first by default
    failing = client.get(f"/api/runs/{second}", params={"status": "fail"}).json()["cases"]
    assert {r["case"] for r in failing["rows"]} == {"counts-listings", web_store.failing_case}
    assert failing["page"]["total"] == 2
    searched = client.get(f"/api/runs/{second}", params={"q": "beach-house"}).json()["cases"]["rows"]
    assert searched and all("beach-house" in r["case"] for r in searched)
    tagged = client.get(f"/api/runs/{second}", params={"tag": "multi-round"}).json()["cases"]["rows"]
    assert tagged and all("multi-round" in r["tags"] for r in tagged)
    by_name = client.get(f"/api/runs/{second}", params={"sort": "name", "per_page": 5, "page": 2}).json()["cases"]
    names = [r["case"] for r in by_name["rows"]]
    assert names == sorted(names) and len(names) == 5 and by_name["page"]["page"] == 2
    low = client.get(f"/api/runs/{second}", params={"max_score": 0.5}).json()["cases"]["rows"]
    assert low and all(r["score"] is not None and r["score"] <= 0.5 for r in low)


def test_run_by_prefix_or_last_redirects_to_its_own_url(client: TestClient, web_store: WebStore) -> None:
    second = web_store.example_runs[1]
    # Ids are start second + 6 random hex digits: the shortest prefix past the second that names only this run
    # (runs started in the same second can share the first random digits).
    with open_store(web_store.url) as store:
        others = [run.id for run in store.runs.newest() if run.id != second]
    prefix = next(second[:n] for n in range(17, len(second)) if not any(o.startswith(second[:n]) for o in others))
    response = client.get(f"/runs/{prefix}", follow_redirects=False)
    assert response.status_code == 307 and response.headers["location"] == f"/runs/{second}"
    assert client.get("/runs/last", follow_redirects=False).headers["location"].startswith("/runs/")


def test_case_page_shows_every_round_and_the_failing_reasoning(client: TestClient, web_store: WebStore) -> None:
    second = web_store.example_runs[1]
    data = client.get(f"/api/runs/{second}/case", params={"name": web_store.failing_case}).json()
    assert data["case"]["status"] == "fail"
    assert [r["number"] for r in data["rounds"]] == [1, 2]
    assert data["rounds"][1]["status"] == "fail"
    assert data["rounds"][1]["context"]["tool_calls"][0]["name"] == "get_bookings"
    assert "upcoming bookings for the Bea" in data["case"]["reason"]
    html = client.get(f"/runs/{second}/case", params={"name": web_store.failing_case}).text
    # The failing judge's reasoning is on the page itself, not behind a click.
    reasoning = data["rounds"][1]["judgment"]["children"][0]["reasoning"] if data["rounds"][1]["judgment"] else ""
    assert "upcoming bookings for the Beach House" in html
    assert not reasoning or reasoning.split(":")[0] in html
    assert data["history"][-1]["current"] is True and data["history"][-1]["status"] == "fail"


def test_abstain_shows_raw_model_output_and_error(client: TestClient, web_store: WebStore) -> None:
    name = web_store.hostile_case_names[0]
    data = client.get(f"/api/runs/{web_store.hostile_runs[-1]}/case", params={"name": name}).json()
    assert data["case"]["status"] == "abstain" and data["case"]["error"] == HOSTILE
    llm = next(child for child in data["judgment"]["children"] if child["name"] == "llm_judge")
    assert llm["show_raw"] is True and llm["raw"]["raw"] == HOSTILE
    assert data["judgment"]["not_needed"] == [HOSTILE]
    assert data["rounds"][1]["context"]["revived"] is True


def test_unknown_run_case_suite_and_page_are_404_pages(client: TestClient, web_store: WebStore) -> None:
    for path in ("/runs/nope", f"/runs/{web_store.example_runs[0]}/case?name=nope", "/suites/nope/trends", "/nowhere"):
        response = client.get(path)
        assert response.status_code == 404, path
        assert "Traceback" not in response.text and "jurybox" in response.text
    assert client.get("/api/runs/nope").json()["error"] == "There is no run 'nope' in this store."
    bad = client.get(f"/runs/{web_store.example_runs[0]}", params={"page": "abc"})
    assert bad.status_code == 400 and "page" in bad.text and "Traceback" not in bad.text


def test_compare_matches_the_cli_figure_for_figure(client: TestClient, web_store: WebStore) -> None:
    for a, b in (
        web_store.example_runs,
        web_store.hostile_runs[-2:],
        (web_store.hostile_runs[-1], web_store.example_runs[1]),
    ):
        data = client.get("/api/compare", params={"a": a, "b": b, "per_page": 200}).json()
        with open_store(web_store.url) as store:
            cli = compare_runs(store, a, b)
        figures = data["figures"]
        assert figures["cases"] == {
            "a": cli.run_a.recorded,
            "b": cli.run_b.recorded,
            "change": cli.run_b.recorded - cli.run_a.recorded,
        }
        assert figures["pass_rate"]["a"] == cli.run_a.pass_rate and figures["pass_rate"]["b"] == cli.run_b.pass_rate
        assert figures["errors"]["change"] == cli.run_b.errored - cli.run_a.errored
        assert figures["cost"]["change"] == cli.cost_delta
        assert figures["tokens"]["a"] == cli.run_a.tokens and figures["tokens"]["b"] == cli.run_b.tokens
        assert figures["latency_mean"]["a"] == cli.latency_a.mean and figures["latency_p95"]["b"] == cli.latency_b.p95
        assert figures["latency_p50"]["a"] == cli.latency_a.p50
        counts = data["counts"]
        assert data["flipped"] == len(cli.flipped)
        assert counts["broke"] == sum(c.broke for c in cli.changes)
        assert counts["fixed"] == sum(c.fixed for c in cli.changes)
        assert counts["new_errors"] == len(cli.new_errors)
        assert counts["scores"] == len(cli.score_changes)
        assert counts["status"] == len(cli.status_changes)
        assert counts["only_a"] == len(cli.only_in_a) and counts["only_b"] == len(cli.only_in_b)
        scores = client.get("/api/compare", params={"a": a, "b": b, "kind": "scores", "per_page": 200}).json()
        deltas = [abs(r["score_delta"]) for r in scores["rows"]]
        assert deltas == sorted(deltas, reverse=True)
        assert sorted(deltas) == sorted(abs(c.score_delta or 0) for c in cli.score_changes)


def test_compare_lists_the_newly_failing_cases_and_judges(client: TestClient, web_store: WebStore) -> None:
    first, second = web_store.example_runs
    data = client.get("/api/compare", params={"a": first, "b": second}).json()
    assert data["kind"] == "broke"
    assert {r["case"] for r in data["rows"]} == {"counts-listings", web_store.failing_case}
    assert all(r["a"]["status"] == "pass" and r["b"]["status"] == "fail" for r in data["rows"])
    assert data["judges"] and data["judges"][0]["score_change"] is not None
    assert client.get("/api/compare", params={"a": "nope", "b": second}).status_code == 404
    last = client.get("/api/compare", params={"a": first, "b": "last"}).json()
    assert last["b"]["id"] == web_store.running_run


def test_trends_mark_the_regression_and_link_each_point(client: TestClient, web_store: WebStore) -> None:
    suite = quote(HOSTILE_SUITE, safe="")
    data = client.get(f"/api/suites/{suite}/trends").json()
    assert [p["run_id"] for p in data["points"]] == list(web_store.hostile_runs)
    last = data["points"][-1]["metrics"]["overall"]
    assert last["state"] == "regression" and last["baseline"] == 1.0 and last["rate"] == 0.25
    assert last["floor"] == pytest.approx(1.0 * (1 - last["threshold"]))
    assert {(r["run_id"], r["metric"]) for r in data["regressions"]} >= {(web_store.hostile_runs[-1], "overall")}
    html = client.get(f"/suites/{suite}/trends").text
    assert html.count("<svg viewBox") >= 4
    for run_id in web_store.hostile_runs:
        assert f'href="/runs/{run_id}"' in html
    assert "state-regression" in html
    few = client.get(f"/api/suites/{suite}/trends", params={"runs": 2}).json()
    assert [p["run_id"] for p in few["points"]] == list(web_store.hostile_runs[-2:])
    assert few["points"][-1]["metrics"]["overall"]["baseline"] == 1.0  # baselines still use the runs before


def test_case_history_puts_flaky_cases_first(client: TestClient, web_store: WebStore) -> None:
    suite = quote(HOSTILE_SUITE, safe="")
    data = client.get(f"/api/suites/{suite}/cases").json()
    assert len(data["runs"]) == 6
    flaky = [r for r in data["rows"] if r["flaky"]]
    assert len(flaky) == 3 and data["rows"][: len(flaky)] == flaky
    assert flaky[0]["flips"] == 1 and [c["status"] for c in flaky[0]["cells"]][-1] == "abstain"
    example = client.get("/api/suites/property-agent/cases").json()
    assert example["rows"][0]["case"] in ("counts-listings", web_store.failing_case)


def test_lessons_link_their_run_and_comparison(client: TestClient, web_store: WebStore) -> None:
    data = client.get("/api/lessons").json()
    lesson = data["lessons"][0]
    assert lesson["run_id"] == web_store.hostile_runs[-1] and lesson["suite"] == HOSTILE_SUITE
    assert (
        lesson["links"]["compare_previous"] == f"/compare?a={web_store.hostile_runs[-2]}&b={web_store.hostile_runs[-1]}"
    )
    assert any(f["case"] == web_store.hostile_case_names[0] for f in lesson["failing"])
    topic = client.get("/api/lessons", params={"topic": "no-such-topic"}).json()
    assert topic["lessons"] == []


def test_a_running_run_shows_as_running_and_refreshes(client: TestClient, web_store: WebStore) -> None:
    response = client.get(f"/runs/{web_store.running_run}")
    html = response.text
    assert "still being written" in html and "2 of 3" in html
    assert 'hx-trigger="every 5s"' in html
    assert '<noscript><meta http-equiv="refresh" content="5"></noscript>' in html
    assert response.headers["cache-control"] == "no-store"
    fragment = client.get(
        f"/runs/{web_store.running_run}", headers={"HX-Request": "true", "HX-Target": "run-live"}
    ).text
    assert fragment.startswith('<section id="run-live"') and "<html" not in fragment
    finished = client.get(f"/runs/{web_store.example_runs[0]}").text
    assert 'hx-trigger="every' not in finished and "refresh" not in finished.split("</head>")[0]
    listing = client.get("/runs").text
    assert 'id="runs-table" hx-get=' in listing  # the list refreshes while a run is running


def test_htmx_fragments_are_partial_pages(client: TestClient, web_store: WebStore) -> None:
    second = web_store.example_runs[1]
    cases = client.get(
        f"/runs/{second}", params={"status": "fail"}, headers={"HX-Request": "true", "HX-Target": "cases"}
    )
    assert cases.text.startswith('<section id="cases"') and "counts-listings" in cases.text
    runs = client.get("/runs", headers={"HX-Request": "true", "HX-Target": "runs-table"})
    assert runs.text.startswith('<section id="runs-table"')


def test_static_assets_ship_with_the_package(client: TestClient) -> None:
    for path in ("/static/app.css", "/static/htmx.min.js", "/static/favicon.svg", "/static/htmx.LICENSE"):
        response = client.get(path)
        assert response.status_code == 200, path
        assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert "Zero-Clause BSD" in client.get("/static/htmx.LICENSE").text


def test_health_and_schema(client: TestClient) -> None:
    assert client.get("/api/health").json()["ok"] is True
    schema = client.get("/api/openapi.json").json()
    assert {"/api/runs", "/api/runs/{run_id}", "/api/runs/{run_id}/case", "/api/compare", "/api/lessons"} <= set(
        schema["paths"]
    )
