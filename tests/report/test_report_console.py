"""Console report: the table a developer reads after `jurybox run`."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from jurybox.core import Judgment, Status
from jurybox.report import RunReport, render_console
from jurybox.report._console import STATUS_STYLES, verdict_text
from jurybox.store import CaseRecord


def rendered(report: RunReport, console_width: int = 220, **options: object) -> str:
    console = Console(record=True, width=console_width, color_system=None, force_terminal=False)
    render_console(report, console, **options)  # type: ignore[arg-type]
    return console.export_text()


def test_table_has_every_case_with_verdict_score_reason_and_tier(report: RunReport) -> None:
    text = rendered(report)
    for case in report.cases:
        assert case.name in text
    row = next(line for line in text.splitlines() if "revenue-october" in line)
    assert "FAIL" in row and "0.00" in row and "decided by deterministic" in row
    assert "why: contains('$12,400')" in text
    crash = next(line for line in text.splitlines() if "booking-lookup" in line)
    assert "ERROR" in crash
    assert "why: AgentError: the agent process exited with code 1" in text


def test_abstain_degraded_and_skipped_are_visible(report: RunReport) -> None:
    text = rendered(report, verbose=True)
    assert "ABSTAIN" in next(line for line in text.splitlines() if "bookings-next-week" in line)
    assert "degraded" in next(line for line in text.splitlines() if "bookings-degraded" in line)
    assert "not needed: llm_judge" in text
    assert "skipped: llm_judge" in text


def test_statuses_have_distinct_styles() -> None:
    styles = {str(STATUS_STYLES[s]) for s in Status}
    assert len(styles) == 4


def test_verdict_cell_flags_degraded(report: RunReport) -> None:
    degraded = next(c for c in report.cases if c.degraded)
    cell = verdict_text(degraded)
    assert isinstance(cell, Text)
    assert cell.plain.split() == ["PASS", "degraded"]


def test_multi_round_case_shows_rounds_and_follow_ups(report: RunReport) -> None:
    wide = rendered(report, verbose=True)  # a table
    narrow = rendered(report, verbose=True, console_width=80)  # a stacked list
    for text in (wide, narrow):
        assert "round 1" in text and "(What are my listings?)" in text
        assert "round 2" in text and "(What's the occupancy for the first one?)" in text
        assert "round 0" not in text  # single-round cases: the round's verdict is the case verdict, shown once
        assert "round 2 asked: Which property do you mean?" in text
        assert "replied: The first one you listed, Beach House." in " ".join(text.split())


def test_totals_line_and_tiers(report: RunReport) -> None:
    text = rendered(report)
    assert "FAILED 4/8 passed (50.0%)" in text
    assert "2 fail" in text and "1 error" in text and "1 abstain" in text
    assert "1 degraded verdict(s)" in text
    assert "cost ≥ $0.0019 (price unknown for 2 cases)" in text
    assert "tokens 5,767 (+2 unknown)" in text
    assert "judge calls 5" in text
    # Each tier with seed 003's target (deterministic 95%, llm_operations 80%, llm_judge 70%).
    assert "tiers: deterministic 75.0% (6/8) target 95% missed · llm_judge 80.0% (4/5) target 70% met" in text
    assert "no judge model configured; enable with --judge-model ollama:llama3.1" in text


def test_passing_cases_are_one_line_unless_verbose(report: RunReport) -> None:
    short = rendered(report)
    assert "Rating: [[9]]" not in short
    assert " PASS  3 case(s): lists-properties, occupancy-of-first, mentions-apartment" in short
    full = rendered(report, verbose=True)
    assert "Rating: [[9]]" in full


def test_terminal_escapes_in_untrusted_text_are_shown_not_obeyed() -> None:
    hostile = CaseRecord(
        "hostile\x1b]0;pwned\x07",
        Judgment.failed(reasoning="the answer said \x1b[2J\x1b[31mred\x00 and stopped"),
    )
    console = Console(record=True, width=220, force_terminal=True)
    render_console(RunReport(suite="s", run_id="r", records=[hostile]), console, verbose=True)
    exported = console.export_text(styles=False)
    assert "\x1b" not in exported and "\x00" not in exported and "\x07" not in exported
    # Escape sequences are dropped (they are commands, not text); other control characters are shown.
    assert "the answer said red\\x00 and stopped" in exported
    assert " FAIL  hostile ·" in exported and "pwned" not in exported


def test_interrupted_run_says_so(records: list[CaseRecord]) -> None:
    report = RunReport(suite="s", run_id="r", records=records[:3], status="interrupted", planned=8)
    text = rendered(report)
    assert "INCOMPLETE" in text
    assert "5 of 8 planned case(s) have no result" in text


def test_limit_keeps_failing_cases_and_says_what_is_hidden(report: RunReport) -> None:
    text = rendered(report, limit=3)
    for name in ("revenue-october", "reviews-summary", "booking-lookup"):
        assert name in text
    assert "lists-properties" not in text
    assert " PASS  4 case(s) (-v lists each" in text  # the degraded pass is counted with the others
    assert "… 1 more case(s) not shown (1 of them not passed); see the JSON or HTML report" in text
    assert "FAILED 4/8 passed" in text  # totals still cover every case
