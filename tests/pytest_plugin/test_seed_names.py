"""Seed 000's and seed 002's names in the pytest plugin: environment knobs, markers, one cassette tree."""

from __future__ import annotations

import json
from pathlib import Path

import hypothesis
import openai
import pytest
import vcr

import jurybox.judges
import jurybox.llm
import jurybox.models
import jurybox.suites
import jurybox.testing
from jurybox.models import FakeModel
from jurybox.pytest_plugin import ConfigError, build_settings, cassette_path
from jurybox.testing import JuryboxAssertionError, expect

# In-process pytester runs drop modules first imported inside them; importing these here keeps
# one copy of each and keeps each run fast (as tests/pytest_plugin/test_plugin_behaviour.py does).
PRELOADED = (hypothesis, openai, vcr, jurybox.judges, jurybox.llm, jurybox.models, jurybox.suites, jurybox.testing)

pytest_plugins = ["pytester"]
# An ini file pins the rootdir to the test's folder, so no pyproject.toml above it is read.
INI = "[pytest]\nasyncio_default_fixture_loop_scope = function\n"

SEED_VARIABLES = (
    "OLLAMA_LIVE",
    "LLM_JUDGE",
    "LLM_JUDGE_MODEL",
    "LLM_JUDGE_URL",
    "LLM_JUDGE_CONFIDENCE",
    "LLM_JUDGE_FAIL_ON_REJECT",
    "JURYBOX_JUDGE_MODEL",
    "JURYBOX_FAIL_ON_REJECT",
)


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in SEED_VARIABLES:
        monkeypatch.delenv(name, raising=False)


# -- seed 000's environment variables --------------------------------------------------------------


def test_seed_000_variables_configure_the_plugin() -> None:
    settings = build_settings(
        pyproject=None,
        environ={
            "LLM_JUDGE": "1",
            "LLM_JUDGE_MODEL": "llama3.1",
            "LLM_JUDGE_URL": "http://127.0.0.1:11434",
            "LLM_JUDGE_CONFIDENCE": "0.75",
            "LLM_JUDGE_FAIL_ON_REJECT": "true",
            "OLLAMA_LIVE": "1",
        },
    )
    assert settings.model == "ollama:llama3.1@http://127.0.0.1:11434"
    assert settings.model_source == "LLM_JUDGE_MODEL"
    assert (settings.confidence, settings.fail_on_reject, settings.live) == (0.75, True, True)


def test_seed_000_defaults_match_ours() -> None:
    settings = build_settings(pyproject=None, environ={"LLM_JUDGE": "1", "LLM_JUDGE_MODEL": "qwen2.5:7b"})
    assert settings.model == "ollama:qwen2.5:7b"  # a bare name is an Ollama model, tag and all
    assert (settings.confidence, settings.fail_on_reject, settings.live) == (0.6, False, False)
    # A full spec passes through unchanged.
    assert build_settings(
        pyproject=None, environ={"LLM_JUDGE": "1", "LLM_JUDGE_MODEL": "openai:gpt-4o-mini"}
    ).model == ("openai:gpt-4o-mini")


def test_ours_win_when_both_are_set(tmp_path: Path) -> None:
    environ = {
        "LLM_JUDGE_MODEL": "llama3.1",
        "JURYBOX_JUDGE_MODEL": "openai:gpt-4o-mini",
        "LLM_JUDGE_FAIL_ON_REJECT": "1",
        "JURYBOX_FAIL_ON_REJECT": "0",
        "LLM_JUDGE_CONFIDENCE": "0.9",
    }
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text("[tool.jurybox]\nconfidence = 0.7\n", encoding="utf-8")
    settings = build_settings(pyproject=pyproject, environ=environ)
    assert (settings.model, settings.model_source) == ("openai:gpt-4o-mini", "JURYBOX_JUDGE_MODEL")
    assert (settings.fail_on_reject, settings.confidence) == (False, 0.7)
    assert build_settings(pyproject=None, environ=environ, cli_model="anthropic:claude-haiku-4-5").model == (
        "anthropic:claude-haiku-4-5"
    )


def test_llm_judge_switches_the_judge_off_and_on() -> None:
    off = build_settings(pyproject=None, environ={"LLM_JUDGE": "0", "LLM_JUDGE_MODEL": "llama3.1"})
    assert off.model is None
    # Off means the seed's judge only: a jurybox model is still used.
    ours = build_settings(pyproject=None, environ={"LLM_JUDGE": "0", "JURYBOX_JUDGE_MODEL": "ollama:llama3.1"})
    assert ours.model == "ollama:llama3.1"
    # On with no model: the seed's default, llama3.1 on Ollama.
    assert build_settings(pyproject=None, environ={"LLM_JUDGE": "1"}).model == "ollama:llama3.1"
    # The model alone does not turn judging on, and the report header says so.
    alone = build_settings(pyproject=None, environ={"LLM_JUDGE_MODEL": "llama3.1"})
    assert alone.model is None
    assert alone.note == "LLM_JUDGE_MODEL=llama3.1 is not used: the LLM judge is off until LLM_JUDGE=1"


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        ({"LLM_JUDGE_CONFIDENCE": "high"}, "LLM_JUDGE_CONFIDENCE: expected a number in 0..1, got 'high'"),
        ({"LLM_JUDGE_CONFIDENCE": "1.5"}, "LLM_JUDGE_CONFIDENCE: expected a number in 0..1"),
        ({"LLM_JUDGE": "maybe"}, "LLM_JUDGE: expected 1/0"),
        ({"OLLAMA_LIVE": "sometimes"}, "OLLAMA_LIVE: expected 1/0"),
        (
            {"LLM_JUDGE": "1", "LLM_JUDGE_MODEL": "llama3.1", "LLM_JUDGE_URL": "localhost:11434"},
            "LLM_JUDGE_URL: base URL",
        ),
    ],
)
def test_bad_seed_values_name_the_variable(environ: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        build_settings(pyproject=None, environ=environ)
    assert message in str(caught.value)


def test_ollama_live_runs_live_llm_tests(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(test_live="import pytest\n\n@pytest.mark.live_llm\ndef test_live():\n    pass\n")
    pytester.runpytest_inprocess().assert_outcomes(skipped=1)
    monkeypatch.setenv("OLLAMA_LIVE", "1")
    pytester.runpytest_inprocess().assert_outcomes(passed=1)


# -- seed 000's camelCase steps warn by default ------------------------------------------------------


def _ranking_reply(score: float) -> str:
    return json.dumps({"score": score, "reasoning": "The best result is last."})


def _coverage_reply(covered: bool) -> str:
    return json.dumps({"topics": [{"topic": "pooling", "covered": covered, "evidence": ""}], "reasoning": "r"})


def test_has_good_ranking_warns_by_default_and_ours_stays_hard() -> None:
    results = ["Cats sleep a lot", "PgBouncer pools connections"]
    chain = expect.results("connection pooling", results, judge_model=FakeModel(_ranking_reply(0.2)))
    chain.hasGoodRanking()  # the seed's name: a soft check, the test goes on
    (verdict,) = chain.verdicts
    assert (verdict.step, verdict.soft, verdict.outcome) == ("hasGoodRanking", True, "fail")
    with pytest.raises(JuryboxAssertionError):
        expect.results("connection pooling", results, judge_model=FakeModel(_ranking_reply(0.2))).has_good_ranking()
    with pytest.raises(JuryboxAssertionError):
        chain.hasGoodRanking(hard=True)


def test_covers_topics_warns_by_default_and_ours_stays_hard() -> None:
    chain = expect("Use a pool.", judge_model=FakeModel(_coverage_reply(False)))
    chain.coversTopics("pooling")
    assert (chain.verdicts[0].step, chain.verdicts[0].soft, chain.verdicts[0].outcome) == ("coversTopics", True, "fail")
    with pytest.raises(JuryboxAssertionError):
        expect("Use a pool.", judge_model=FakeModel(_coverage_reply(False))).covers_topics("pooling")
    passed = expect("Use a pool.", judge_model=FakeModel(_coverage_reply(True))).coversTopics("pooling")
    assert passed.verdicts[0].ok


# -- seed 002's markers and cassette layout ----------------------------------------------------------


DRIFT_TEST = """
    import pytest
    from jurybox.testing import expect

    @pytest.mark.llm_drift_threshold(0.5)
    def test_loose():
        expect("the cat sat on the mat").is_similar_to("the cat sat on a mat today")

    def test_default_is_stricter():
        expect("the cat sat on the mat").is_similar_to("the cat sat on a mat today")

    @pytest.mark.llm_drift_threshold(0.5)
    @pytest.mark.similarity_threshold(0.5)
    def test_both():
        pass

    @pytest.mark.unit
    def test_unit():
        pass

    @pytest.mark.integration
    def test_integration():
        pass
"""


def test_seed_002_markers(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(test_drift=DRIFT_TEST)
    result = pytester.runpytest_inprocess("--strict-markers")
    outcomes = result.parseoutcomes()
    assert (outcomes.get("passed"), outcomes.get("failed"), outcomes.get("errors")) == (3, 1, 1)
    result.stdout.fnmatch_lines(["*llm_drift_threshold is another name for*similarity_threshold*"])
    # The tiers select as markers do.
    pytester.runpytest_inprocess("--strict-markers", "-m", "unit").assert_outcomes(passed=1, deselected=4)


def test_cassette_root_puts_every_cassette_in_one_tree(tmp_path: Path) -> None:
    root = tmp_path / "tests" / "core" / "llm" / "cassettes"
    test_file = tmp_path / "tests" / "unit" / "test_memories.py"
    path = cassette_path(test_file, "test_recall[db-001]", root=root, rootdir=tmp_path)
    assert path == root / "tests" / "unit" / "test_memories" / "test_recall[db-001].yaml"
    # Without a root, the cassette stays beside its test.
    assert (
        cassette_path(test_file, "test_recall") == test_file.parent / "cassettes" / "test_memories" / "test_recall.yaml"
    )


def test_cassette_root_setting_is_used_by_the_marker(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    (pytester.path / "pyproject.toml").write_text(
        '[tool.jurybox]\ncassette_root = "tests/core/llm/cassettes"\n', encoding="utf-8"
    )
    folder = pytester.path / "tests" / "unit"
    folder.mkdir(parents=True)
    (folder / "test_taped.py").write_text(
        "import pytest\n\n@pytest.mark.llm_judge\n@pytest.mark.cassette\ndef test_taped():\n    pass\n",
        encoding="utf-8",
    )
    tape = pytester.path / "tests" / "core" / "llm" / "cassettes" / "tests" / "unit" / "test_taped" / "test_taped.yaml"
    # llm_judge without a model runs only when the test's cassette is on disk: where the root says.
    pytester.runpytest_inprocess("tests/unit").assert_outcomes(skipped=1)
    tape.parent.mkdir(parents=True)
    tape.write_text("interactions: []\nversion: 1\n", encoding="utf-8")
    pytester.runpytest_inprocess("tests/unit").assert_outcomes(passed=1)
