"""The compare page and /api/compare carry the paired statistics of ``jurybox compare --json``, figure for figure."""

from __future__ import annotations

import json
import re

from fastapi.testclient import TestClient
from typer.testing import CliRunner
from webkit import WebStore

from jurybox.cli import app


def _cli_json(url: str, a: str, b: str) -> dict[str, object]:
    result = CliRunner().invoke(app, ["compare", a, b, "--store", url, "--json"])
    assert result.exit_code == 0, result.output
    loaded: dict[str, object] = json.loads(result.output)
    return loaded


def test_the_api_holds_the_same_paired_figures_as_the_cli(client: TestClient, web_store: WebStore) -> None:
    for a, b in (web_store.example_runs, web_store.hostile_runs[-2:]):
        api = client.get("/api/compare", params={"a": a, "b": b}).json()
        cli = _cli_json(web_store.url, a, b)
        assert api["paired"] == cli["paired"]
        paired = api["paired"]
        assert paired["a"] == a and paired["b"] == b
        rate = paired["pass_rate"]
        # Unknown is never zero: the pairs exclude each side's ERROR and ABSTAIN, which are counted apart.
        assert rate["pairs"] + len(paired["undecided"]) == api["common"]
        assert set(paired["undecided_counts"]["a"]) == {"error", "abstain"}
        assert rate["test"] == "mcnemar-exact" and 0.0 <= (rate["p_value"] or 0.0) <= 1.0
        assert {m["name"] for m in paired["means"]} >= {"score"}


def test_the_page_says_whether_b_is_better_with_the_pairs_it_rests_on(client: TestClient, web_store: WebStore) -> None:
    a, b = web_store.example_runs
    api = client.get("/api/compare", params={"a": a, "b": b}).json()["paired"]
    page = client.get("/compare", params={"a": a, "b": b}).text
    section = page[page.index('<section id="paired"') : page.index("</section>", page.index('<section id="paired"'))]
    assert "Is B better than A?" in section
    summary = api["summary"].replace("<", "&lt;").replace(">", "&gt;")
    assert summary in section
    assert re.search(rf"{api['pairs']} decided pairs of \d+ cases in both runs", section)
    assert "never counted as a pass or a fail" in section
    assert "Mean score differences" in section


def test_hostile_case_names_stay_text_in_the_paired_section(client: TestClient, web_store: WebStore) -> None:
    a, b = web_store.hostile_runs[-2:]
    page = client.get("/compare", params={"a": a, "b": b}).text
    section = page[page.index('<section id="paired"') : page.index("</section>", page.index('<section id="paired"'))]
    assert "<script" not in section.lower()
