"""Schema 0014: a comparison of two finished runs kept once computed, read back with the same figures,
and never taken for a run that was resumed and finished again since."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from sqlalchemy import create_engine, delete, func, select
from store_testkit import make_record

from jurybox.core import CaseRecord
from jurybox.store import RunInfo, Store, StoreBrowser, open_store
from jurybox.store._paired_sql import PairedFigures, paired_figures
from jurybox.store._schema import run_comparisons_table


@pytest.fixture(autouse=True)
def keep_every_comparison(monkeypatch: pytest.MonkeyPatch) -> None:
    """finish_run keeps the comparison of runs of any size (it does from ``KEEP_AT_FINISH`` cases)."""
    monkeypatch.setattr("jurybox.store._store.KEEP_AT_FINISH", 0)


def _records(prefix: str, count: int, fail_every: int) -> list[CaseRecord]:
    return [
        make_record(f"{prefix}{i:02d}", llm=i % fail_every != 0, duration=0.1 + i / 100, cost=0.001)
        for i in range(count)
    ]


def _run(store: Store, records: list[CaseRecord], status: str = "completed") -> str:
    run_id = store.runs.begin("suite", cases={r.case: {"prompt": r.case} for r in records}, judge_model="fake")
    store.results.record_many(run_id, records)
    store.finish_run(run_id, status)  # type: ignore[arg-type]
    return run_id


def _kept(store: Store) -> set[tuple[str, str, bool, bool]]:
    table = run_comparisons_table
    with store.engine.connect() as connection:
        rows = connection.execute(
            select(table.c.run_a, table.c.run_b, table.c.summary.is_not(None), table.c.paired.is_not(None))
        ).all()
    return {tuple(row) for row in rows}  # type: ignore[misc]


def _forget(store: Store) -> None:
    with store.engine.begin() as connection:
        connection.execute(delete(run_comparisons_table))


def _info(store: Store, run_id: str) -> RunInfo:
    found = StoreBrowser(store.engine).runs.find(run_id)
    assert found is not None
    return found


def test_finish_run_keeps_the_comparison_with_the_baseline_and_it_reads_back_the_same(store: Store) -> None:
    a = _run(store, _records("case-", 30, 4))
    b = _run(store, [*_records("case-", 28, 3), make_record("new-case")])
    assert _kept(store) == {(a, b, True, True)}  # the first run has no baseline: nothing kept for it
    run_a, run_b = _info(store, a), _info(store, b)

    kept = store.paired.compare(run_a, run_b)  # the statistics finish_run kept
    kept_paired = kept.to_dict()
    kept_browser = StoreBrowser(store.engine)
    kept_summary = kept_browser.comparisons.compare(run_a, run_b)
    kept_page = kept_browser.comparisons.cases(kept_summary, "broke")
    _forget(store)
    computed = store.paired.compare(run_a, run_b)
    computed_paired = computed.to_dict()
    computed_browser = StoreBrowser(store.engine)
    computed_summary = computed_browser.comparisons.compare(run_a, run_b)

    assert kept.comparison == computed.comparison  # every figure: pairs, intervals, p-values, added, removed
    assert kept_paired == computed_paired
    assert computed_paired["added"] == ["new-case"] and len(computed_paired["removed"]) == 2
    assert kept_summary == computed_summary
    assert kept_summary.counts["broke"] > 0 and kept_summary.counts["only_b"] == 1
    assert kept_page == computed_browser.comparisons.cases(computed_summary, "broke")
    assert _kept(store) == {(a, b, True, True)}  # computing it again kept it again
    # Statistics kept at another level are not taken for these: computed again from the kept figures.
    strict = store.paired.compare(run_a, run_b, alpha=0.01)
    assert strict.comparison.pass_rate.alpha == 0.01
    assert store.paired.compare(run_a, run_b).comparison == computed.comparison


def test_kept_figures_read_back_bit_for_bit(store: Store) -> None:
    a = _run(store, _records("case-", 40, 3))
    b = _run(store, _records("case-", 40, 5))
    with store.engine.connect() as connection:
        computed = paired_figures(connection, a, b)
        kept = connection.execute(select(run_comparisons_table.c.paired)).scalar_one()
    assert PairedFigures.from_json(kept) == computed  # floats, counts and names, through the database's JSON
    assert PairedFigures.from_json({**computed.to_json(), "v": 0}) is None  # another version: computed again
    assert PairedFigures.from_json({"v": 1, "table": "broken"}) is None


def test_a_run_resumed_and_finished_again_is_compared_afresh(store: Store) -> None:
    a = _run(store, _records("case-", 10, 2))
    b = _run(store, _records("case-", 8, 3), status="interrupted")
    assert _kept(store) == set()  # an interrupted run is resumed later: not compared at its finish
    run_a, stopped = _info(store, a), _info(store, b)
    StoreBrowser(store.engine).comparisons.paired(run_a, stopped)
    assert _kept(store) == {(a, b, False, True)}
    store.results.record_many(b, _records("case-", 10, 3)[8:])  # resumed: the last two cases
    store.finish_run(b)
    finished = _info(store, b)
    assert finished.finished_at != stopped.finished_at
    paired = StoreBrowser(store.engine).comparisons.paired(run_a, finished)
    assert paired.comparison.removed == ()  # both cases it lacked when stopped are there now
    assert paired.pairs == 10
    # The comparison of the stopped run's finish is never read for the new one, nor kept beside it.
    assert store.paired.kept(run_a, stopped) is None
    with store.engine.connect() as connection:
        assert connection.execute(select(func.count()).select_from(run_comparisons_table)).scalar_one() == 1


def test_a_small_run_is_compared_when_shown_not_when_it_finishes(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("jurybox.store._store.KEEP_AT_FINISH", 25)  # cases of the run and its baseline together
    _run(store, _records("case-", 12, 2))
    _run(store, _records("case-", 12, 3))
    assert _kept(store) == set()  # 12 + 12 cases: milliseconds to compute when first shown
    _run(store, _records("case-", 13, 3))
    assert len(_kept(store)) == 1  # 13 + 12


def test_a_running_run_is_never_kept(store: Store) -> None:
    a = _run(store, _records("case-", 6, 2))
    running = store.runs.begin("suite", cases={f"case-{i:02d}": {} for i in range(6)}, judge_model="fake")
    store.results.record_many(running, _records("case-", 4, 2))
    run_a, live = _info(store, a), _info(store, running)
    browser = StoreBrowser(store.engine)
    assert browser.comparisons.paired_ready(run_a, live) is None
    assert browser.comparisons.paired(run_a, live).pairs == 4
    browser.comparisons.compare(run_a, live)
    assert _kept(store) == set()


def test_a_store_that_refuses_the_write_still_shows_the_comparison(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "store.db"
    with open_store(f"sqlite:///{path}") as store:
        a = _run(store, _records("case-", 12, 2))
        b = _run(store, _records("case-", 12, 3))
        _forget(store)
        expected = store.paired.compare(_info(store, a), _info(store, b)).to_dict()
        _forget(store)
        run_a, run_b = _info(store, a), _info(store, b)
    read_only = create_engine(f"sqlite:///file:{path}?mode=ro&uri=true")
    try:
        browser = StoreBrowser(read_only)
        with caplog.at_level(logging.WARNING, logger="jurybox.store._run_comparisons"):
            assert browser.comparisons.paired(run_a, run_b).to_dict() == expected
            assert browser.comparisons.compare(run_a, run_b).common == 12
        assert "not kept" in caplog.text
    finally:
        read_only.dispose()
