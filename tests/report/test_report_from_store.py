"""A report rebuilt from the SQLite store equals the one built from the runner's records."""

from __future__ import annotations

from pathlib import Path

import pytest

from jurybox.report import RunReport, report_from_store, to_json
from jurybox.store import CaseRecord, StoreError, open_store


def test_stored_run_reports_like_the_live_one(records: list[CaseRecord], tmp_path: Path) -> None:
    with open_store(f"sqlite:///{tmp_path / 'jurybox.db'}") as store:
        run_id = store.runs.begin(
            "property-agent",
            cases={r.case: {"prompt": r.case} for r in records},
            judge_model="openai:gpt-4o-mini",
            git_commit="216c381",
        )
        for record in records:
            store.results.record(run_id, record)
        store.finish_run(run_id, "completed")
        report = report_from_store(store, run_id)
    live = RunReport(suite="property-agent", run_id=run_id, records=records)
    assert report.status == "completed"
    assert report.metadata == {"git_commit": "216c381"}
    assert [c.name for c in report.cases] == [r.case for r in records]
    assert [(c.status, c.score, c.reason, c.tier, c.degraded, dict(c.skipped)) for c in report.cases] == [
        (c.status, c.score, c.reason, c.tier, c.degraded, dict(c.skipped)) for c in live.cases
    ]
    assert report.totals.tiers == live.totals.tiers
    assert report.totals.skipped_tiers == live.totals.skipped_tiers
    assert (report.totals.cost, report.totals.cost_unknown) == (live.totals.cost, live.totals.cost_unknown)
    assert to_json(report)  # the whole stored run renders


def test_unfinished_run_is_reported_as_interrupted(records: list[CaseRecord], tmp_path: Path) -> None:
    with open_store(f"sqlite:///{tmp_path / 'jurybox.db'}") as store:
        run_id = store.runs.begin("property-agent", cases={r.case: {"prompt": r.case} for r in records})
        for record in records[:3]:
            store.results.record(run_id, record)
        report = report_from_store(store, run_id)
        with pytest.raises(StoreError):
            report_from_store(store, "no-such-run")
    assert report.status == "interrupted"
    assert report.missing == 5
    assert report.notices()[0].endswith("5 of 8 planned case(s) have no result")
