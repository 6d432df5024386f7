"""The console report at 80, 120 and 200 columns: snapshots, and nothing a person acts on is cut.

Each layout is kept as a plain-text snapshot under tests/snapshots/ (``console-*.txt``),
readable in a diff. After an intended change of the output, rewrite them with::

    JURYBOX_UPDATE_SNAPSHOTS=1 .venv/bin/pytest tests/report/test_report_console_widths.py

and read the diff before committing. The assertions below hold whatever the
snapshots say: every case name on one line, every status, and the first line
of every reason whole (never cut with ``…``, never split inside a word).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from report_fixtures import SKIP_REASON, START, build_records
from rich.console import Console

from jurybox.core import Context, Judgment, Status
from jurybox.report import RunReport, render_console, to_html, to_markdown
from jurybox.report._case import CaseSummary
from jurybox.store import CaseRecord
from snapshot_util import normalise

WIDTHS = (80, 120, 200)
Snapshot = Callable[[str, str], None]


def rendered(report: RunReport, width: int, **options: object) -> str:
    console = Console(record=True, width=width, color_system=None, force_terminal=False)
    render_console(report, console, **options)  # type: ignore[arg-type]
    return console.export_text()


def mixed_run() -> RunReport:
    """PASS, FAIL, ERROR, ABSTAIN, degraded, multi-round and a skipped LLM tier (see report_fixtures)."""
    return RunReport(
        suite="property-agent",
        run_id="run-7f3a",
        records=build_records(),
        started_at=START,
        finished_at=START + timedelta(seconds=44.5),
        judge_model="openai:gpt-4o-mini",
        notes=(f"llm_judge tier skipped for 1 case: {SKIP_REASON}",),
        planned=8,
    )


def green_run() -> RunReport:
    passing = [record for record in build_records() if record.status is Status.PASS and "degraded" not in record.case]
    return RunReport(suite="property-agent", run_id="run-green", records=passing, planned=len(passing))


def first_line(text: str) -> str:
    return " ".join(text.strip().splitlines()[0].split())


def assert_essentials(text: str, cases: list[CaseSummary]) -> None:
    """Names on one line each, statuses shown, and the first line of every not-passed reason whole."""
    lines = text.splitlines()
    flat = " ".join(text.split())
    for case in cases:
        visible_name = case.name.encode("unicode_escape").decode() if not case.name.isprintable() else case.name
        assert any(visible_name in line for line in lines), f"{case.name!r} is cut or split"
        if not case.ok:
            header = next(line for line in lines if visible_name in line)
            assert case.status.value.upper() in header
            reason = first_line(case.reason)
            assert reason in flat, f"the reason of {case.name} is cut: {reason!r}"


@pytest.mark.parametrize("width", WIDTHS)
def test_mixed_run_at_each_width(width: int, snapshot: Snapshot) -> None:
    report = mixed_run()
    text = rendered(report, width)
    assert_essentials(text, list(report.cases))
    assert max(len(line) for line in text.splitlines()) <= width
    snapshot(f"console-mixed-{width}", normalise(text))


@pytest.mark.parametrize("width", WIDTHS)
def test_green_run_at_each_width(width: int, snapshot: Snapshot) -> None:
    text = rendered(green_run(), width)
    assert "FAIL" not in text and "ERROR" not in text
    assert "PASSED 3/3 passed" in text
    snapshot(f"console-green-{width}", normalise(text))


@pytest.mark.parametrize("width", WIDTHS)
def test_verbose_lists_every_passing_case_whole(width: int, snapshot: Snapshot) -> None:
    report = mixed_run()
    text = rendered(report, width, verbose=True)
    assert_essentials(text, list(report.cases))
    assert "Rating: [[9]]" in text  # verbose shows an LLM judge's reasoning in full
    snapshot(f"console-verbose-{width}", normalise(text))


def test_failures_come_first_then_errors_then_abstains() -> None:
    text = rendered(mixed_run(), 200)
    order = [text.index(name) for name in ("revenue-october", "booking-lookup", "bookings-next-week")]
    assert order == sorted(order)
    assert text.index("reviews-summary") < text.index("booking-lookup")  # both FAILs before the ERROR
    assert text.index("booking-lookup") < text.index(" PASS ")


def test_a_failing_case_shows_the_reply_the_tools_and_the_reasoning() -> None:
    text = rendered(mixed_run(), 120)
    block = text[text.index(" FAIL  revenue-october") : text.index("booking-lookup")]
    assert "reply: Your October revenue was about $9,000." in block
    assert "tools: made get_revenue(month='2026-10')" in block
    assert "why: contains('$12,400')" in block
    abstain = text[text.index(" ABSTAIN  bookings-next-week") :]
    assert "no [[rating]] in the judge reply" in abstain  # the deciding judge's reasoning
    assert "expected get_listings" in abstain or "tools: made get_bookings" in abstain


def test_a_long_reply_is_bounded_with_a_pointer_to_the_report() -> None:
    long_reply = "\n".join(f"line {n}: " + "word " * 30 for n in range(40))
    record = CaseRecord(
        "long-reply", Judgment.failed(reasoning="too long"), context=Context(input="q", output=long_reply)
    )
    text = rendered(RunReport(suite="s", run_id="r", records=[record]), 80)
    assert "line 0:" in text and "line 39:" not in text
    assert "more characters, see the HTML or JSON report)" in text


def test_hostile_reply_cannot_drive_the_terminal() -> None:
    reply = "ok\x1b[2J\x1b]0;pwned\x07 [bold red]markup[/] \rover\x00written"
    record = CaseRecord("hostile", Judgment.failed(reasoning="bad"), context=Context(input="q", output=reply))
    console = Console(record=True, width=120, force_terminal=True)
    render_console(RunReport(suite="s", run_id="r", records=[record]), console)
    text = console.export_text(styles=False)
    assert "\x1b" not in text and "\x07" not in text and "\x00" not in text and "\r" not in text
    assert "[bold red]markup[/]" in text  # shown as typed, not parsed as rich markup
    assert "ok" in text and "\\rover\\x00written" in text


def test_the_console_lists_cases_in_the_order_of_the_html_and_markdown_reports() -> None:
    report = mixed_run()
    not_passed = [case.name for case in report.failing_first() if not case.ok]
    for text in (rendered(report, 200), to_html(report), to_markdown(report)):
        positions = [text.index(name) for name in not_passed]
        assert positions == sorted(positions)
