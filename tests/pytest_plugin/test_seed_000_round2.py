"""Seed 000's defaults and names, as its own tests use them: the judge switch, camelCase steps, the log line."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import hypothesis
import openai
import pytest
import vcr

import jurybox
import jurybox.judges
import jurybox.llm
import jurybox.models
import jurybox.suites
import jurybox.testing
from jurybox.models import FakeModel
from jurybox.pytest_plugin import build_settings, is_llm_judge_enabled
from jurybox.testing import JuryboxAssertionError, JuryboxWarning, expect
from jurybox.testing._scope import _active as scope_stack

PRELOADED = (hypothesis, openai, vcr, jurybox.judges, jurybox.llm, jurybox.models, jurybox.suites, jurybox.testing)
pytest_plugins = ["pytester"]
INI = "[pytest]\nasyncio_default_fixture_loop_scope = function\n"
VARIABLES = ("LLM_JUDGE", "LLM_JUDGE_MODEL", "LLM_JUDGE_URL", "JURYBOX_JUDGE_MODEL", "JURYBOX_FAIL_ON_REJECT")


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # no pyproject.toml here


@pytest.mark.parametrize(
    ("environ", "model"),
    [
        ({"LLM_JUDGE": "true"}, "ollama:llama3.1"),  # the seed's default model
        ({"LLM_JUDGE": "true", "LLM_JUDGE_URL": "http://127.0.0.1:11434"}, "ollama:llama3.1@http://127.0.0.1:11434"),
        ({"LLM_JUDGE": "true", "LLM_JUDGE_MODEL": "qwen2.5:7b"}, "ollama:qwen2.5:7b"),
        ({"LLM_JUDGE_MODEL": "qwen2.5:7b"}, None),  # the model alone keeps judging off
        ({"LLM_JUDGE": "false", "LLM_JUDGE_MODEL": "qwen2.5:7b"}, None),
        ({}, None),
    ],
)
def test_llm_judge_switch_and_default_model(environ: dict[str, str], model: str | None) -> None:
    assert build_settings(pyproject=None, environ=environ).model == model
    assert is_llm_judge_enabled(environ) is (model is not None)


def test_is_llm_judge_enabled_outside_pytest_reads_the_process_environment(tmp_path: Path) -> None:
    script = tmp_path / "check.py"
    script.write_text("from jurybox.pytest_plugin import is_llm_judge_enabled\nprint(is_llm_judge_enabled())\n")
    source = str(Path(jurybox.__file__).resolve().parents[1])
    for environ, expected in (
        ({}, "False"),
        ({"LLM_JUDGE_MODEL": "llama3.1"}, "False"),
        ({"LLM_JUDGE": "1"}, "True"),
        ({"JURYBOX_JUDGE_MODEL": "openai:gpt-4o-mini"}, "True"),  # ours turns it on by itself
    ):
        run = subprocess.run(
            [sys.executable, str(script)],
            env={"PATH": os.environ.get("PATH", ""), "PYTHONPATH": source, **environ},
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=True,
        )
        assert run.stdout.strip() == expected, (environ, run.stderr)


def test_is_llm_judge_enabled_inside_a_test_and_the_header_note(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(
        test_switch="""
        from jurybox.pytest_plugin import is_llm_judge_enabled

        def test_off():
            assert not is_llm_judge_enabled()

        def test_fake(fake_model):
            fake_model('{"relevant": true, "confidence": 0.9, "reasoning": "ok"}')
            assert is_llm_judge_enabled()
        """
    )
    monkeypatch.setenv("LLM_JUDGE_MODEL", "llama3.1")
    result = pytester.runpytest_inprocess()
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        ["jurybox: LLM_JUDGE_MODEL=llama3.1 is not used: the LLM judge is off until LLM_JUDGE=1"]
    )


def _relevance(relevant: bool) -> str:
    return json.dumps({"relevant": relevant, "confidence": 0.9, "reasoning": "about cats, not pooling"})


def test_is_relevant_to_is_hard_and_warn_if_irrelevant_soft() -> None:
    passed = expect("PgBouncer pools connections", judge_model=FakeModel(_relevance(True))).isRelevantTo("pooling")
    assert (passed.verdicts[0].step, passed.verdicts[0].ok) == ("isRelevantTo", True)
    with pytest.raises(JuryboxAssertionError, match="isRelevantTo"):
        expect("Cats sleep", judge_model=FakeModel(_relevance(False))).isRelevantTo("pooling")
    chain = expect("Cats sleep", judge_model=FakeModel(_relevance(False))).warnIfIrrelevant("pooling")
    (verdict,) = chain.verdicts  # a soft check: the test goes on
    assert (verdict.step, verdict.soft, verdict.outcome) == ("warnIfIrrelevant", True, "fail")


def test_the_soft_check_warning_names_the_judge_model() -> None:
    model = FakeModel(_relevance(False), name="ollama:llama3.1")
    with warnings.catch_warnings(record=True) as caught, _outside_a_test():
        warnings.simplefilter("always")
        expect("Cats sleep", judge_model=model).warnIfIrrelevant("pooling")
    assert [w.category for w in caught] == [JuryboxWarning]
    assert "warnIfIrrelevant [relevance] judged by ollama:llama3.1: fail" in str(caught[0].message)


@contextlib.contextmanager
def _outside_a_test() -> Iterator[None]:
    """No jurybox test scope: ``expect`` warns as it does in a plain script."""
    saved = list(scope_stack)
    scope_stack.clear()
    try:
        yield
    finally:
        scope_stack.extend(saved)


def test_the_summary_line_names_the_judge_model(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(
        test_soft=f"""
        from jurybox.models import FakeModel
        from jurybox.testing import expect

        def test_soft():
            model = FakeModel({_relevance(False)!r}, name="ollama:llama3.1")
            expect("Cats sleep", judge_model=model).warnIfIrrelevant("pooling")
        """
    )
    result = pytester.runpytest_inprocess()
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*warnIfIrrelevant judge=relevance model=ollama:llama3.1 verdict=fail*"])
