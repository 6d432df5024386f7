"""The terminal summary sections: soft warnings, degraded verdicts and trials, read back from the tests' reports.

They are read from ``report.user_properties`` rather than kept in memory, so
the sections are complete under pytest-xdist too (reports travel from the
workers, properties included).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from jurybox.testing import TRIALS_PROPERTY, VERDICT_PROPERTY, WARNING_PROPERTY, Verdict

#: Reasoning is cut to this many characters in the summary (the JUnit property keeps more).
SUMMARY_REASONING = 200


def _call_reports(terminalreporter: Any) -> Iterator[Any]:
    seen: set[int] = set()
    for reports in terminalreporter.stats.values():
        for report in reports:
            if getattr(report, "when", None) == "call" and id(report) not in seen:
                seen.add(id(report))
                yield report


def collect(terminalreporter: Any, name: str) -> list[tuple[str, str]]:
    """``(test id, property value)`` for every property ``name`` of every test, in report order."""
    found = []
    for report in _call_reports(terminalreporter):
        for key, value in getattr(report, "user_properties", ()):
            if key == name:
                found.append((report.nodeid, str(value)))
    return found


def collect_outcomes(terminalreporter: Any, name: str) -> list[tuple[str, str, bool]]:
    """``(test id, property value, the test passed)`` for every property ``name``, in report order."""
    found = []
    for report in _call_reports(terminalreporter):
        for key, value in getattr(report, "user_properties", ()):
            if key == name:
                found.append((report.nodeid, str(value), bool(getattr(report, "passed", False))))
    return found


def _short(text: str, limit: int = SUMMARY_REASONING) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def write_summary(terminalreporter: Any) -> None:
    warnings = collect(terminalreporter, WARNING_PROPERTY)
    if warnings:
        terminalreporter.write_sep("=", f"jurybox soft warnings ({len(warnings)})", yellow=True)
        for nodeid, payload in warnings:
            verdict = Verdict.from_json(payload)
            confidence = "n/a" if verdict.confidence is None else f"{verdict.confidence:.2f}"
            model = f" model={verdict.model}" if verdict.model else ""
            terminalreporter.write_line(
                f"{nodeid}: {verdict.step} judge={verdict.judge}{model} verdict={verdict.outcome} "
                f"confidence={confidence}"
            )
            if verdict.reasoning:
                terminalreporter.write_line(f"    {_short(verdict.reasoning)}")
    # A verdict from a fallback policy (neutral score) may pass, but never unnoticed.
    degraded = [
        (nodeid, verdict)
        for nodeid, payload in collect(terminalreporter, VERDICT_PROPERTY)
        if (verdict := Verdict.from_json(payload)).degraded
    ]
    if degraded:
        terminalreporter.write_sep("=", f"jurybox degraded verdicts ({len(degraded)})", yellow=True)
        for nodeid, verdict in degraded:
            terminalreporter.write_line(
                f"{nodeid}: {verdict.step} judge={verdict.judge} verdict={verdict.outcome} (degraded)"
            )
            if verdict.reasoning:
                terminalreporter.write_line(f"    {_short(verdict.reasoning)}")
    trials = collect_outcomes(terminalreporter, TRIALS_PROPERTY)
    if trials:
        terminalreporter.write_sep("=", f"jurybox trials ({len(trials)})")
        for nodeid, payload, test_passed in trials:
            terminalreporter.write_line(f"{nodeid}: {trials_line(json.loads(payload), test_passed=test_passed)}")


def trials_line(data: dict[str, Any], *, test_passed: bool) -> str:
    """One trials result: ``PASS flaky: 7/8 passed …`` or ``FAIL flaky: 2/4 passed …``, with rate and interval.

    A FAIL decision inside a test that passed (the test caught the trials' failure, as a
    test of the trials feature does) is not a failure of the run, and does not read as one.
    """
    low, high = data["interval"]
    early = " (stopped early)" if data["trials"] < data["max_trials"] else ""
    handled = data["decision"] == "fail" and test_passed
    return (
        ("" if handled else f"{data['decision'].upper()} ")
        + f"{data['label']}: {data['passes']}/{data['trials']} passed "
        f"of max {data['max_trials']}{early}; rate {data['rate']:.0%}, "
        f"{data['confidence']:.0%} Wilson [{low:.2f}, {high:.2f}], required >= {data['min_pass_rate']:.0%}"
        + (" (not met: the test handled it and passed)" if handled else "")
    )
