"""A run's totals added up while its records were written (``LiveTally``) are the totals read back from the store."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from jurybox.core import SKIPPED_TIERS_KEY, Status
from jurybox.report import LiveTally, RunReport, render_console, report_from_store, to_json
from jurybox.store import CaseRecord, Store, open_store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with open_store(f"sqlite:///{tmp_path / 'jurybox.db'}") as opened:
        yield opened


def stored_run(store: Store, records: list[CaseRecord]) -> str:
    run_id = store.runs.begin("property-agent", cases={r.case: {"prompt": r.case} for r in records})
    for record in records:
        store.results.record(run_id, record)
    store.finish_run(run_id, "completed")
    return run_id


def tally_of(records: list[CaseRecord], *, seed: int = 7) -> LiveTally:
    """The tally a run makes: its records added in the order they finished, not the plan's."""
    tally = LiveTally()
    for record in random.Random(seed).sample(records, len(records)):
        tally.add(record)
    return tally


def console_text(report: RunReport, limit: int | None) -> str:
    console = Console(record=True, width=200, color_system=None, force_terminal=False)
    render_console(report, console, limit=limit)
    return console.export_text()


def full_passes(store: Store, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Records each read of the store that rebuilds every record of a run (not a few named cases)."""
    passes: list[Any] = []
    stream = store.results.stream

    def counted(run_id: str, **options: Any) -> Any:
        if options.get("cases") is None:
            passes.append(run_id)
        return stream(run_id, **options)

    monkeypatch.setattr(store.results, "stream", counted)
    return passes


def with_skipped_tier(records: list[CaseRecord]) -> list[CaseRecord]:
    """The fixture's records, two of them saying a tier was left out (as a run without a judge model does)."""
    marked = {**records[1].metadata, SKIPPED_TIERS_KEY: {"llm_judge": "no judge model configured"}}
    other = {**records[4].metadata, SKIPPED_TIERS_KEY: {"similarity": "the embedding model is not installed"}}
    return [
        replace(record, metadata=marked) if i == 1 else replace(record, metadata=other) if i == 4 else record
        for i, record in enumerate(records)
    ]


def test_the_tally_gives_the_read_back_report_without_a_pass_over_the_store(
    store: Store, records: list[CaseRecord], monkeypatch: pytest.MonkeyPatch
) -> None:
    every = with_skipped_tier(records)
    # The fixture's records hold every status, degraded verdicts, retries and judge calls.
    assert {r.status for r in every} == set(Status)
    run_id = stored_run(store, every)
    read_back = report_from_store(store, run_id)
    expected = (read_back.totals, [c.name for c in read_back.failing_first()], console_text(read_back, 3))
    expected_full = (console_text(read_back, None), to_json(read_back))
    passes = full_passes(store, monkeypatch)

    tallied = replace(report_from_store(store, run_id), tally=tally_of(every))

    assert tallied.tallied
    assert (tallied.totals, [c.name for c in tallied.failing_first()], console_text(tallied, 3)) == expected
    assert passes == []  # the totals and the order came from the tally; the console read only its 3 cases
    assert (console_text(tallied, None), to_json(tallied)) == expected_full


def test_the_reports_own_skipped_tiers_come_first_with_their_reasons(store: Store, records: list[CaseRecord]) -> None:
    every = with_skipped_tier(records)
    run_id = stored_run(store, every)
    own = {"llm_judge": "judge model unreachable", "llm_operations": "not configured"}
    read_back = replace(report_from_store(store, run_id), skipped_tiers=own)

    tallied = replace(read_back, tally=tally_of(every))

    assert tallied.totals == read_back.totals
    left_out = sum(1 for r in every if "llm_judge" in r.metadata.get(SKIPPED_TIERS_KEY, {}))
    assert [(s.tier, s.reason, s.cases) for s in tallied.totals.skipped_tiers.values()] == [
        ("llm_judge", "judge model unreachable", left_out),
        ("llm_operations", "not configured", 0),
        ("similarity", "the embedding model is not installed", 1),
    ]


@pytest.mark.parametrize("change", ["missed", "one less", "one more", "another status", "another name"])
def test_a_tally_that_did_not_see_the_stored_records_is_not_used(
    store: Store, records: list[CaseRecord], change: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = stored_run(store, records)
    read_back = report_from_store(store, run_id)
    expected = (read_back.totals, [c.name for c in read_back.failing_first()])
    failing = next(r for r in records if r.status is Status.FAIL)
    seen = {
        "missed": records,
        "one less": records[1:],
        "one more": [*records, replace(records[0], case="never-stored")],
        "another status": [
            replace(r, judgment=replace(r.judgment, status=Status.PASS)) if r is failing else r for r in records
        ],
        "another name": [replace(r, case="renamed") if r is failing else r for r in records],
    }[change]
    tally = tally_of(seen)
    if change == "missed":
        tally.miss("worker-case")
    passes = full_passes(store, monkeypatch)

    report = replace(report_from_store(store, run_id), tally=tally)

    assert (report.totals, [c.name for c in report.failing_first()]) == expected
    assert passes == [run_id]  # the report counted the records itself


def test_records_held_in_memory_are_counted_as_before(records: list[CaseRecord]) -> None:
    held = RunReport(suite="s", run_id="r", records=records)

    assert replace(held, tally=tally_of(records[:2])).totals == held.totals
    assert json.loads(to_json(replace(held, tally=LiveTally())))["totals"] == json.loads(to_json(held))["totals"]


def test_costs_and_case_times_add_up_to_the_same_digits_in_any_order() -> None:
    from jurybox.report._totals import ExactSum

    values = [0.1, 0.2, 0.3, 1e-9, 44.33, 0.000123, 12.5] * 7
    sums = []
    for seed in range(5):
        total = ExactSum()
        for value in random.Random(seed).sample(values, len(values)):
            total.add(value)
        sums.append(total.value)
    assert len(set(sums)) == 1 and sums[0] == math.fsum(values)
    unbounded = ExactSum()
    for value in (1.0, float("inf"), 2.0):
        unbounded.add(value)
    assert unbounded.value == float("inf")
