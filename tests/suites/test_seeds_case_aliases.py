"""Seed 001's case keys work as aliases of ours in suite YAML."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from jurybox.suites import SuiteError, load_suite

# Seed 001's test cases as its Python dicts, written to YAML unchanged.
SEED_001_CASES: list[dict[str, Any]] = [
    {
        "name": "occupancy-needs-a-listing",
        "prompt": "What's the occupancy?",
        "expected_tools": [],
        "judge_prompt": "Asks which listing the user means instead of guessing one",
        "judge_threshold": 0.7,
    },
    {
        "name": "remembers-after-revival",
        "test_agent_revival": True,
        "rounds": [
            {"prompt": "Show my listings", "expected_tools": ["get_listings"]},
            {
                "prompt": "What's the occupancy of the first one?",
                "judge_prompt": "refers to the first listing from the previous response",
                "judge_threshold": 0.8,
            },
        ],
    },
]


def _write(tmp_path: Path, cases: list[dict[str, Any]]) -> Path:
    suite = tmp_path / "suite.yaml"
    doc = {"name": "seed-001", "agent": {"python": "toy_agent:make_agent"}, "cases": cases}
    suite.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return suite


def test_seed_001_cases_load_with_its_keys(tmp_path: Path) -> None:
    suite = load_suite(_write(tmp_path, SEED_001_CASES), check_agent=False)
    single, revival = suite.cases
    # Stored under our names: the spec, the judges built from them and the revival switch.
    # "Each expected tool was called": extra calls and extra arguments are fine.
    assert single.spec["expect_tools"] == {"calls": [], "mode": "subset", "args": "subset"}
    assert single.spec["criteria"] == "Asks which listing the user means instead of guessing one"
    assert single.spec["threshold"] == 0.7
    assert [j.label for j in single.judges] == ["expect_tools", "criteria"]
    assert revival.revive_between_rounds is True
    assert [(j.label, j.round) for j in revival.judges] == [("expect_tools", 0), ("criteria", 1)]
    criteria = next(j for j in revival.judges if j.label == "criteria")
    assert criteria.judge.threshold == 0.8


def test_the_same_case_with_our_keys_builds_the_same_spec(tmp_path: Path) -> None:
    ours = [
        {
            "name": "occupancy-needs-a-listing",
            "prompt": "What's the occupancy?",
            "expect_tools": {"calls": [], "mode": "subset", "args": "subset"},
            "criteria": "Asks which listing the user means instead of guessing one",
            "threshold": 0.7,
        }
    ]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    theirs = load_suite(_write(tmp_path / "a", SEED_001_CASES[:1]), check_agent=False).cases[0]
    mine = load_suite(_write(tmp_path / "b", ours), check_agent=False).cases[0]
    assert theirs.spec == mine.spec


@pytest.mark.parametrize(
    ("ours", "alias"),
    [
        ("threshold", "judge_threshold"),
        ("criteria", "judge_prompt"),
        ("expect_tools", "expected_tools"),
        ("revive_between_rounds", "test_agent_revival"),
    ],
)
def test_both_spellings_in_one_case_is_an_error_naming_both(tmp_path: Path, ours: str, alias: str) -> None:
    values = {"threshold": 0.5, "criteria": "polite", "expect_tools": [], "revive_between_rounds": True}
    case = {"name": "both", "prompt": "hi", "judges": [{"contains": {"text": "hi"}}], ours: values[ours]}
    case[alias] = values[ours]
    with pytest.raises(SuiteError) as caught:
        load_suite(_write(tmp_path, [case]), check_agent=False)
    (problem,) = caught.value.problems
    assert problem.field == "cases[0]" and problem.line == 5  # the case's first line
    assert f"'{alias}'" in problem.message and f"'{ours}'" in problem.message


def test_errors_about_an_alias_name_the_key_the_file_wrote(tmp_path: Path) -> None:
    case = {"name": "bad", "prompt": "hi", "judge_threshold": 1.5, "test_agent_revival": "yes please"}
    with pytest.raises(SuiteError) as caught:
        load_suite(_write(tmp_path, [case]), check_agent=False)
    fields = {problem.field: problem.line for problem in caught.value.problems}
    assert fields == {"cases[0].judge_threshold": 7, "cases[0].test_agent_revival": 8}


def test_a_build_error_under_an_alias_names_the_alias(tmp_path: Path) -> None:
    case = {"name": "bad", "prompt": "hi", "expected_tools": {"calls": ["x"], "mode": "sideways"}}
    with pytest.raises(SuiteError) as caught:
        load_suite(_write(tmp_path, [case]), check_agent=False)
    assert all(problem.field.startswith("cases[0].expected_tools") for problem in caught.value.problems)
