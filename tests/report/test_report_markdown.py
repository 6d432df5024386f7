"""Markdown job summary: headline, totals, failing cases first, details folded away."""

from __future__ import annotations

from report_fixtures import SCRIPT

from jurybox.core import Judgment
from jurybox.report import RunReport, to_markdown
from jurybox.report._markdown import md
from jurybox.store import CaseRecord


def test_headline_and_totals(report: RunReport) -> None:
    text = to_markdown(report)
    lines = text.splitlines()
    assert lines[0] == "## ❌ jurybox · property-agent: 4 of 8 case(s) did not pass"
    assert (
        "| 8 | 4 | 2 | 1 | 1 | 50.0% | 1 | 5 | 5,767 (+2 unknown) | ≥ \\$0.0019 (price unknown for 2 cases) | 44.50s |"
        in lines
    )
    assert "| llm\\_judge | 80.0% | 70% met | 4 | 5 | 5 |" in lines
    assert "> [!NOTE]" in lines
    assert any("no judge model configured" in line for line in lines if line.startswith("> "))


def test_failing_cases_come_first_with_reasons(report: RunReport) -> None:
    text = to_markdown(report)
    attention = text.split("### Cases that need attention", 1)[1].split("<details>", 1)[0]
    rows = [
        line for line in attention.splitlines() if line.startswith("| ") and not line.startswith(("| case", "| ---"))
    ]
    names = [row.split(" | ")[0].removeprefix("| ") for row in rows]
    assert names == ["revenue-october", "reviews-summary", "booking-lookup", "bookings-next-week", "bookings-degraded"]
    assert "AgentError: the agent process exited with code 1" in rows[2]
    assert "⚠️ ABSTAIN" in rows[3]
    assert "(degraded)" in rows[4]
    # In the details section too, the failing cases are listed before the passing ones.
    details = text.split("<details><summary>All cases</summary>", 1)[1]
    assert details.index("revenue-october") < details.index("lists-properties")
    assert text.rstrip().endswith("</details>")


def test_details_show_verdict_tree_rounds_and_follow_ups(report: RunReport) -> None:
    details = to_markdown(report).split("<details>", 1)[1]
    assert "`llm_judge/rubric` ✅ pass 9 on 1..10 (0.89)" in details
    assert "- round 2: *What's the occupancy for the first one?* ✅ pass 1.00: rubric:" in details
    assert "- round 0" not in details  # a single round with the case's own verdict is not repeated
    assert "agent asked: Which property do you mean? → replied: The first one you listed, Beach House." in details
    assert "*llm\\_judge*: no judge model configured" in details


def test_untrusted_text_cannot_inject_html_or_break_tables() -> None:
    assert md(SCRIPT) == "&lt;script&gt;alert(1)&lt;/script&gt;"
    record = CaseRecord(
        "x|y", Judgment.failed(reasoning=f"{SCRIPT} | ![img](http://evil.example/x.png) `code` [link](u)\nnext")
    )
    text = to_markdown(RunReport(suite="s", run_id="r", records=[record]))
    assert "<script>" not in text
    assert "&lt;script&gt;" in text
    assert "\\!\\[img\\](http://evil.example/x.png)" in text
    row = next(line for line in text.splitlines() if line.startswith("| x"))
    assert row.startswith("| x\\|y |")
    assert row.count(" | ") == 4  # five cells: the reasoning's pipe is escaped


def test_all_passed_headline_has_no_attention_section() -> None:
    record = CaseRecord("c", Judgment.passed(reasoning="fine"), cost=0.0, tokens=10)
    text = to_markdown(RunReport(suite="s", run_id="r", records=[record]))
    assert text.splitlines()[0] == "## ✅ jurybox · s: all 1 case(s) passed"
    assert "Cases that need attention" not in text


def test_size_limit_drops_details_not_the_failures(report: RunReport) -> None:
    full = to_markdown(report)
    limited = to_markdown(report, max_bytes=len(full.encode()) - 200)
    assert len(limited.encode()) <= len(full.encode()) - 200
    assert "left out to keep this summary under GitHub's size limit" in limited
    assert "### Cases that need attention" in limited
    assert "| reviews-summary |" in limited


def test_huge_run_stays_under_the_limit_and_keeps_the_headline() -> None:
    records = [CaseRecord(f"case-{i:04d}", Judgment.failed(reasoning="wrong answer " * 20)) for i in range(3000)]
    text = to_markdown(RunReport(suite="s", run_id="r", records=records), max_bytes=50_000)
    assert len(text.encode()) <= 50_000
    assert text.startswith("## ❌ jurybox · s: 3000 of 3000 case(s) did not pass")
    assert "| case-0000 |" in text
    assert "more case(s) that need attention left out" in text
    assert "3000 more case(s) left out" in text  # no room for details at all
