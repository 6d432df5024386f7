"""A report streamed from the store renders exactly like one built from records held in memory."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
from report_fixtures import START
from rich.console import Console

from jurybox.core import Status
from jurybox.report import (
    RunReport,
    iter_html,
    iter_json,
    iter_junit,
    render_console,
    report_from_store,
    to_html,
    to_json,
    to_junit,
    to_markdown,
    write_reports,
)
from jurybox.store import CaseRecord, ResultRepository, Store, StoredRecords, open_store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with open_store(f"sqlite:///{tmp_path / 'jurybox.db'}") as opened:
        yield opened


def stored_run(store: Store, records: list[CaseRecord], *, copies: int = 1) -> str:
    """A finished run of ``records`` (repeated ``copies`` times under new names)."""
    every = [replace(r, case=f"{r.case}-{i}" if copies > 1 else r.case) for i in range(copies) for r in records]
    run_id = store.runs.begin(
        "property-agent", cases={r.case: {"prompt": r.case} for r in every}, judge_model="openai:gpt-4o-mini"
    )
    for record in every:
        store.results.record(run_id, record)
    store.finish_run(run_id, "completed")
    return run_id


def both(store: Store, run_id: str) -> tuple[RunReport, RunReport]:
    """The streamed report of a stored run and the same run with its records read into memory."""
    streamed = report_from_store(store, run_id)
    held = replace(streamed, records=store.results.read_all(run_id))
    assert streamed.streamed and not held.streamed
    return streamed, held


def console_text(report: RunReport, limit: int | None) -> str:
    console = Console(record=True, width=200, color_system=None, force_terminal=False)
    render_console(report, console, limit=limit)
    return console.export_text()


def test_every_format_is_identical_streamed_or_held(store: Store, records: list[CaseRecord]) -> None:
    streamed, held = both(store, stored_run(store, records))

    assert to_json(streamed) == to_json(held)
    assert to_json(streamed, indent=None) == to_json(held, indent=None)
    assert to_junit(streamed) == to_junit(held)
    assert to_junit(streamed, testcase_properties=False) == to_junit(held, testcase_properties=False)
    assert to_html(streamed) == to_html(held)
    assert to_markdown(streamed) == to_markdown(held)
    assert to_markdown(streamed, max_bytes=3000) == to_markdown(held, max_bytes=3000)
    assert console_text(streamed, None) == console_text(held, None)
    assert console_text(streamed, 3) == console_text(held, 3)
    assert streamed.totals == held.totals
    assert streamed.ok == held.ok
    assert [c.name for c in streamed.failing_first()] == [c.name for c in held.failing_first()]


def test_pieces_join_to_the_whole_document(store: Store, records: list[CaseRecord]) -> None:
    streamed, _ = both(store, stored_run(store, records))

    # The first pass adds the totals up while it encodes the cases, so they come back from a spool.
    assert not streamed.tallied
    spooled = "".join(iter_json(streamed))
    assert streamed.tallied
    pieces = list(iter_json(streamed))
    assert len(pieces) == len(records) + 2  # head, one per case, tail
    assert "".join(pieces) == spooled
    assert json.loads(spooled)["totals"]["cases"] == len(records)
    assert len(list(iter_junit(streamed))) == len(records) + 2
    assert len(list(iter_html(streamed))) == len(records) + 2


def test_an_empty_run_streams_valid_documents(store: Store) -> None:
    run_id = store.runs.begin("empty", cases={})
    store.finish_run(run_id, "completed")
    report = report_from_store(store, run_id)

    assert json.loads(to_json(report))["cases"] == []
    assert json.loads(to_json(report, indent=None))["cases"] == []
    assert "<testsuite " in to_junit(report) and "<testcase" not in to_junit(report)
    assert not report.ok


def test_a_big_streamed_run_is_cut_in_the_console_and_counted_in_full(store: Store, records: list[CaseRecord]) -> None:
    run_id = stored_run(store, records, copies=25)  # 200 cases
    report = report_from_store(store, run_id)
    failing = report.totals.not_passed

    text = console_text(report, 10)

    assert report.totals.cases == 200
    # The failing cases not shown are counted; the passing ones are one line, whatever their number.
    assert f"… {failing - 10} more case(s) not shown ({failing - 10} of them not passed)" in text
    assert f" PASS  {report.totals.passed} case(s) (-v lists each" in text
    assert len(report.failing_first()) == 200
    first = report.failing_first()[0]
    assert first.status is Status.FAIL


def test_a_cut_console_reads_the_store_once_in_full_and_rebuilds_only_the_rows_shown(
    store: Store, records: list[CaseRecord], monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = stored_run(store, records, copies=25)  # 200 cases
    held = replace(report_from_store(store, run_id), records=store.results.read_all(run_id))
    passes: list[list[str]] = []
    stream = ResultRepository.stream

    def counted(self: ResultRepository, run_id: str, **options: Any) -> Iterator[CaseRecord]:
        passes.append([])
        for record in stream(self, run_id, **options):
            passes[-1].append(record.case)
            yield record

    monkeypatch.setattr(ResultRepository, "stream", counted)
    streamed = report_from_store(store, run_id)

    assert console_text(streamed, 10) == console_text(held, 10)
    # One pass for the totals and the failing-first ranks, one that rebuilds just the 10 rows shown.
    assert [len(cases) for cases in passes] == [200, 10]
    assert sorted(passes[1]) == sorted(case.name for case in held.failing_first()[:10])
    assert [c.name for c in streamed.failing_first()[5:15:3]] == [c.name for c in held.failing_first()[5:15:3]]
    assert streamed.failing_first()[-1].name == held.failing_first()[-1].name


def test_stored_records_read_only_the_cases_asked_for(store: Store, records: list[CaseRecord]) -> None:
    run_id = stored_run(store, records)
    stored = store.results.records(run_id)
    names = stored.names()

    assert [r.case for r in stored.only([names[3], names[1], "not-in-run"])] == [names[1], names[3]]
    assert list(stored.only([])) == []
    assert [r.case for r in store.results.stream(run_id, cases={names[0], names[-1]})] == [names[0], names[-1]]
    # A round recorded with its case's own verdict and context comes back sharing them, as it was recorded.
    for original, read in zip(records, stored, strict=True):
        for kept, back in zip(original.rounds, read.rounds, strict=True):
            assert (back.judgment is read.judgment) == (kept.judgment is original.judgment)
            assert (back.context is read.context) == (kept.context is original.context)


def test_write_reports_reads_the_store_once_in_full_for_json_and_console(
    store: Store, records: list[CaseRecord], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = stored_run(store, records, copies=25)  # 200 cases
    held = replace(report_from_store(store, run_id), records=store.results.read_all(run_id))
    passes: list[int] = []
    stream = ResultRepository.stream

    def counted(self: ResultRepository, run_id: str, **options: Any) -> Iterator[CaseRecord]:
        passes.append(0)
        for record in stream(self, run_id, **options):
            passes[-1] += 1
            yield record

    monkeypatch.setattr(ResultRepository, "stream", counted)
    streamed = report_from_store(store, run_id)
    console = Console(record=True, width=200, color_system=None, force_terminal=False)
    written = write_reports(streamed, ["console", "json"], tmp_path, console=console, console_rows=10)

    # The JSON pass also gives the totals and the failing-first ranks; the console then reads its 10 rows.
    assert passes == [200, 10]
    assert list(written) == ["console", "json"]
    assert Path(str(written["json"])).read_text(encoding="utf-8") == to_json(held)
    assert console.export_text() == console_text(held, 10)


def test_write_reports_streams_files_and_cuts_the_console(
    store: Store, records: list[CaseRecord], tmp_path: Path
) -> None:
    report = report_from_store(store, stored_run(store, records, copies=5))
    console = Console(record=True, width=200, color_system=None, force_terminal=False)

    written = write_reports(
        report, ["console", "json", "junit", "html"], tmp_path / "out", console=console, console_rows=4
    )

    assert json.loads(Path(str(written["json"])).read_text(encoding="utf-8"))["totals"]["cases"] == 40
    assert Path(str(written["junit"])).read_text(encoding="utf-8").count("<testcase ") == 40
    assert "16 more case(s) not shown (16 of them not passed)" in console.export_text()


def test_stored_records_read_names_and_statuses_without_trees(store: Store, records: list[CaseRecord]) -> None:
    run_id = stored_run(store, records)
    stored = store.results.records(run_id)
    some = store.results.records(run_id, cases={records[0].case, records[-1].case, "not-in-run"})

    assert isinstance(stored, StoredRecords)
    assert stored.names() == tuple(r.case for r in records)
    assert stored.status_counts() == {
        s: sum(r.status is s for r in records) for s in Status if any(r.status is s for r in records)
    }
    assert len(stored) == len(records) and list(stored) == store.results.read_all(run_id)
    assert stored[0].case == records[0].case and stored[-1].case == records[-1].case
    assert [r.case for r in stored[1:3]] == [r.case for r in records[1:3]]
    assert stored == store.results.read_all(run_id)
    with pytest.raises(IndexError):
        stored[len(records)]
    assert some.names() == (records[0].case, records[-1].case)
    assert [r.case for r in some] == [records[0].case, records[-1].case]


def test_a_streamed_report_checks_duplicates_and_plan_without_reading_trees(
    store: Store, records: list[CaseRecord]
) -> None:
    run_id = stored_run(store, records)

    with pytest.raises(ValueError, match="planned is 2"):
        RunReport(suite="s", run_id=run_id, records=store.results.records(run_id), planned=2)
    report = RunReport(
        suite="s",
        run_id=run_id,
        records=store.results.records(run_id),
        started_at=START,
        finished_at=START + timedelta(1),
    )
    assert report.totals.cases == len(records)


def test_records_held_in_memory_write_the_json_of_their_stored_copies(store: Store, records: list[CaseRecord]) -> None:
    """Values the encoder takes as they are, values it hands to ``to_jsonable``, and NaN, which it refuses."""
    awkward = {"at": START, "labels": {"b", "a"}, "frozen": MappingProxyType({"k": (1, 2)}), True: "yes", 3: "three"}
    held_records = [replace(records[0], metadata=awkward), replace(records[1], metadata={"ratio": math.nan})]
    streamed, _ = both(store, stored_run(store, held_records))
    held = replace(streamed, records=held_records)

    assert to_json(held) == to_json(streamed)
    cases = json.loads(to_json(held))["cases"]
    assert cases[0]["metadata"] == {
        "at": START.isoformat(),
        "labels": ["a", "b"],
        "frozen": {"k": [1, 2]},
        "true": "yes",
        "3": "three",
    }
    assert cases[1]["metadata"] == {"ratio": "nan"}


def test_the_console_table_is_printed_when_the_json_file_cannot_be_written(
    store: Store, records: list[CaseRecord], tmp_path: Path
) -> None:
    report = report_from_store(store, stored_run(store, records))
    (tmp_path / "taken").write_text("a file, not a folder", encoding="utf-8")
    console = Console(record=True, width=200, color_system=None, force_terminal=False)

    with pytest.raises(OSError):
        write_reports(report, ["console", "json"], tmp_path / "taken" / "report.json", console=console)

    assert records[0].case in console.export_text()
