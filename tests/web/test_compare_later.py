"""The compare page comes at once: statistics not computed yet are fetched after it, with the same figures.

Two runs compared for the first time show the counts and a "computing" section that
htmx fills from ``/compare/paired``; the figures there are those of ``/api/compare``.
Once computed, the comparison is kept (``run_comparisons``): the next load, on a
restarted server too, shows the statistics in the page itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import select

from jurybox.core import CaseRecord, Judgment
from jurybox.store import open_store
from jurybox.store._schema import run_comparisons_table
from jurybox.web import WebSettings, create_app

FRAGMENT = {"HX-Request": "true", "HX-Target": "paired"}
CHANGES = {"HX-Request": "true", "HX-Target": "changes"}


def _app(url: str, inline_cases: int = 0) -> FastAPI:
    """The dashboard; by default every comparison not kept comes after its page (as two big runs' do)."""
    return create_app(url, settings=WebSettings(compare_inline_cases=inline_cases))


def _records(fail_every: int) -> list[CaseRecord]:
    records = []
    for i in range(24):
        name = f"case-{i:02d}"
        score = 0.2 + (i % 7) / 10
        judgment = (
            Judgment.failed(score, "missed", judge="correctness")
            if i % fail_every == 0
            else Judgment.passed(score + 0.05, "fine", judge="correctness")
        )
        records.append(CaseRecord(name, judgment, duration=0.1 + i / 50, cost=0.001))
    return records


@pytest.fixture
def three_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, tuple[str, str, str]]]:
    """A store with three finished runs of one suite (each one's baseline comparison kept by finish_run)."""
    monkeypatch.setattr("jurybox.store._store.KEEP_AT_FINISH", 0)  # as for big runs
    url = f"sqlite:///{tmp_path / 'later.db'}"
    runs = []
    with open_store(url) as store:
        for fail_every in (3, 4, 2):
            run_id = store.runs.begin("later", cases={f"case-{i:02d}": {} for i in range(24)}, judge_model="fake")
            store.results.record_many(run_id, _records(fail_every))
            store.finish_run(run_id)
            runs.append(run_id)
    yield url, (runs[0], runs[1], runs[2])


def _section(page: str) -> str:
    start = page.index('<section id="paired"')
    return page[start : page.index("</section>", start)]


def _kept_pairs(url: str) -> set[tuple[str, str]]:
    with open_store(url) as store, store.engine.connect() as connection:
        table = run_comparisons_table
        rows = connection.execute(select(table.c.run_a, table.c.run_b).where(table.c.statistics.is_not(None)))
        return {(a, b) for a, b in rows}


def test_a_new_pair_shows_computing_then_the_same_figures_as_the_api(three_runs: tuple[str, tuple[str, ...]]) -> None:
    """The statistics and the changes of a pair never compared come after the page, the same as computed with it."""
    url, (first, _, third) = three_runs
    assert (first, third) not in _kept_pairs(url)  # the third run's baseline is the second: never compared so
    with TestClient(_app(url)) as client:
        page = client.get("/compare", params={"a": first, "b": third}).text
        later = _section(page)
        assert "Computing the paired statistics" in later
        link = f"/compare/paired?a={first}&amp;b={third}"
        assert f'hx-get="{link}"' in later and 'hx-trigger="load"' in later
        assert f'href="{link}"' in later  # without JavaScript: a link to them
        assert "latency p95" in page and "Counting what changed" in page  # the figures at once, the counts later
        assert "Newly failing" not in page
        changes = client.get("/compare", params={"a": first, "b": third, "now": 1}, headers=CHANGES).text
        assert (first, third) not in _kept_pairs(url)  # the counts' request leaves the statistics to theirs
        fragment = client.get("/compare/paired", params={"a": first, "b": third}, headers=FRAGMENT)
        assert fragment.status_code == 200
        api = client.get("/api/compare", params={"a": first, "b": third}).json()["paired"]
        section = _section(fragment.text)
        assert "<html" not in fragment.text  # the section alone, for htmx to swap in
        assert api["summary"] in section
        assert re.search(rf"{api['pairs']} decided pairs of \d+ cases in both runs", section)
        for mean in api["means"]:
            assert f'<td class="mono">{mean["name"]}</td>' in section
        assert client.get("/api/compare/paired", params={"a": first, "b": third}).json()["paired"] == api
        whole = client.get("/compare/paired", params={"a": first, "b": third}).text
        assert "<html" in whole and _section(whole) == section  # its own page, for a plain link
        # Computed once: the page now has them in it.
        assert _section(client.get("/compare", params={"a": first, "b": third}).text) == section
        assert changes.lstrip().startswith('<div id="changes">') and "<html" not in changes
        inline = TestClient(_app(url, inline_cases=10**9))  # computed with the page: the same counts and cases
        with inline:
            whole_page = inline.get("/compare", params={"a": first, "b": third}).text
        start = whole_page.index('<div id="changes">')
        assert whole_page[start : start + len(changes.strip())] == changes.strip()
        assert "Newly failing" in changes and "Counting" not in changes
    assert (first, third) in _kept_pairs(url)
    with TestClient(_app(url)) as restarted:  # a new server: read from the store, not computed again
        again = restarted.get("/compare", params={"a": first, "b": third}).text
        assert _section(again) == section


def test_a_run_against_its_baseline_shows_the_statistics_in_the_page(three_runs: tuple[str, tuple[str, ...]]) -> None:
    url, (_, second, third) = three_runs
    assert (second, third) in _kept_pairs(url)  # kept by finish_run
    with TestClient(_app(url)) as client:
        page = client.get("/compare", params={"a": second, "b": third}).text
        section = _section(page)
        api = client.get("/api/compare", params={"a": second, "b": third}).json()["paired"]
    assert "Computing" not in section and "hx-get" not in section
    assert "Counting" not in page and "Newly failing" in page  # the kept counts, in the page itself
    assert api["summary"] in section and "Mean score differences" in section
