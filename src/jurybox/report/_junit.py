"""The JUnit XML report: one ``<testcase>`` per case, judge verdicts as properties.

Follows the common JUnit XML format that CI systems read (Jenkins, GitLab,
GitHub test-report actions, Azure DevOps): ``<testsuites>`` holding one
``<testsuite>``. FAIL becomes ``<failure>``, ERROR ``<error>``, ABSTAIN a
``<failure message="judge abstained">`` (an undecided case is never a pass), and a
run with planned cases missing (interrupted, or a result never written) one
extra ``(run incomplete)`` test case with an ``<error>``.
Judge verdicts, skipped tiers, tokens and cost are ``<property>`` elements of
the test case, the convention pytest and most CI readers use. Readers that
only accept suite-level properties (the strict Jenkins xUnit schema) get them
as ``[[PROPERTY|name=value]]`` lines in ``<system-out>`` with
``testcase_properties=False``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator

from jurybox.core import REPLY_SHOWN, Judgment, Status, undecided_reply
from jurybox.report import _format as fmt
from jurybox.report._case import CaseSummary, own_verdict
from jurybox.report._formats import ReportFormat, register_report_format
from jurybox.report._model import RunReport

INCOMPLETE_CASE = "(run incomplete)"
"""The testcase an interrupted run, or one with planned cases missing, gets as an ``<error>``."""


def xml_text(text: str) -> str:
    """``text`` without characters XML 1.0 forbids (not even as references); they become visible escapes."""
    return fmt.visible(text)


def to_junit(report: RunReport, *, testcase_properties: bool = True) -> str:
    """The run as JUnit XML.

    Args:
        report: The run.
        testcase_properties: Put each case's verdict properties in a ``<properties>``
            element of its ``<testcase>`` (default). False writes them as
            ``[[PROPERTY|name=value]]`` lines in the test case's ``<system-out>``
            instead, for readers that validate against the strict Jenkins xUnit schema.
    """
    return "".join(iter_junit(report, testcase_properties=testcase_properties))


def iter_junit(report: RunReport, *, testcase_properties: bool = True) -> Iterator[str]:
    """``to_junit`` in pieces, one per test case, so a big run is written without holding its whole tree."""
    totals = report.totals
    failures = totals.failed + totals.abstained
    incomplete = _incompleteness(report)
    # CI reads only the counts and testcases: planned cases with no result count as one error.
    tests = totals.cases + (incomplete is not None)
    errors = totals.errored + (incomplete is not None)
    time = _seconds(totals.duration or 0.0)
    root = ET.Element(
        "testsuites",
        _attrs(name=f"jurybox: {report.suite}", tests=tests, failures=failures, errors=errors, time=time),
    )
    suite = ET.SubElement(
        root,
        "testsuite",
        _attrs(
            name=report.suite,
            tests=tests,
            failures=failures,
            errors=errors,
            skipped=0,
            time=time,
            timestamp=report.started_at.isoformat(timespec="seconds") if report.started_at else None,
            id=report.run_id,
        ),
    )
    _properties(suite, _suite_properties(report))
    # The test cases are serialized one by one where this marker lands in the indented skeleton.
    if report.cases:
        suite.append(ET.Comment(_CASES_MARKER))
    if incomplete is not None:
        element = ET.SubElement(suite, "testcase", _attrs(name=INCOMPLETE_CASE, classname=report.suite, time="0.000"))
        _result(element, "error", incomplete, "incomplete", incomplete)
    notices = report.notices()
    if notices:
        ET.SubElement(suite, "system-err").text = xml_text("\n".join(notices))
    ET.indent(root)
    skeleton = '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
    before, marker, after = skeleton.partition(f"<!--{_CASES_MARKER}-->")
    yield before
    if not marker:
        return
    first = True
    for case in report.cases:
        holder = ET.Element("testsuite")
        _testcase(holder, report.suite, case, testcase_properties)
        (element,) = holder
        # Level 2: inside <testsuites> and <testsuite>, as ET.indent would place it in the whole tree.
        ET.indent(element, level=2)
        element.tail = None
        yield ("" if first else _CASE_INDENT) + ET.tostring(element, encoding="unicode")
        first = False
    yield after


_CASES_MARKER = "jurybox-testcases"
_CASE_INDENT = "\n    "


def _incompleteness(report: RunReport) -> str | None:
    """Why the run is incomplete (interrupted, or planned cases without a record), or None."""
    if report.status == "completed" and not report.missing:
        return None
    return report.notices()[0]  # the run-status notice always comes first


def case_properties(case: CaseSummary) -> list[tuple[str, str]]:
    """(name, value) pairs describing a case's verdicts, in a stable order.

    ``jurybox.*`` names describe the case; ``judge.<path>.<field>`` one verdict in its
    judgment tree (path like ``deterministic/contains``; rounds under ``round<N>/``),
    with fields judge, status, score, confidence, reasoning and degraded.
    """
    record = case.record
    props = [
        ("jurybox.status", record.status.value),
        ("jurybox.score", fmt.score(case.score)),
        ("jurybox.score_detail", fmt.case_score(record.judgment)),
    ]
    if record.pass_mark is not None:
        props.append(("jurybox.pass_mark", f"{record.pass_mark:.2f}"))
    if case.tier:
        props.append(("jurybox.decided_by", case.tier))
    if case.degraded:
        props.append(("jurybox.degraded", f"true ({case.degraded_judgments} degraded verdict(s))"))
    props.extend((f"jurybox.skipped_tier.{tier}", reason) for tier, reason in case.skipped.items())
    props.append(("jurybox.judge_calls", str(record.judge_calls)))
    props.append(("jurybox.tokens", "unknown" if record.tokens is None else str(record.tokens)))
    props.append(("jurybox.cost", fmt.case_cost(record.cost)))
    if record.tags:
        props.append(("jurybox.tags", ", ".join(record.tags)))
    for path, judgment in _verdicts(case):
        props.extend(_verdict_properties(path, judgment))
    return props


def _verdicts(case: CaseSummary) -> Iterator[tuple[str, Judgment]]:
    for path, judgment in case.record.judgment.walk():
        yield path or "case", judgment
    for round_ in case.record.rounds:
        if own_verdict(case.record, round_):
            yield from round_.judgment.walk(f"round{round_.index + 1}")


def _verdict_properties(path: str, judgment: Judgment) -> Iterator[tuple[str, str]]:
    prefix = f"judge.{path}"
    if judgment.judge and judgment.judge != path.rsplit("/", 1)[-1]:
        yield f"{prefix}.judge", judgment.judge
    yield f"{prefix}.status", judgment.status.value
    if judgment.score is not None:
        yield f"{prefix}.score", fmt.judgment_score(judgment)
    if judgment.confidence is not None:
        yield f"{prefix}.confidence", f"{judgment.confidence:.2f}"
    if judgment.reasoning:
        yield f"{prefix}.reasoning", judgment.reasoning
    if judgment.degraded:
        yield f"{prefix}.degraded", "true"


def _suite_properties(report: RunReport) -> list[tuple[str, str]]:
    totals = report.totals
    props = [
        ("jurybox.run_id", report.run_id),
        ("jurybox.run_status", report.status),
        ("jurybox.judge_model", report.judge_model or "none configured"),
        ("jurybox.pass_rate", fmt.rate(totals.pass_rate)),
        ("jurybox.abstained", str(totals.abstained)),
        ("jurybox.degraded_judgments", str(totals.degraded_judgments)),
        ("jurybox.judge_calls", str(totals.judge_calls)),
        ("jurybox.judge_cache_hits", "unknown" if totals.judge_cache_hits is None else str(totals.judge_cache_hits)),
        ("jurybox.tokens", fmt.tokens(totals)),
        ("jurybox.cost", fmt.cost(totals)),
    ]
    if report.started_at:
        props.append(("jurybox.started_at", report.started_at.isoformat()))
    if report.finished_at:
        props.append(("jurybox.finished_at", report.finished_at.isoformat()))
    if report.planned is not None:
        props.append(("jurybox.planned", str(report.planned)))
    props.extend(
        (f"jurybox.tier.{t.tier}.pass_rate", f"{fmt.rate(t.rate)} ({t.passed}/{t.ran})") for t in totals.tiers.values()
    )
    props.extend((f"jurybox.skipped_tier.{s.tier}", s.reason) for s in totals.skipped_tiers.values())
    props.extend((f"jurybox.note.{i}", note) for i, note in enumerate(report.notes, start=1))
    return props


def _testcase(parent: ET.Element, classname: str, case: CaseSummary, testcase_properties: bool) -> None:
    record = case.record
    element = ET.SubElement(
        parent, "testcase", _attrs(name=record.case, classname=classname, time=_seconds(record.duration))
    )
    props = case_properties(case)
    if testcase_properties:
        _properties(element, props)
    detail = _failure_text(case)
    if record.status is Status.FAIL:
        _result(element, "failure", fmt.shorten(case.reason, 500), "fail", detail)
    elif record.status is Status.ABSTAIN:
        # The reason (and what the judge replied) in the message: CI shows the message, rarely the body.
        replied = undecided_reply(record.judgment)
        message = f"judge abstained: {fmt.shorten(case.reason, 500)}"
        if replied is not None:
            message += f" | judge replied: {fmt.shorten(replied, REPLY_SHOWN)}"
        _result(element, "failure", message, "abstain", detail)
    elif record.status is Status.ERROR:
        error = record.judgment.error
        _result(element, "error", fmt.shorten(case.reason, 500), error.type if error is not None else "error", detail)
    out = _system_out(case)
    if not testcase_properties:
        out = "\n".join([*(f"[[PROPERTY|{name}={_one_line(value)}]]" for name, value in props), "", out])
    if out.strip():
        ET.SubElement(element, "system-out").text = xml_text(out)


def _result(parent: ET.Element, tag: str, message: str, kind: str, text: str) -> None:
    ET.SubElement(parent, tag, _attrs(message=message, type=kind)).text = xml_text(text)


def _failure_text(case: CaseSummary) -> str:
    """The full why of a non-pass: reasoning, failing checks, each verdict, the traceback."""
    lines = [case.reason]
    replied = undecided_reply(case.record.judgment)
    if replied is not None:
        lines.append(f"judge replied: {replied}")
    for path, judgment in _verdicts(case):
        if judgment.status is Status.PASS and not judgment.degraded:
            continue
        flags = " (degraded)" if judgment.degraded else ""
        lines.append(
            f"- {path}: {judgment.status.value.upper()}{flags} "
            f"score {fmt.judgment_score(judgment)}: {judgment.reasoning}"
        )
        lines.extend(f"    check {c.name}: failed: {c.message}" for c in judgment.checks if not c.passed)
    error = case.record.judgment.error
    if error is not None and error.traceback:
        lines.extend(["", error.traceback])
    return "\n".join(lines)


def _system_out(case: CaseSummary) -> str:
    """What the agent said: the conversation of each round with its follow-ups, or the single exchange."""
    record = case.record
    parts: list[str] = []
    for round_ in record.rounds:
        parts.append(f"--- round {round_.index + 1}: {round_.judgment.status.value.upper()}")
        parts.append(f"user: {round_.prompt}")
        for question, reply in round_.follow_ups:
            parts.append(f"agent asked: {question}")
            parts.append(f"follow-up reply: {reply}")
        parts.append(f"agent: {round_.context.output}")
        if round_.context.tool_calls:
            parts.append("tools: " + ", ".join(round_.context.tool_names))
    if not record.rounds and record.context is not None:
        parts.append(f"user: {record.context.input}")
        parts.append(f"agent: {record.context.output}")
        if record.context.tool_calls:
            parts.append("tools: " + ", ".join(record.context.tool_names))
    return "\n".join(parts)


def _properties(parent: ET.Element, props: list[tuple[str, str]]) -> None:
    if not props:
        return
    element = ET.SubElement(parent, "properties")
    for name, value in props:
        ET.SubElement(element, "property", {"name": xml_text(name), "value": xml_text(value)})


def _attrs(**values: object) -> dict[str, str]:
    return {key: xml_text(str(value)) for key, value in values.items() if value is not None}


def _seconds(value: float) -> str:
    return f"{value:.3f}"


def _one_line(text: str) -> str:
    return " ".join(text.split())


register_report_format("junit", ReportFormat(".junit.xml", iter_junit), summary="JUnit XML for CI test tabs")
