"""Schema 0013: a finished run's stats stored once and read back, costs of unknown price kept as a lower bound,
and the indexed search matching exactly what a scan matches."""

from __future__ import annotations

import dataclasses

from sqlalchemy import select
from store_testkit import make_record

from jurybox.core import UNPRICED_KEY, CaseRecord
from jurybox.store import CaseQuery, Store, StoreBrowser
from jurybox.store._schema import results_table, run_summaries_table
from jurybox.store._search import search_index
from jurybox.store._stats_rows import StatsRows


def _run(store: Store, records: list[CaseRecord]) -> str:
    run_id = store.runs.begin("suite", cases={r.case: {"prompt": r.case} for r in records})
    for record in records:
        store.results.record(run_id, record)
    store.finish_run(run_id)
    return run_id


def test_finish_run_stores_the_stats_the_browser_would_compute(store: Store) -> None:
    run_id = _run(store, [make_record("a"), make_record("b", llm=False), make_record("c", duration=2.0)])
    browser = StoreBrowser(store.engine)
    run = browser.runs.find(run_id)
    assert run is not None
    with store.engine.connect() as connection:
        assert connection.execute(select(run_summaries_table.c.run_id)).scalars().all() == [run_id]
        computed = StatsRows.read(connection, [run_id]).stats_of(run_id)
    assert browser.stats.of(run) == computed
    # A summary of an earlier finish (the run was resumed since) is never taken for the current figures.
    later = dataclasses.replace(run, finished_at=run.finished_at.replace(year=2099) if run.finished_at else None)
    assert StoreBrowser(store.engine).stats.of(later) == computed


def test_a_partly_priced_case_keeps_its_known_cost_and_the_calls_without_a_price(store: Store) -> None:
    priced = make_record("priced", cost=0.002)
    partly = dataclasses.replace(
        make_record("partly", cost=None), metadata={UNPRICED_KEY: {"calls": 3, "known_cost": 0.0015}}
    )
    unknown = make_record("unknown", cost=None)
    run_id = _run(store, [priced, partly, unknown])
    run = store.runs.get(run_id)
    assert run.cost is not None and abs(run.cost - 0.0035) < 1e-12  # the known part only
    assert (run.unpriced_calls, run.cost_unknown) == (3, 1)
    with store.engine.connect() as connection:
        rows = dict(connection.execute(select(results_table.c.case_name, results_table.c.unpriced_calls)).all())
    assert rows == {"priced": 0, "partly": 3, "unknown": None}
    record = StoreBrowser(store.engine).cases.record(run_id, "partly")
    assert record is not None and record.cost is None  # a record's cost stays unknown...
    assert record.cost_parts == (0.0015, 3)  # ...and says what is known


def test_the_search_index_finds_what_a_scan_finds(store: Store) -> None:
    names = ["case-0999", "case-10999", "Case-0999-b", "100%_off", 'quote"d', "other"]
    run_id = _run(store, [make_record(name) for name in names])
    browser = StoreBrowser(store.engine)
    run = browser.runs.find(run_id)
    assert run is not None
    with store.engine.connect() as connection:
        assert search_index(connection) in ("fts5", "trigram")
    for needle, expected in [
        ("case-0999", {"case-0999", "Case-0999-b"}),
        ("0999", {"case-0999", "case-10999", "Case-0999-b"}),
        ("%_o", {"100%_off"}),
        ('e"d', {'quote"d'}),
        ("th", {"other"}),  # under three characters: read from the rows
    ]:
        page = browser.cases.page(run, CaseQuery(search=needle))
        assert {row.case for row in page.items} == expected, needle
        assert page.total == len(expected)
