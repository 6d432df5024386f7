"""JSON report: full fidelity, a versioned layout, and a reader that gives back the same run."""

from __future__ import annotations

import json

import pytest
from report_fixtures import SCRIPT, SKIP_REASON

from jurybox.core import Judgment
from jurybox.report import SCHEMA_VERSION, RunReport, from_json, to_json
from jurybox.store import CaseRecord


def test_layout_and_schema_version(report: RunReport) -> None:
    data = json.loads(to_json(report))
    assert data["schema_version"] == SCHEMA_VERSION == 1
    assert data["generator"].startswith("jurybox ")
    assert (data["suite"], data["run_id"], data["status"], data["judge_model"]) == (
        "property-agent",
        "run-7f3a",
        "completed",
        "openai:gpt-4o-mini",
    )
    assert data["started_at"] == "2026-11-21T09:30:00+00:00"
    totals = data["totals"]
    assert totals["by_status"] == {"pass": 4, "fail": 2, "error": 1, "abstain": 1}
    assert totals["cost_unknown"] == 2 and totals["tokens_unknown"] == 2
    assert totals["tiers"]["llm_judge"] == {
        "ran": 5,
        "passed": 4,
        "decided": 5,
        "rate": 0.8,
        "target": 0.7,  # seed 003's target for the llm_judge tier
        "target_met": True,
    }
    assert totals["skipped_tiers"]["llm_judge"]["cases"] == 1
    assert [c["case"] for c in data["cases"]] == [r.case for r in report.records]


def test_unknown_numbers_are_null_never_zero(report: RunReport) -> None:
    cases = {c["case"]: c for c in json.loads(to_json(report))["cases"]}
    crashed = cases["booking-lookup"]
    assert crashed["cost"] is None and crashed["tokens"] is None and crashed["score"] is None
    assert crashed["error"].startswith("AgentError")
    assert crashed["judgment"]["error"]["type"] == "ConnectionResetError"
    assert "Traceback" in crashed["judgment"]["error"]["traceback"]
    assert cases["revenue-october"]["cost"] == 0.0


def test_judgment_trees_checks_and_rounds_are_complete(report: RunReport) -> None:
    cases = {c["case"]: c for c in json.loads(to_json(report))["cases"]}
    tree = cases["lists-properties"]["judgment"]
    assert tree["decided_by"] == "llm_judge"
    rubric = tree["children"]["llm_judge"]["children"]["rubric"]
    assert rubric["score"] == {"kind": "numeric", "value": 9.0, "min": 1.0, "max": 10.0}
    assert rubric["confidence"] == 0.86
    assert rubric["metadata"]["raw_output"].endswith("Rating: [[9]]")
    checks = tree["children"]["deterministic"]["children"]["tool_calls[subset](get_listings)"]["checks"]
    assert checks and all("passed" in c for c in checks)
    multi = cases["occupancy-of-first"]
    assert [r["index"] for r in multi["rounds"]] == [0, 1]  # as stored; reports show round 1 and 2
    assert multi["rounds"][1]["follow_ups"] == [
        {"question": "Which property do you mean?", "reply": "The first one you listed, Beach House."}
    ]
    assert multi["rounds"][1]["context"]["tool_calls"][0]["result"] == {"occupancy": 0.82}
    assert cases["bookings-degraded"]["degraded"] is True
    assert cases["mentions-apartment"]["skipped"] == {"llm_judge": SKIP_REASON}
    assert SCRIPT in cases["reviews-summary"]["context"]["output"]


def test_round_trip_gives_back_the_same_run(report: RunReport) -> None:
    text = to_json(report)
    again = from_json(text)
    assert to_json(again) == text
    assert again.records == report.records
    assert again.totals == report.totals
    assert (again.started_at, again.finished_at, again.planned, again.notes) == (
        report.started_at,
        report.finished_at,
        report.planned,
        report.notes,
    )


def test_envelope_is_indented_and_each_case_is_one_compact_line(report: RunReport) -> None:
    text = to_json(report)
    data = json.loads(text)
    lines = text.split("\n")  # not splitlines: a case may hold U+2028, which JSON leaves as it is
    assert lines[:2] == ["{", '  "schema_version": 1,']
    assert '    "by_status": {' in lines  # the totals stay pretty-printed
    first = lines.index('  "cases": [') + 1
    case_lines = lines[first : first + len(report.records)]
    assert lines[first + len(report.records) :] == ["  ]", "}"]
    assert all(line.startswith("    {") for line in case_lines)
    assert [line.strip().removesuffix(",") for line in case_lines] == [
        json.dumps(case, ensure_ascii=False) for case in data["cases"]
    ]
    # Without indent the document is exactly json.dumps of the same data, one line.
    assert to_json(report, indent=None) == json.dumps(data, ensure_ascii=False)
    wide = to_json(report, indent=4).split("\n")
    assert json.loads("\n".join(wide)) == data
    assert wide[wide.index('    "cases": [') + 1].startswith('        {"case": ')


def test_values_json_cannot_hold_are_kept_as_text() -> None:
    record = CaseRecord(
        "odd",
        Judgment.passed(reasoning="ok", metadata={"latency": float("nan"), "tags": {"b", "a"}, "obj": object}),
    )
    data = json.loads(to_json(RunReport(suite="s", run_id="r", records=[record])))
    metadata = data["cases"][0]["judgment"]["metadata"]
    assert metadata["latency"] == "nan"
    assert metadata["tags"] == ["a", "b"]
    assert metadata["obj"] == "<class 'object'>"


def test_reader_refuses_a_newer_schema(report: RunReport) -> None:
    data = json.loads(to_json(report))
    data["schema_version"] = SCHEMA_VERSION + 1
    with pytest.raises(ValueError, match="schema_version 2 is newer than this jurybox reads"):
        from_json(json.dumps(data), source="run.json")


def test_reader_names_the_bad_field(report: RunReport) -> None:
    data = json.loads(to_json(report))
    data["cases"][2]["judgment"]["status"] = "passed"
    with pytest.raises(ValueError, match=r"run\.json: cases\[2\]\.judgment\.status: 'passed' is not one of"):
        from_json(json.dumps(data), source="run.json")
    data = json.loads(to_json(report))
    data["cases"][5]["rounds"][1]["follow_ups"][0]["reply"] = 7
    with pytest.raises(ValueError, match=r"cases\[5\]\.rounds\[1\]\.follow_ups\[0\]\.reply: expected a string"):
        from_json(json.dumps(data), source="run.json")
    with pytest.raises(ValueError, match=r"run\.json:1: not valid JSON"):
        from_json("{nope", source="run.json")
    with pytest.raises(ValueError, match="not a jurybox report"):
        from_json("{}", source="run.json")


def test_a_report_without_a_run_status_is_refused_not_read_as_completed(report: RunReport) -> None:
    # An interrupted run's report that lost its status must not come back as a completed (green) run.
    data = json.loads(to_json(report))
    del data["status"]
    with pytest.raises(ValueError, match=r"run\.json: status: expected a string"):
        from_json(json.dumps(data), source="run.json")
