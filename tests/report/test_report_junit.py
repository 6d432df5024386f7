"""JUnit XML: what CI systems read. Parsed back with xml.etree and validated against the Jenkins schema."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
import xmlschema
from report_fixtures import DATA, SCRIPT, SKIP_REASON

from jurybox.core import Judgment
from jurybox.report import RunReport, to_junit
from jurybox.store import CaseRecord

SCHEMA_TEXT = (DATA / "junit-10.xsd").read_text(encoding="utf-8")


def strict_schema() -> xmlschema.XMLSchema:
    """Jenkins xUnit's junit-10.xsd, verbatim."""
    return xmlschema.XMLSchema(SCHEMA_TEXT)


def schema_with_testcase_properties() -> xmlschema.XMLSchema:
    """junit-10.xsd plus the one extension the common JUnit format adds: <properties> in a <testcase>."""
    anchor = '<xs:element ref="skipped"/>'
    assert SCHEMA_TEXT.count(anchor) == 1
    return xmlschema.XMLSchema(SCHEMA_TEXT.replace(anchor, '<xs:element ref="properties"/>\n' + anchor))


def parse(text: str) -> ET.Element:
    return ET.fromstring(text.encode("utf-8"))


def cases_by_name(root: ET.Element) -> dict[str, ET.Element]:
    return {case.attrib["name"]: case for case in root.iter("testcase")}


def props(element: ET.Element) -> dict[str, str]:
    block = element.find("properties")
    assert block is not None
    return {p.attrib["name"]: p.attrib["value"] for p in block.findall("property")}


def test_counts_on_suite_and_root(report: RunReport) -> None:
    root = parse(to_junit(report))
    assert root.tag == "testsuites"
    suite = root.find("testsuite")
    assert suite is not None
    # ABSTAIN counts as a failure (never a pass); ERROR as an error.
    for element in (root, suite):
        assert (element.attrib["tests"], element.attrib["failures"], element.attrib["errors"]) == ("8", "3", "1")
    assert suite.attrib["name"] == "property-agent"
    assert suite.attrib["timestamp"] == "2026-11-21T09:30:00+00:00"
    assert suite.attrib["time"] == "44.500"
    assert len(list(root.iter("testcase"))) == 8


def test_one_testcase_per_case_with_failure_and_error_elements(report: RunReport) -> None:
    cases = cases_by_name(parse(to_junit(report)))
    assert list(cases) == [r.case for r in report.records]
    for name in ("lists-properties", "occupancy-of-first", "mentions-apartment", "bookings-degraded"):
        assert cases[name].find("failure") is None and cases[name].find("error") is None
    failure = cases["revenue-october"].find("failure")
    assert failure is not None and failure.attrib["type"] == "fail"
    assert "contains('$12,400'): none of the texts found" in failure.attrib["message"]
    assert failure.text is not None and "not found in output" in failure.text
    error = cases["booking-lookup"].find("error")
    assert error is not None
    assert error.attrib["type"] == "ConnectionResetError"
    assert error.attrib["message"].startswith("AgentError: the agent process exited with code 1")
    assert error.text is not None and "Traceback" in error.text
    abstain = cases["bookings-next-week"].find("failure")
    assert abstain is not None
    # The reason and the judge's own reply: CI shows the message, rarely the body.
    assert abstain.attrib["message"] == (
        "judge abstained: correctness: no [[rating]] in the judge reply: '$ERROR$' | judge replied: $ERROR$"
    )
    assert abstain.text is not None and "$ERROR$" in abstain.text


def test_judge_verdicts_are_properties(report: RunReport) -> None:
    cases = cases_by_name(parse(to_junit(report)))
    listing = props(cases["lists-properties"])
    assert listing["jurybox.status"] == "pass"
    assert listing["jurybox.decided_by"] == "llm_judge"
    assert listing["judge.llm_judge/rubric.status"] == "pass"
    assert listing["judge.llm_judge/rubric.score"] == "9 on 1..10 (0.89)"
    assert listing["judge.llm_judge/rubric.confidence"] == "0.86"
    assert listing["judge.llm_judge/rubric.reasoning"].endswith("Rating: [[9]]")
    assert listing["jurybox.cost"] == "$0.0004"
    crashed = props(cases["booking-lookup"])
    assert crashed["jurybox.cost"] == "unknown" and crashed["jurybox.tokens"] == "unknown"
    degraded = props(cases["bookings-degraded"])
    assert degraded["jurybox.degraded"].startswith("true")
    assert degraded["judge.llm_judge/correctness.degraded"] == "true"
    rounds = props(cases["occupancy-of-first"])
    assert rounds["judge.round2/llm_judge/rubric.status"] == "pass"
    # A single round whose verdict is the case verdict is not listed twice.
    assert not any(name.startswith("judge.round1") for name in listing)


def test_skipped_tiers_are_properties(report: RunReport) -> None:
    root = parse(to_junit(report))
    cases = cases_by_name(root)
    assert props(cases["mentions-apartment"])["jurybox.skipped_tier.llm_judge"] == SKIP_REASON
    assert props(cases["revenue-october"])["jurybox.skipped_tier.llm_judge"] == "not needed: deterministic decided"
    suite = root.find("testsuite")
    assert suite is not None
    suite_props = props(suite)
    assert suite_props["jurybox.skipped_tier.llm_judge"] == SKIP_REASON
    assert suite_props["jurybox.judge_model"] == "openai:gpt-4o-mini"
    assert suite_props["jurybox.tier.llm_judge.pass_rate"] == "80.0% (4/5)"


def test_follow_ups_and_conversation_in_system_out(report: RunReport) -> None:
    out = cases_by_name(parse(to_junit(report)))["occupancy-of-first"].find("system-out")
    assert out is not None and out.text is not None
    assert "agent asked: Which property do you mean?" in out.text
    assert "follow-up reply: The first one you listed, Beach House." in out.text


def test_control_characters_escaped_and_markup_kept_as_text(report: RunReport) -> None:
    text = to_junit(report)
    assert "\x00" not in text and "\x1b" not in text
    out = cases_by_name(parse(text))["reviews-summary"].find("system-out")
    assert out is not None and out.text is not None
    assert SCRIPT in out.text  # parsed back as text, not as an element
    assert "\\x1b[31mred\\x1b[0m and a NUL \\x00 byte" in out.text


def test_valid_against_junit_schema_with_testcase_properties(report: RunReport) -> None:
    schema_with_testcase_properties().validate(to_junit(report))


def test_strict_mode_is_valid_against_verbatim_jenkins_schema(report: RunReport) -> None:
    text = to_junit(report, testcase_properties=False)
    strict_schema().validate(text)
    case = cases_by_name(parse(text))["lists-properties"]
    assert case.find("properties") is None
    out = case.find("system-out")
    assert out is not None and out.text is not None
    assert "[[PROPERTY|judge.llm_judge/rubric.confidence=0.86]]" in out.text


def test_default_mode_needs_the_testcase_properties_extension(report: RunReport) -> None:
    # Documents the one difference from the strict schema; readers that reject it use testcase_properties=False.
    with pytest.raises(xmlschema.XMLSchemaValidationError, match="properties"):
        strict_schema().validate(to_junit(report))


def test_empty_run_is_valid() -> None:
    text = to_junit(RunReport(suite="empty", run_id="r", records=[]))
    strict_schema().validate(text)
    assert parse(text).attrib["tests"] == "0"


def test_hostile_names_are_escaped() -> None:
    record = CaseRecord('a"<b>&\x07', Judgment.failed(reasoning="</failure><script>x</script>"))
    text = to_junit(RunReport(suite="s<>", run_id="r", records=[record]))
    schema_with_testcase_properties().validate(text)
    case = parse(text).find("testsuite/testcase")
    assert case is not None
    assert case.attrib["name"] == 'a"<b>&\\x07'
    failure = case.find("failure")
    assert failure is not None and failure.attrib["message"] == "</failure><script>x</script>"


@pytest.mark.parametrize(
    ("status", "planned"),
    [("interrupted", 3), ("completed", 3)],  # killed mid-run; finished but a result was never written
)
def test_an_incomplete_run_is_an_error_in_junit_not_a_green_suite(status: str, planned: int) -> None:
    # CI reads only the counts and testcases: finished cases that all passed must not make a run
    # with planned cases missing look green.
    record = CaseRecord("done", Judgment.passed(reasoning="ok"))
    report = RunReport(suite="s", run_id="r", records=[record], status=status, planned=planned)  # type: ignore[arg-type]
    text = to_junit(report)
    strict_schema().validate(to_junit(report, testcase_properties=False))
    root = parse(text)
    for element in (root, root.find("testsuite")):
        assert element is not None
        assert (element.attrib["tests"], element.attrib["errors"]) == ("2", "1")
    cases = cases_by_name(root)
    error = cases["(run incomplete)"].find("error")
    assert error is not None and "2 of 3 planned case(s) have no result" in error.attrib["message"]
