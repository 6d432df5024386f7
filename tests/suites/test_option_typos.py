"""A misspelt option or key gets "did you mean", with file, line and field, never an internal class name."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from suite_helpers import TOY_HEADER, grading_model

from jurybox.suites import SuiteError, load_suite


def _problem(toy_suite: Callable[[str], Path], cases: str, *, header: str = TOY_HEADER) -> tuple[str, SuiteError]:
    path = toy_suite(header + "cases:\n" + cases)
    with pytest.raises(SuiteError) as caught:
        load_suite(path, judge_model=grading_model())
    return str(path), caught.value


def test_a_misspelt_llm_judge_option_gets_did_you_mean(toy_suite: Callable[[str], Path]) -> None:
    path, error = _problem(
        toy_suite, "  - name: a\n    prompt: hi\n    judges:\n      - correctness: {reference: x, treshold: 0.5}\n"
    )
    (problem,) = error.problems
    assert (problem.line, problem.field) == (9, "cases[0].judges[0].correctness.treshold")
    assert "unknown option 'treshold' for 'correctness' (did you mean 'threshold'?)" in str(error)
    assert f"{path}:9:" in str(error)
    assert "LLMJudge" not in str(error) and "__init__" not in str(error)


def test_a_misspelt_setting_of_the_llm_judges_catch_all_is_caught(toy_suite: Callable[[str], Path]) -> None:
    _, error = _problem(
        toy_suite, "  - name: a\n    prompt: hi\n    judges:\n      - correctness: {reference: x, sampels: 3}\n"
    )
    assert "unknown option 'sampels' for 'correctness' (did you mean 'samples'?)" in str(error)
    assert "it accepts: reference, model, threshold, name, retries" in str(error)


def test_a_misspelt_deterministic_option_gets_did_you_mean(toy_suite: Callable[[str], Path]) -> None:
    _, error = _problem(
        toy_suite, "  - name: a\n    prompt: hi\n    judges:\n      - contains: {text: x, case_sensitiv: true}\n"
    )
    assert "unknown option 'case_sensitiv' for 'contains' (did you mean 'case_sensitive'?)" in str(error)


def test_too_many_arguments_never_name_our_classes(toy_suite: Callable[[str], Path]) -> None:
    _, error = _problem(toy_suite, "  - name: a\n    prompt: hi\n    judges:\n      - valid_json: [1, 2]\n")
    assert "bad options for 'valid_json'" in str(error)
    assert "()" not in str(error).split("bad options for 'valid_json'")[1].split(";")[0]


def test_a_case_key_at_the_top_level_says_where_it_goes(toy_suite: Callable[[str], Path]) -> None:
    _, error = _problem(
        toy_suite, "  - name: a\n    prompt: hi\n    judges: [valid_json]\n", header=TOY_HEADER + "treshold: 0.5\n"
    )
    assert "unknown key 'treshold' (did you mean 'threshold' under defaults:?)" in str(error)
    assert error.problems[0].field == "treshold"
