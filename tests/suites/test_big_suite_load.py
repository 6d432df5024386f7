"""A 10,000-case suite: its cases share what they can (the verdict reader) and its errors still name the line.

``load_suite`` of a big file shares per-judge-spec work across cases and reads lines from a
compact index; neither may change what a case holds or where a problem is reported.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from jurybox.models import FakeModel
from jurybox.suites import SuiteError, load_suite

CASES = 10_000
AGENT = "big_suite_agent"  # its own module name: another test's ``agent`` module must not be this one


@pytest.fixture(autouse=True)
def _forget_the_agent() -> Iterator[None]:
    yield
    sys.modules.pop(AGENT, None)


def write_suite(folder: Path, bad: dict[int, str] | None = None) -> Path:
    """The benchmark's suite shape; ``bad`` replaces a case's judges line (by case index)."""
    lines = ["name: big", f'agent: {{python: "{AGENT}:respond"}}', "defaults: {retries: 0}", "cases:"]
    for index in range(CASES):
        lines.append(f"  - name: case-{index:05d}")
        lines.append(f'    prompt: "question {index}"')
        judges = f'    judges: [{{correctness: {{reference: "The answer to question {index} is 42."}}}}]'
        lines.append((bad or {}).get(index, judges))
    path = folder / "suite.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / f"{AGENT}.py").write_text("def respond(message, session_id):\n    return 'answer'\n", encoding="utf-8")
    return path


def judges_line(index: int) -> int:
    return 5 + 3 * index + 2  # the header is 4 lines; each case is 3, its judges on the third


def test_cases_with_the_same_judge_spec_keep_their_own_references(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path), judge_model=FakeModel("{}"))
    judges = [case.judges[0].judge for case in suite.cases]
    assert len(judges) == CASES
    assert len({id(judge) for judge in judges}) == CASES
    assert len({id(judge.classifier) for judge in judges}) == 1  # one shared reader, not 10,000 copies
    for index in (0, 4_321, CASES - 1):
        case = suite.cases[index]
        assert case.judges[0].judge.options["reference"] is not None
        assert case.line == judges_line(index) - 2
        assert case.judges[0].line == judges_line(index)
        assert case.spec["judges"] == [{"correctness": {"reference": f"The answer to question {index} is 42."}}]


@pytest.mark.parametrize(
    ("entry", "field", "message"),
    [
        (
            '{correctness: {refrence: "x"}}',
            "judges[0].correctness.refrence",
            "unknown option 'refrence' for 'correctness' (did you mean 'reference'?)",
        ),
        ('{correctness: {reference: "x", threshold: 2}}', "judges[0].correctness", "threshold"),
        ('{correctness: {reference: "x", on_conflict: first}}', "judges[0].correctness", "on_conflict"),
        ("{corectness: {reference: x}}", "judges[0]", "unknown judge 'corectness' (did you mean 'correctness'?)"),
    ],
)
def test_a_problem_in_case_9000_names_its_file_line_and_field(
    tmp_path: Path, entry: str, field: str, message: str
) -> None:
    path = write_suite(tmp_path, {9_000: f"    judges: [{entry}]"})
    with pytest.raises(SuiteError) as caught:
        load_suite(path, judge_model=FakeModel("{}"))
    problem, *others = caught.value.problems
    assert not others, caught.value
    assert (problem.file, problem.line) == (str(path), judges_line(9_000))
    assert problem.field == f"cases[9000].{field}"
    assert message in problem.message


def test_a_duplicate_key_in_case_9000_names_both_lines(tmp_path: Path) -> None:
    duplicate = '    judges: [{correctness: {reference: "x"}}]\n    prompt: "again"'
    path = write_suite(tmp_path, {9_000: duplicate})
    with pytest.raises(SuiteError) as caught:
        load_suite(path, judge_model=FakeModel("{}"))
    problem, *others = caught.value.problems
    assert not others, caught.value
    assert problem.line == judges_line(9_000) + 1
    assert f"first at line {judges_line(9_000) - 1}" in problem.message


VARIED = """\
name: varied
agent: {python: "%s:respond"}
defaults: {retries: 0, threshold: 0.5}
cases:
  - name: plain
    prompt: hi
    judges: [{contains: hello}]
  - name: written-defaults
    prompt: hi
    description: ""
    skip: false
    tags: [a, b]
    metadata: {team: x, n: 3}
    threshold: 0.5
    judges: [{contains: {text: [hello], all: true}}]
  - name: rounds
    rounds:
      - {prompt: one, judges: [{contains: a}]}
      - {prompt: two, reference: ref, criteria: "says two"}
  - name: tools
    prompt: hi
    expect_tools: [{name: search}]
    timeout: 30
    follow_ups: ["and then?"]
    max_follow_ups: 1
"""


def test_each_case_spec_is_its_own_model_dump(tmp_path: Path) -> None:
    """Every case's ``spec`` is dumped in one call now; it must be what dumping each case gives."""
    import yaml

    from jurybox.suites._spec import CaseModel

    write_suite(tmp_path)  # for the agent module
    path = tmp_path / "varied.yaml"
    path.write_text(VARIED % AGENT, encoding="utf-8")
    suite = load_suite(path, judge_model=FakeModel("{}"))
    raw = yaml.safe_load(VARIED % AGENT)["cases"]
    expected = [CaseModel.model_validate(case).model_dump(mode="json", exclude_defaults=True) for case in raw]
    assert [dict(case.spec) for case in suite.cases] == expected
    assert suite.cases[1].spec["tags"] == ["a", "b"] and "skip" not in suite.cases[1].spec
