"""A run's calibrated judges in every report: corrected, too weak, uncalibrated; escaped; absent when none."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime

import pytest
from report_fixtures import SCRIPT
from rich.console import Console

from jurybox.report import CalibratedJudge, RunReport, from_json, render_console, to_html, to_json, to_markdown

WHEN = datetime(2026, 11, 20, 8, 0, tzinfo=UTC)
CORRECTED = CalibratedJudge(
    "strict", "k1", "corrected", 8, 10, corrected=0.857, low=0.7, high=1.0, tpr=0.93, tnr=0.81,
    calibration_id=3, calibrated_at=WHEN, dataset="labels.jsonl",
)  # fmt: skip
WEAK = CalibratedJudge("coin", "k2", "too_weak", 5, 10, tpr=0.5, tnr=0.4, calibrated_at=WHEN, dataset="labels.jsonl")
CHANGED = CalibratedJudge("lenient", "k3", "uncalibrated", 9, 10, calibration_id=1, calibrated_at=WHEN)


@pytest.fixture
def calibrated(report: RunReport) -> RunReport:
    return dataclasses.replace(report, calibrations=[CORRECTED, WEAK, CHANGED])


def test_each_status_reads_as_one_line() -> None:
    assert CORRECTED.describe() == (
        "strict: observed 80.0% (8/10), corrected 85.7% [70.0%, 100.0%] "
        "(TPR 0.93, TNR 0.81; calibrated on 2026-11-20 with labels.jsonl)"
    )
    assert WEAK.describe() == (
        "coin: observed 50.0% (5/10); too weak for a correction: TPR 0.50, TNR 0.40 (TPR + TNR <= 1); "
        "calibrated on 2026-11-20 with labels.jsonl"
    )
    assert (
        CHANGED.describe() == "lenient: uncalibrated: its prompt or model changed since its calibration on 2026-11-20"
    )
    undecided = CalibratedJudge("idle", "k4", "undecided", calibrated_at=WHEN)
    assert undecided.observed is None and "decided no case in this run" in undecided.describe()
    with pytest.raises(ValueError, match="status must be one of"):
        CalibratedJudge("x", "k", "guessed")  # type: ignore[arg-type]


def test_json_lists_them_and_reads_them_back(calibrated: RunReport) -> None:
    data = json.loads(to_json(calibrated))
    assert [c["status"] for c in data["calibrations"]] == ["corrected", "too_weak", "uncalibrated"]
    assert data["calibrations"][0]["observed"] == 0.8 and data["calibrations"][0]["text"] == CORRECTED.describe()
    assert data["calibrations"][0]["calibrated_at"] == "2026-11-20T08:00:00+00:00"
    assert from_json(to_json(calibrated)).calibrations == (CORRECTED, WEAK, CHANGED)


def test_console_markdown_and_html_show_one_line_per_judge(calibrated: RunReport) -> None:
    console = Console(record=True, width=300)
    render_console(calibrated, console)
    text = console.export_text()
    assert [line for line in text.splitlines() if line.startswith("calibration: ")] == [
        f"calibration: {judge.describe()}" for judge in (CORRECTED, WEAK, CHANGED)
    ]
    markdown = to_markdown(calibrated)
    assert "**Calibrated judges**" in markdown and "- lenient: uncalibrated: its prompt or model changed" in markdown
    assert "corrected 85.7% \\[70.0%, 100.0%\\]" in markdown
    page = to_html(calibrated)
    assert "<h2>Calibrated judges</h2>" in page and "too weak for a correction" in page
    assert "TPR + TNR &lt;= 1" in page  # escaped like every value


def test_untrusted_names_are_escaped(report: RunReport) -> None:
    hostile = dataclasses.replace(CORRECTED, judge=SCRIPT, dataset="a|b*`c`")
    named = dataclasses.replace(report, calibrations=[hostile])
    assert SCRIPT not in to_html(named) and "&lt;script&gt;" in to_html(named)
    assert SCRIPT not in to_markdown(named) and "a\\|b\\*\\`c\\`" in to_markdown(named)


def test_a_run_without_calibrations_keeps_its_reports(report: RunReport) -> None:
    assert "calibrations" not in json.loads(to_json(report))
    assert "Calibrated judges" not in to_markdown(report) and "Calibrated judges" not in to_html(report)
    console = Console(record=True, width=300)
    render_console(report, console)
    assert "calibration:" not in console.export_text()


def test_notes_stored_with_a_run_read_back_and_skip_what_they_cannot_read() -> None:
    from jurybox.report import stored_calibrations

    assert stored_calibrations([{"judge": "x"}, "junk", CORRECTED.to_dict(), {**WEAK.to_dict(), "status": "?"}]) == [
        CORRECTED
    ]
    assert stored_calibrations(None) == []
