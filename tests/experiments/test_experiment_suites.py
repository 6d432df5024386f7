"""Suites with ``variants:`` and ``trials:``: what they load as, and every mistake as file:line:field."""

from __future__ import annotations

from pathlib import Path

import pytest
from experiment_helpers import write_suite

from jurybox.suites import SuiteError, load_suite, variant_suite_name


def problems(path: Path) -> list[str]:
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    return [str(problem) for problem in caught.value.problems]


def line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def test_each_variant_runs_the_suites_agent_with_its_changes(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path))
    agents = {variant.name: variant.agent for variant in suite.variants}
    assert agents["plain"] == {"python": "exp_agent:make_agent"}
    assert agents["polite"] == {"python": "exp_agent:make_agent", "options": {"style": "polite"}}
    assert suite.variants[1].changes == {"options": {"style": "polite"}}
    assert variant_suite_name(suite.name, "polite") == "exp@polite"


def test_an_option_the_agent_factory_does_not_take_is_a_problem_at_the_variants_line(tmp_path: Path) -> None:
    variants = "variants:\n  - name: a\n  - name: b\n    options: {stlye: polite}\n"
    path = write_suite(tmp_path, variants=variants)
    found = problems(path)
    assert len(found) == 1
    line = line_of(path, "stlye")
    assert found[0].startswith(f"{path}:{line}: variants[1].options:"), found
    assert "stlye" in found[0] and "style" in found[0]  # what it takes is listed


def test_an_unknown_key_in_a_variant_names_the_valid_ones(tmp_path: Path) -> None:
    variants = "variants:\n  - name: a\n    sytem_prompt: be brief\n"
    path = write_suite(tmp_path, variants=variants)
    found = problems(path)
    assert any(f":{line_of(path, 'sytem_prompt')}: variants[0].sytem_prompt: unknown key" in p for p in found), found
    assert any("did you mean 'system_prompt'" in p for p in found)


def test_a_variant_named_twice_and_a_bad_name_are_problems(tmp_path: Path) -> None:
    path = write_suite(tmp_path, variants="variants:\n  - name: a\n  - name: a\n")
    assert any(":6: variants[1].name: variant 'a' is named twice" in p for p in problems(path))
    path = write_suite(tmp_path, variants="variants:\n  - name: 'b c'\n")
    assert any(":5: variants[0].name: a variant's name is letters" in p for p in problems(path))


def test_an_openai_variant_changes_the_model_and_the_system_prompt(tmp_path: Path) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text(
        """name: chat
agent:
  openai: {model: small, base_url: "http://127.0.0.1:9/v1"}
variants:
  - name: big
    model: large
    system_prompt: Answer in one sentence.
  - name: typo
    options: {temprature: 0}
cases:
  - {name: a, prompt: hi, judges: [{contains: hi}]}
""",
        encoding="utf-8",
    )
    found = problems(path)
    assert len(found) == 1 and "variants[1].options" in found[0] and "temprature" in found[0], found
    path.write_text(path.read_text().replace("  - name: typo\n    options: {temprature: 0}\n", ""), encoding="utf-8")
    (big,) = load_suite(path).variants
    assert big.agent["openai"] == {
        "model": "large",
        "base_url": "http://127.0.0.1:9/v1",
        "system": "Answer in one sentence.",
    }


def test_a_variant_naming_another_adapter_replaces_the_agent(tmp_path: Path) -> None:
    variants = 'variants:\n  - name: remote\n    agent: {http: {url: "http://127.0.0.1:9/chat"}}\n'
    suite = load_suite(write_suite(tmp_path, variants=variants))
    assert suite.variants[0].agent == {"http": {"url": "http://127.0.0.1:9/chat"}}


def test_trials_run_each_case_as_numbered_cases_with_its_rule(tmp_path: Path) -> None:
    path = write_suite(tmp_path, cases=2, variants="", extra="trials: 3\n")
    path.write_text(
        path.read_text().replace(
            "    prompt: question 1\n", "    prompt: question 1\n    trials: {count: 2, pass: 1}\n"
        ),
        encoding="utf-8",
    )
    suite = load_suite(path)
    assert [c.name for c in suite.cases] == ["q0~1", "q0~2", "q0~3", "q1~1", "q1~2"]
    assert {(c.trial.of, c.trial.count, c.trial.rule) for c in suite.cases if c.trial} == {
        ("q0", 3, "all"),
        ("q1", 2, 1),
    }
    assert [c.name for c in suite.select(["q1"])] == ["q1~1", "q1~2"]  # a filter names the case, not its trials


@pytest.mark.parametrize(
    ("trials", "message"),
    [
        ("{count: 3, pass: 4}", "pass: 4 of 3 trials can never happen"),
        ("0", "greater than or equal to 1"),
        ("{count: 2, pass: most}", "trials.pass"),
        ("{count: 2, rule: all}", "unknown key 'rule'"),
    ],
)
def test_a_trials_mistake_names_its_line(tmp_path: Path, trials: str, message: str) -> None:
    path = write_suite(tmp_path, cases=1, variants="", extra=f"trials: {trials}\n")
    found = problems(path)
    assert any(f":{line_of(path, 'trials:')}: trials" in p and message in p for p in found), found


def test_trials_in_a_cases_file_are_refused_not_ignored(tmp_path: Path) -> None:
    path = write_suite(tmp_path, cases=1, variants="")
    (tmp_path / "more.jsonl").write_text(
        '{"name": "x", "prompt": "question 9", "judges": [{"contains": "answer"}], "trials": 3}\n', encoding="utf-8"
    )
    path.write_text(path.read_text() + "cases_file: more.jsonl\n", encoding="utf-8")
    assert any("more.jsonl:1: trials: trials: are not supported in a cases_file yet" in p for p in problems(path))
