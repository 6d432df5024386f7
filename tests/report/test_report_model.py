"""RunReport: the totals every format shows are derived once, and never invent a number."""

from __future__ import annotations

from datetime import timedelta

import pytest
from report_fixtures import SKIP_REASON, START
from rich.console import Console

from jurybox.core import Judgment, Status
from jurybox.report import RunReport, explain, render_console, tier_verdicts, to_html, to_markdown
from jurybox.report import _format as fmt
from jurybox.store import CaseRecord


def test_counts_per_status_and_pass_rate(report: RunReport) -> None:
    totals = report.totals
    assert totals.cases == 8
    assert dict(totals.by_status) == {Status.PASS: 4, Status.FAIL: 2, Status.ERROR: 1, Status.ABSTAIN: 1}
    assert totals.pass_rate == pytest.approx(0.5)
    assert totals.not_passed == 4
    assert not report.ok


def test_tokens_and_cost_keep_unknown_apart(report: RunReport) -> None:
    totals = report.totals
    assert totals.tokens == 1113 + 369 + 980 + 975 + 2210 + 120
    assert totals.tokens_unknown == 2
    assert totals.cost == pytest.approx(0.000412 + 0.0 + 0.00031 + 0.00030 + 0.00088 + 0.00002)
    assert totals.cost_unknown == 2
    assert fmt.cost(totals) == "≥ $0.0019 (price unknown for 2 cases)"
    assert totals.judge_calls == 5


def test_cost_all_unknown_is_unknown_not_zero() -> None:
    record = CaseRecord("c", Judgment.passed(reasoning="ok"), cost=None, tokens=None)
    totals = RunReport(suite="s", run_id="r", records=[record]).totals
    assert totals.cost is None
    assert fmt.cost(totals) == "unknown (price unknown for 1 case)"
    assert fmt.tokens(totals) == "unknown"


def test_empty_run_has_no_pass_rate() -> None:
    report = RunReport(suite="s", run_id="r", records=[])
    assert report.totals.pass_rate is None
    assert fmt.rate(report.totals.pass_rate) == "n/a"
    assert report.totals.duration is None


def test_duration_is_wall_time_when_known(report: RunReport, records: list[CaseRecord]) -> None:
    assert report.totals.duration == pytest.approx(44.5)
    assert report.totals.case_time == pytest.approx(sum(r.duration for r in records))
    no_clock = RunReport(suite="s", run_id="r", records=records)
    assert no_clock.totals.duration == pytest.approx(no_clock.totals.case_time)


def test_per_tier_pass_rates(report: RunReport) -> None:
    tiers = report.totals.tiers
    assert list(tiers) == ["deterministic", "llm_judge"]
    # 7 single-round cascades + 2 rounds of the multi-round case ran the deterministic tier;
    # it failed for revenue-october and reviews-summary. The crashed case has no tiers.
    assert (tiers["deterministic"].ran, tiers["deterministic"].passed) == (8, 6)
    # llm_judge ran for lists-properties, bookings x2 and both rounds; the abstention is not a pass.
    assert (tiers["llm_judge"].ran, tiers["llm_judge"].passed, tiers["llm_judge"].decided) == (5, 4, 5)
    assert tiers["llm_judge"].rate == pytest.approx(0.8)


def test_tier_of_a_multi_round_case_comes_from_its_rounds(records: list[CaseRecord]) -> None:
    multi = next(r for r in records if r.case == "occupancy-of-first")
    assert multi.judgment.decided_by is None
    assert [(tier, decided) for tier, _, decided in tier_verdicts(multi)] == [
        ("deterministic", False),
        ("llm_judge", True),
        ("deterministic", False),
        ("llm_judge", True),
    ]


def test_degraded_and_skipped_tiers(report: RunReport) -> None:
    totals = report.totals
    assert totals.degraded_judgments == 1
    assert totals.degraded_cases == 1
    assert [c.name for c in report.cases if c.degraded] == ["bookings-degraded"]
    assert list(totals.skipped_tiers) == ["llm_judge"]
    assert totals.skipped_tiers["llm_judge"].cases == 1
    assert totals.skipped_tiers["llm_judge"].reason == SKIP_REASON


def test_case_skips_separate_not_needed_from_left_out(report: RunReport) -> None:
    by_name = {c.name: c for c in report.cases}
    assert dict(by_name["revenue-october"].skipped) == {"llm_judge": "not needed: deterministic decided"}
    assert dict(by_name["mentions-apartment"].skipped) == {"llm_judge": SKIP_REASON}
    assert dict(by_name["lists-properties"].skipped) == {}


def test_reason_comes_from_the_deciding_judges(report: RunReport) -> None:
    by_name = {c.name: c for c in report.cases}
    assert by_name["booking-lookup"].reason.startswith("AgentError: the agent process exited")
    assert by_name["bookings-next-week"].reason == "correctness: no [[rating]] in the judge reply: '$ERROR$'"
    assert "Rating: [[9]]" in by_name["lists-properties"].reason
    assert by_name["occupancy-of-first"].reason == "both rounds passed; context survived the revival"
    assert explain(Judgment.errored("boom")) == "boom"


def test_failing_first_order(report: RunReport) -> None:
    order = [c.name for c in report.failing_first()]
    assert order == [
        "revenue-october",
        "reviews-summary",
        "booking-lookup",
        "bookings-next-week",
        "bookings-degraded",
        "lists-properties",
        "occupancy-of-first",
        "mentions-apartment",
    ]


def test_notices_do_not_repeat_a_note(report: RunReport, records: list[CaseRecord]) -> None:
    assert report.notices() == list(report.notes)
    bare = RunReport(suite="s", run_id="r", records=records, status="interrupted", planned=10)
    notices = bare.notices()
    assert (
        notices[0]
        == "run interrupted: this report covers the 8 case(s) that finished; 2 of 10 planned case(s) have no result"
    )
    assert notices[1] == f"llm_judge tier skipped for 1 case(s): {SKIP_REASON}"
    assert not bare.ok


def test_run_level_skipped_tier_without_case_metadata() -> None:
    record = CaseRecord("c", Judgment.passed(reasoning="ok"))
    report = RunReport(suite="s", run_id="r", records=[record], skipped_tiers={"llm_judge": "no model"})
    assert report.totals.skipped_tiers["llm_judge"].cases == 0
    assert report.notices() == ["llm_judge tier skipped: no model"]


def test_bad_input_is_refused(records: list[CaseRecord]) -> None:
    with pytest.raises(ValueError, match="more than one record for case"):
        RunReport(suite="s", run_id="r", records=[records[0], records[0]])
    with pytest.raises(ValueError, match="status must be one of completed, interrupted, failed"):
        RunReport(suite="s", run_id="r", records=records, status="done")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"records\[0\] is a dict"):
        RunReport(suite="s", run_id="r", records=[{"case": "x"}])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="planned is 3 but there are 8 records"):
        RunReport(suite="s", run_id="r", records=records, planned=3)


def test_all_pass_is_ok() -> None:
    record = CaseRecord("c", Judgment.passed(reasoning="ok"), cost=0.0, tokens=0)
    report = RunReport(
        suite="s", run_id="r", records=[record], started_at=START, finished_at=START + timedelta(seconds=1)
    )
    assert report.ok
    assert fmt.cost(report.totals) == "$0.00"


def test_explain_a_jury_with_its_members_words() -> None:
    members = {
        "contains": Judgment.passed(reasoning="found 'Beach House'", judge="contains"),
        "matches": Judgment.passed(reasoning="/\\$320/ matched", judge="matches"),
    }
    jury = Judgment.passed(reasoning="all 2 judge(s) passed", judge="jury", children=members)
    assert explain(jury) == "contains: found 'Beach House'; matches: /\\$320/ matched"
    split = Judgment.failed(
        reasoning="1 of 2 failed",
        children={"a": Judgment.passed(reasoning="ok"), "b": Judgment.failed(reasoning="missing $12,400")},
    )
    assert explain(split) == "b: missing $12,400"


def test_an_empty_run_is_not_ok() -> None:
    empty = RunReport(suite="s", run_id="r", records=[])
    assert not empty.ok
    assert to_markdown(empty).splitlines()[0] == "## ❌ jurybox · s: no case ran"
    assert "No case ran" in to_html(empty)
    console = Console(record=True, width=120)
    render_console(empty, console)
    assert "NO CASES RAN 0/0 passed (n/a)" in console.export_text()


def test_a_completed_run_with_planned_cases_missing_is_not_ok() -> None:
    # A run the store marks completed whose result for one case was never written (a failed store
    # write) must not read as a green run: the missing case was never shown to have passed.
    record = CaseRecord("c", Judgment.passed(reasoning="ok"))
    report = RunReport(suite="s", run_id="r", records=[record], status="completed", planned=2)
    assert report.missing == 1
    assert not report.ok
    assert any("1 of 2 planned case(s) have no result" in notice for notice in report.notices())
