"""The plugin end to end in fresh pytest runs (pytester): gating, summary, strict mode, JUnit, trials, cassettes."""

from __future__ import annotations

import json
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import hypothesis
import openai
import pytest
import vcr
import yaml

import jurybox.judges
import jurybox.llm
import jurybox.models
import jurybox.pytest_plugin._options
import jurybox.testing
from jurybox.stubs import StubServer

# In-process pytester runs drop modules first imported inside them; importing these here keeps
# one copy of each class for every run (and keeps each run fast).
PRELOADED = (hypothesis, openai, vcr, jurybox.judges, jurybox.llm, jurybox.models, jurybox.testing)

pytest_plugins = ["pytester"]

RELEVANT = json.dumps({"relevant": True, "confidence": 0.93, "reasoning": "It answers the question."})
IRRELEVANT = json.dumps({"relevant": False, "confidence": 0.81, "reasoning": "It talks about the weather."})


@pytest.fixture(autouse=True)
def isolated(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("JURYBOX_JUDGE_MODEL", "JURYBOX_FAIL_ON_REJECT"):
        monkeypatch.delenv(name, raising=False)
    # An ini file pins the rootdir to the test's folder, so no pyproject.toml above it is read.
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")


SOFT_TEST = f"""
    from jurybox.testing import expect

    def test_answer(fake_model):
        fake_model({IRRELEVANT!r})
        expect("It will rain tomorrow.").warn_if_irrelevant("refund policy")
"""


def test_soft_warning_appears_in_the_terminal_summary(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_soft=SOFT_TEST)
    result = pytester.runpytest_inprocess()
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "*= jurybox soft warnings (1) =*",
            "test_soft.py::test_answer: warn_if_irrelevant judge=relevance model=fake:model "
            "verdict=fail confidence=0.81",
            "    It talks about the weather.",
        ]
    )


@pytest.mark.parametrize("how", ["option", "environment", "pyproject"])
def test_strict_mode_fails_soft_checks(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    pytester.makepyfile(test_soft=SOFT_TEST)
    args = []
    if how == "option":
        args.append("--jurybox-strict")
    elif how == "environment":
        monkeypatch.setenv("JURYBOX_FAIL_ON_REJECT", "1")
    else:
        pytester.makefile(".toml", pyproject="[tool.jurybox]\nfail_on_reject = true\n")
    result = pytester.runpytest_inprocess(*args)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*warn_if_irrelevant('refund policy') failed (soft check, strict mode): relevance said fail*"]
    )


def test_verdicts_are_junit_properties(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_junit=f"""
        from jurybox.testing import expect

        def test_answer(fake_model):
            fake_model({RELEVANT!r})
            expect("Refunds take 30 days.").is_relevant_to("refund policy")
        """
    )
    xml_path = pytester.path / "junit.xml"
    result = pytester.runpytest_inprocess(f"--junitxml={xml_path}")
    result.assert_outcomes(passed=1)
    properties = ET.parse(xml_path).getroot().findall(".//testcase/properties/property")
    assert [p.get("name") for p in properties] == ["jurybox.verdict"]
    verdict = json.loads(properties[0].get("value") or "")
    assert verdict["judge"] == "relevance" and verdict["outcome"] == "pass" and verdict["confidence"] == 0.93


def test_llm_judge_marker_skips_without_a_model_and_runs_with_one(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(
        test_gate="""
        import pytest

        @pytest.mark.llm_judge
        def test_needs_model(judge_model):
            assert judge_model.name
        """
    )
    result = pytester.runpytest_inprocess("-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(
        ["*llm_judge: no judge model configured; configure a judge model with --jurybox-model*"]
    )
    with StubServer("openai", reply="ok") as stub:
        pytester.makefile(
            ".toml", pyproject=f'[tool.jurybox]\nmodel = "openai:gpt-4o-mini"\nbase_url = "{stub.base_url}"\n'
        )
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-000000")
        result = pytester.runpytest_inprocess("-rs")
    result.assert_outcomes(passed=1)
    assert "jurybox: judge model openai:gpt-4o-mini (from [tool.jurybox] model in " in result.stdout.str()


def test_configured_model_serves_expect_and_plain_llm_judges(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(
        test_configured="""
        from jurybox.core import Context, evaluate
        from jurybox.llm import relevance
        from jurybox.testing import expect

        def test_it():
            expect("Paris.").is_relevant_to("the capital of France")
            assert evaluate(relevance(query="capital of France?"), Context(output="Paris.")).ok
        """
    )
    with StubServer("openai", reply=RELEVANT) as stub:
        pytester.makefile(".toml", pyproject=f'[tool.jurybox]\nbase_url = "{stub.base_url}"\ncache = false\n')
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-000000")
        result = pytester.runpytest_inprocess("--jurybox-model", "openai:gpt-4o-mini")
        result.assert_outcomes(passed=1)
        # Two judge calls; the session's one check of the server is a TCP connection, not a request.
        assert [r.method for r in stub.requests] == ["POST", "POST"]
    assert "jurybox: judge model openai:gpt-4o-mini (from --jurybox-model)" in result.stdout.str()
    assert "jurybox: 2 judge call(s), 0 from the response cache" in result.stdout.str()
    # The session default is removed again when the run ends.
    assert jurybox.models._registry._default is None


def test_llm_judge_with_a_cassette_on_disk_runs_without_a_model(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_taped="""
        import pytest

        @pytest.mark.llm_judge
        @pytest.mark.cassette
        def test_taped():
            pass

        @pytest.mark.llm_judge
        @pytest.mark.cassette
        def test_not_taped_yet():
            pass
        """
    )
    tape = pytester.path / "cassettes" / "test_taped" / "test_taped.yaml"
    tape.parent.mkdir(parents=True)
    tape.write_text("interactions: []\nversion: 1\n", encoding="utf-8")
    result = pytester.runpytest_inprocess("-rs")
    result.assert_outcomes(passed=1, skipped=1)


def test_live_llm_marker_needs_the_live_flag(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_live="import pytest\n\n@pytest.mark.live_llm\ndef test_live():\n    pass\n")
    result = pytester.runpytest_inprocess("-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*live_llm: calls a real LLM provider; run with --jurybox-live*"])
    pytester.runpytest_inprocess("--jurybox-live").assert_outcomes(passed=1)


def test_similarity_threshold_marker_and_config(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_sim="""
        import pytest
        from jurybox.testing import expect

        def test_default():
            expect("The capital is Paris.").is_similar_to("The capital is Berlin.")

        @pytest.mark.similarity_threshold(0.7)
        def test_lenient():
            expect("The capital is Paris.").is_similar_to("The capital is Berlin.")
        """
    )
    result = pytester.runpytest_inprocess()
    result.assert_outcomes(passed=1, failed=1)
    pytester.makefile(".toml", pyproject="[tool.jurybox]\nsimilarity_threshold = 0.5\n")
    pytester.runpytest_inprocess().assert_outcomes(passed=2)


def test_bad_configuration_is_a_usage_error_naming_file_and_field(pytester: pytest.Pytester) -> None:
    pytester.makefile(".toml", pyproject="[tool.jurybox]\nconfidence = 2\n")
    pytester.makepyfile(test_any="def test_any():\n    pass\n")
    result = pytester.runpytest_inprocess()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*jurybox: */pyproject.toml: field 'confidence' must be a number in 0..1, got 2*"])


TRIALS_TESTS = """
    import itertools
    import pytest

    CALLS = {"stable": 0, "flaky": 0}
    FLIPS = itertools.cycle([True, False])

    @pytest.mark.trials(20, min_pass_rate=0.5)
    def test_stable():
        CALLS["stable"] += 1
        assert True

    @pytest.mark.trials(20, min_pass_rate=0.9)
    def test_flaky():
        CALLS["flaky"] += 1
        assert next(FLIPS), "answer drifted"

    def test_counts():
        assert CALLS == {"stable": 4, "flaky": 4}
"""


def test_trials_marker_stops_early_and_reports_flaky(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_trials=TRIALS_TESTS)
    result = pytester.runpytest_inprocess("-p", "no:randomly")
    result.assert_outcomes(passed=2, failed=1)
    output = result.stdout.str()
    assert (
        "FAILED (flaky): 2/4 trials passed, stopped early of 20; rate 50%, 95% Wilson interval [0.15, 0.85]" in output
    )
    assert "trial 2: AssertionError: answer drifted" in output
    result.stdout.fnmatch_lines(
        [
            "*= jurybox trials (2) =*",
            "test_trials.py::test_stable: PASS stable pass: 4/4 passed of max 20 (stopped early); rate 100%*",
            "test_trials.py::test_flaky: FAIL flaky: 2/4 passed of max 20 (stopped early); rate 50%*",
        ]
    )


def test_trials_marker_reruns_async_test_bodies(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(
        test_async_trials="""
        import asyncio
        import pytest

        RUNS = []

        @pytest.mark.trials(10, min_pass_rate=0.5)
        async def test_async():
            RUNS.append(1)
            await asyncio.sleep(0)

        def test_runs():
            assert len(RUNS) == 4
        """
    )
    pytester.runpytest_inprocess().assert_outcomes(passed=2)


def test_malformed_trials_marker_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_bad="import pytest\n\n@pytest.mark.trials(5)\ndef test_x():\n    pass\n")
    result = pytester.runpytest_inprocess()
    result.stdout.fnmatch_lines(["*@pytest.mark.trials(n, min_pass_rate=p) is malformed*"])


CASSETTE_TEST = """
    import os
    import openai
    import pytest

    pytestmark = pytest.mark.cassette

    class TestAnswers:
        def test_reply(self):
            client = openai.OpenAI(
                api_key="sk-proj-PLANTEDkey0123456789abcdef", base_url=os.environ["STUB_URL"], max_retries=0
            )
            reply = client.chat.completions.create(
                model="gpt-4o-mini", messages=[{"role": "user", "content": "Say hello"}]
            )
            assert reply.choices[0].message.content == "hello from the stub"
"""


def test_cassette_marker_records_then_replays_offline(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_taped=CASSETTE_TEST)
    tape = pytester.path / "cassettes" / "test_taped" / "TestAnswers.test_reply.yaml"
    with StubServer("openai", reply="hello from the stub") as stub:
        monkeypatch.setenv("STUB_URL", stub.base_url)
        # Default mode none with no cassette: the request fails instead of reaching the server.
        missing = pytester.runpytest_inprocess()
        missing.assert_outcomes(failed=1)
        missing.stdout.fnmatch_lines(
            ["*is not on cassette*", "*record it: pytest --record-mode once test_taped.py::TestAnswers::test_reply"]
        )
        assert stub.requests == [] and not tape.exists()
        pytester.runpytest_inprocess("--record-mode", "once").assert_outcomes(passed=1)
        assert len(stub.requests) == 1
    assert tape.is_file()
    assert "PLANTEDkey" not in tape.read_text(encoding="utf-8")
    # The stub is gone: replay must not need it.
    result = pytester.runpytest_inprocess()
    result.assert_outcomes(passed=1)


def test_all_keeps_other_interactions_and_rewrite_drops_them(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_taped=CASSETTE_TEST)
    tape = pytester.path / "cassettes" / "test_taped" / "TestAnswers.test_reply.yaml"

    def interactions() -> list[dict[str, object]]:
        return list(yaml.safe_load(tape.read_text(encoding="utf-8"))["interactions"])

    with StubServer("openai", reply="hello from the stub") as stub:
        monkeypatch.setenv("STUB_URL", stub.base_url)
        pytester.runpytest_inprocess("--record-mode", "once").assert_outcomes(passed=1)
        data = yaml.safe_load(tape.read_text(encoding="utf-8"))
        stale = json.loads(json.dumps(data["interactions"][0]))
        stale["request"]["uri"] = stale["request"]["uri"].replace("/chat/completions", "/old-endpoint")
        data["interactions"].append(stale)
        tape.write_text(yaml.safe_dump(data), encoding="utf-8")
        pytester.runpytest_inprocess("--record-mode", "all").assert_outcomes(passed=1)
        assert len(interactions()) == 2  # re-recorded the matching one, kept the other
        pytester.runpytest_inprocess("--record-mode", "rewrite").assert_outcomes(passed=1)
        assert len(interactions()) == 1  # only what this run recorded
        assert len(stub.requests) == 3


def test_record_mode_option_is_shared_with_pytest_recording(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Stand-in for pytest-recording: another plugin owning --record-mode.
    monkeypatch.setattr(jurybox.pytest_plugin._options, "recording_plugin_installed", lambda: True)
    pytester.makeconftest(
        """
        def pytest_addoption(parser):
            parser.addoption("--record-mode", dest="record_mode", default="none")
        """
    )
    pytester.makepyfile(test_any="def test_any():\n    pass\n")
    result = pytester.runpytest_inprocess("--record-mode", "new_episodes")
    result.assert_outcomes(passed=1)
    assert "record mode new_episodes" in result.stdout.str()


def test_fixtures_build_contexts(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_ctx="""
        from jurybox.judges import contains
        from jurybox.core import evaluate

        def test_ctx(jurybox_context):
            ctx = jurybox_context("Refunds take 30 days.", input="refunds?", tool_calls=["lookup"])
            assert ctx.tool_names == ["lookup"]
            assert evaluate(contains("30 days"), ctx).ok
        """
    )
    pytester.runpytest_inprocess().assert_outcomes(passed=1)


def test_plugin_is_registered_by_entry_point(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_inprocess("--markers")
    result.stdout.fnmatch_lines(["@pytest.mark.llm_judge:*", "@pytest.mark.trials(n, min_pass_rate=p*"])


def test_docs_page_exists() -> None:
    page = Path(__file__).resolve().parents[2] / "docs" / "pytest.md"
    assert "jurybox lint-cassettes" in page.read_text(encoding="utf-8")


def test_source_file_is_dedented() -> None:
    # Guards the fixtures above: pytester dedents, so indented triple-quoted tests stay valid.
    assert textwrap.dedent(CASSETTE_TEST).startswith("\nimport os")


def test_a_degraded_pass_is_listed_in_the_terminal_summary(pytester: pytest.Pytester) -> None:
    # A verdict from a neutral fallback score passes only by explicit policy; the run's output says so.
    pytester.makepyfile(
        test_degraded="""
        from jurybox.core import Judgment, NumericScore, Status, judge
        from jurybox.testing import expect

        @judge
        def neutral(context):
            return Judgment(Status.PASS, score=NumericScore(0.5), reasoning="neutral score 0.5", degraded=True)

        def test_answer():
            expect("some answer").satisfies(neutral)
        """
    )
    result = pytester.runpytest_inprocess()
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "*= jurybox degraded verdicts (1) =*",
            "test_degraded.py::test_answer: satisfies(neutral) judge=neutral verdict=pass (degraded)*",
        ]
    )
