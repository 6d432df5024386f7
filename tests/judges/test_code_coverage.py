"""code_coverage reads real coverage.py JSON and Cobertura XML reports, and refuses hostile ones.

The reports are made here by coverage.py itself (a dev dependency) from a small
module run with branch measurement, so the judge's figures are checked against
the tool's own totals, not against numbers written by hand.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from jurybox import Context, Status, evaluate
from jurybox.judges import code_coverage, read_coverage
from jurybox.suites import load_suite

_MODULE = """\
def grade(score):
    if score >= 90:
        return "A"
    if score >= 50:
        return "pass"
    return "fail"


def unused(x):
    if x:
        return 1
    return 2


print(grade(95), grade(60))
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("covered")
    (folder / "pkg").mkdir()
    (folder / "pkg" / "grades.py").write_text(_MODULE)
    (folder / "pkg" / "__init__.py").write_text("")
    run = [sys.executable, "-m", "coverage"]
    subprocess.run([*run, "run", "--branch", "pkg/grades.py"], cwd=folder, check=True, capture_output=True)
    subprocess.run([*run, "json", "-o", "coverage.json"], cwd=folder, check=True, capture_output=True)
    subprocess.run([*run, "xml", "-o", "coverage.xml"], cwd=folder, check=True, capture_output=True)
    return folder


def test_both_formats_read_the_same_counts_as_coverage_py_reports(project: Path) -> None:
    expected = json.loads((project / "coverage.json").read_text())["totals"]
    from_json = read_coverage(project / "coverage.json")
    from_xml = read_coverage(project / "coverage.xml")
    assert from_json.totals.lines == expected["num_statements"]
    assert from_json.totals.lines_covered == expected["covered_lines"]
    assert from_json.totals.branches == expected["num_branches"] > 0
    assert from_json.totals.branches_covered == expected["covered_branches"]
    # Cobertura counts the same lines and branches (the statements coverage.py measured).
    assert (from_xml.totals.lines, from_xml.totals.lines_covered) == (
        from_json.totals.lines,
        from_json.totals.lines_covered,
    )
    assert (from_xml.totals.branches, from_xml.totals.branches_covered) == (
        from_json.totals.branches,
        from_json.totals.branches_covered,
    )
    assert [f.path for f in from_xml.files] == ["pkg/grades.py"]
    assert list(json.loads((project / "coverage.json").read_text())["files"]) == ["pkg/grades.py"]


@pytest.mark.parametrize("report", ["coverage.json", "coverage.xml"])
def test_minimums_pass_and_fail_around_the_real_figure(project: Path, report: str) -> None:
    line = read_coverage(project / report).totals.line_percent
    ctx = Context(workspace=project)
    passing = evaluate(code_coverage(report, min_line=line - 1), ctx)
    assert passing.status is Status.PASS, passing.reasoning
    assert passing.metadata["line_percent"] == pytest.approx(line, abs=0.01)
    failing = evaluate(code_coverage(report, min_line=line + 1), ctx)
    assert failing.status is Status.FAIL
    assert "coverage too low: lines:" in failing.reasoning and f"{line:.1f}%" in failing.reasoning
    branchy = evaluate(code_coverage(report, min_branch=100), ctx)
    assert branchy.status is Status.FAIL and "branches" in branchy.reasoning


def test_per_file_globs_name_the_files_under_their_minimum(project: Path) -> None:
    ctx = Context(workspace=project)
    low = evaluate(code_coverage(files={"*grades.py": 99}), ctx)
    assert low.status is Status.FAIL and "grades.py" in low.reasoning and "under 99%" in low.reasoning
    ok = evaluate(code_coverage(files={"*grades.py": 10}), ctx)
    assert ok.status is Status.PASS
    typo = evaluate(code_coverage(files={"src/*.py": 10}), ctx)
    assert typo.status is Status.FAIL and "no file in the report matches" in typo.reasoning


def test_usable_by_name_in_a_suite(project: Path, tmp_path: Path) -> None:
    suite_file = tmp_path / "suite.yaml"
    suite_file.write_text(
        "name: cov\nagent: {python: 'builtins:print'}\ncases:\n"
        "  - name: c\n    prompt: hi\n"
        "    judges:\n      - code_coverage: {report: coverage.xml, min_line: 50, files: {'*grades.py': 50}}\n"
    )
    suite = load_suite(suite_file)
    judge = suite.cases[0].judges[0].judge
    assert evaluate(judge, Context(workspace=project)).status is Status.PASS


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "invalid JSON"),
        ('{"meta": {}}', "field 'files' is missing"),
        ('{"files": {"a.py": {"summary": {"num_statements": -3, "covered_lines": 0}}}}', "num_statements"),
        ('{"files": {"a.py": {"summary": {"num_statements": 2, "covered_lines": 5}}}}', "covers more than"),
        ('{"files": {"a.py": {"summary": {"num_statements": true, "covered_lines": 0}}}}', "whole number"),
        ("<coverage><packages><</coverage>", "invalid XML"),
        ("<report/>", "not a Cobertura report"),
        ("plain text", "not a coverage.py JSON or Cobertura XML"),
        (
            '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]>'
            '<coverage line-rate="&lol2;"/>',
            "DTD or entities is refused",
        ),
    ],
)
def test_a_hostile_or_broken_report_fails_naming_file_and_field(tmp_path: Path, content: str, message: str) -> None:
    (tmp_path / "cov.dat").write_text(content)
    result = evaluate(code_coverage("cov.dat", min_line=1), Context(workspace=tmp_path))
    assert result.status is Status.FAIL
    assert message in result.reasoning and "cov.dat" in result.reasoning


def test_paths_stay_inside_the_workspace(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="stay inside"):
        code_coverage("../coverage.json", min_line=1)
    outside = tmp_path / "outside.json"
    outside.write_text("{}")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "coverage.json").symlink_to(outside)
    result = evaluate(code_coverage(min_line=1), Context(workspace=workspace))
    assert result.status is Status.ERROR and "outside the workspace" in result.reasoning
    missing = evaluate(code_coverage(min_line=1), Context(workspace=tmp_path))
    assert missing.status is Status.FAIL and "no coverage report" in missing.reasoning


def test_options_are_checked_when_the_judge_is_built() -> None:
    with pytest.raises(ValueError, match="needs min_line, min_branch or files"):
        code_coverage()
    with pytest.raises(ValueError, match="0 to 100"):
        code_coverage(min_line=120)
    with pytest.raises(ValueError, match="0 to 100"):
        code_coverage(files={"*.py": True})
