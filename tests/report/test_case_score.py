"""A case's score is its deciding judge's, shown with that judge's pass mark; undecided replies are shown.

Also the one wording of a cost (unknown is never zero) and of judge calls with their cache hits,
in every format.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from jurybox.core import (
    PASS_MARK_KEY,
    CaseRecord,
    Judgment,
    Status,
    deciding_judgment,
    pass_mark,
    undecided_reply,
)
from jurybox.report import RunReport, cost_text, judge_calls_text, render_console, to_junit, to_markdown
from jurybox.report import _format as fmt


def _judge(name: str, status: Status, score: float, mark: float | None = None) -> Judgment:
    metadata = {PASS_MARK_KEY: mark} if mark is not None else {}
    return Judgment(status, score=score, judge=name, reasoning=f"{name} said so", metadata=metadata)


def _cascade(status: Status, tier: str, members: dict[str, Judgment]) -> Judgment:
    """A case verdict as the runner builds it: a cascade whose deciding tier holds the judges."""
    tier_verdict = Judgment(status, score=0.5, judge=tier, children=members, metadata={"voting": "Consensus"})
    passed_tier = Judgment(
        Status.PASS, score=1.0, judge="deterministic", children={"contains": _judge("contains", Status.PASS, 1.0)}
    )
    children = {"deterministic": passed_tier, tier: tier_verdict} if tier != "deterministic" else {tier: tier_verdict}
    return Judgment(status, score=0.0, judge="case", children=children, decided_by=tier)


def test_the_case_score_is_the_deciding_judge_s_with_its_pass_mark() -> None:
    verdict = _cascade(
        Status.FAIL,
        "llm_judge",
        {
            "correctness": _judge("correctness", Status.FAIL, 0.1, 0.7),
            "relevance": _judge("relevance", Status.PASS, 0.9, 0.5),
        },
    )
    record = CaseRecord("c", verdict)
    assert deciding_judgment(verdict).judge == "correctness"
    assert record.score == 0.1  # not the cascade's 0.0 nor the tier's 0.5
    assert record.pass_mark == 0.7
    assert fmt.case_score(verdict) == "correctness 0.10 < 0.70"


def test_a_pass_shows_the_judge_that_passed_by_the_least() -> None:
    verdict = _cascade(
        Status.PASS,
        "llm_judge",
        {"a": _judge("a", Status.PASS, 0.9, 0.7), "b": _judge("b", Status.PASS, 0.75, 0.7)},
    )
    assert fmt.case_score(verdict) == "b 0.75 ≥ 0.70"


def test_a_weighing_jury_decides_as_a_whole() -> None:
    jury = Judgment(
        Status.FAIL,
        score=0.4,
        judge="jury",
        children={"a": _judge("a", Status.FAIL, 0.1), "b": _judge("b", Status.PASS, 0.7)},
        metadata={"voting": "Average", PASS_MARK_KEY: 0.5},
    )
    assert deciding_judgment(jury) is jury
    assert fmt.case_score(jury) == "score 0.40 < 0.50"


def test_undecided_verdicts_have_no_score_and_show_the_judge_s_reply() -> None:
    reply = "I think it is fine?" + " words" * 100
    abstained = Judgment(Status.ABSTAIN, judge="correctness", reasoning="no readable verdict", metadata={"raw": reply})
    tier = Judgment(Status.ABSTAIN, judge="llm_judge", children={"correctness": abstained})
    verdict = Judgment(Status.ABSTAIN, judge="case", children={"llm_judge": tier}, decided_by="llm_judge")
    assert fmt.case_score(verdict) == "score —"
    shown = undecided_reply(verdict)
    assert shown is not None and shown.startswith("I think it is fine?") and len(shown) == 300
    assert undecided_reply(_judge("x", Status.FAIL, 0.0)) is None  # a decided verdict quotes nothing
    record = CaseRecord("undecided", verdict)
    report = RunReport(suite="s", run_id="r", records=[record])
    console = Console(record=True, width=120)
    render_console(report, console)
    assert "judge replied: I think it is fine?" in console.export_text()
    failure = ET.fromstring(to_junit(report)).find(".//testcase/failure")
    assert failure is not None and failure.get("type") == "abstain"
    message = failure.get("message") or ""
    assert message.startswith("judge abstained: ") and "no readable verdict" in message
    assert "judge replied: I think it is fine?" in message


HUNDREDTHS = st.integers(0, 100).map(lambda n: n / 100)


@given(st.lists(HUNDREDTHS, min_size=1, max_size=6), HUNDREDTHS)
def test_the_decider_of_a_failed_tier_is_a_failing_member_with_the_lowest_score(
    scores: list[float], mark: float
) -> None:
    members = {
        f"j{i}": _judge(f"j{i}", Status.PASS if score >= mark else Status.FAIL, score, mark)
        for i, score in enumerate(scores)
    }
    failing = [m for m in members.values() if m.status is Status.FAIL]
    status = Status.FAIL if failing else Status.PASS
    verdict = _cascade(status, "llm_judge", members)
    decider = deciding_judgment(verdict)
    assert decider.status is status
    agreeing = failing or list(members.values())
    assert decider.value == min(m.value or 0.0 for m in agreeing)
    assert pass_mark(decider) == mark
    shown = fmt.case_score(verdict)
    assert (" < " in shown) == (status is Status.FAIL)


def test_cost_wording_never_shows_unknown_as_zero() -> None:
    assert cost_text(0.0, 0) == "$0.00"
    assert cost_text(0.0123, 0) == "$0.0123"
    assert cost_text(0.0123, 2) == "≥ $0.0123 (price unknown for 2 calls)"
    assert cost_text(0.0, 45) == "unknown (price unknown for 45 calls)"
    assert cost_text(0.0, 1, "case") == "unknown (price unknown for 1 case)"


def test_judge_calls_say_how_many_came_from_the_cache_in_every_format() -> None:
    assert judge_calls_text(45, 12) == "45 (12 from cache)"
    assert judge_calls_text(0, 0) == "0"
    assert judge_calls_text(3, None) == "3"  # a run stored before cache hits were counted
    calls = {"judge": {"calls": 2, "attempts": 1, "retries": 0, "failures": 0, "cache_hits": 1}}
    records = [
        CaseRecord(f"c{i}", Judgment.passed(1.0, "ok"), judge_calls=2, cost=0.0, tokens=10, metadata={"calls": calls})
        for i in range(3)
    ]
    report = RunReport(suite="s", run_id="r", records=records)
    assert report.totals.judge_cache_hits == 3
    console = Console(record=True, width=200)
    render_console(report, console)
    assert "judge calls 6 (3 from cache)" in console.export_text()
    assert "6 (3 from cache)" in to_markdown(report)
    properties = {p.get("name"): p.get("value") for p in ET.fromstring(to_junit(report)).iter("property")}
    assert properties["jurybox.judge_cache_hits"] == "3"
