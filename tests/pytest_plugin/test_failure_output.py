"""What a failing jurybox test prints in pytest: the point first, no jurybox/SDK/vcr frames, the record command.

The expected text of a failed ``expect`` is kept in ``tests/snapshots/pytest-expect-failure.txt``
(object addresses normalised) so a change to it is read in the diff; see tests/snapshot_util.py.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Callable

import openai
import pytest
import vcr

import jurybox.judges
import jurybox.llm
import jurybox.models
import jurybox.testing
from jurybox.stubs import StubServer
from snapshot_util import normalise

# In-process pytester runs drop modules first imported inside them: one copy of each class for every run.
PRELOADED = (openai, vcr, jurybox.judges, jurybox.llm, jurybox.models, jurybox.testing)

pytest_plugins = ["pytester"]

IRRELEVANT = json.dumps({"relevant": False, "confidence": 0.81, "reasoning": "It talks about the weather."})

EXPECT_TEST = f"""
    from jurybox.testing import expect

    def test_answer(fake_model):
        fake_model({IRRELEVANT!r})
        reply = "It will rain tomorrow in Paris, bring an umbrella."
        expect(reply, query="How do refunds work?").is_relevant_to("refund policy")
"""

# The SDK's retry wraps vcrpy's exception (openai raises APIConnectionError from it); the test
# body wraps it once more, as application code often does.
CASSETTE_TEST = """
    import os
    import openai
    import pytest

    class AppError(Exception):
        pass

    @pytest.mark.cassette
    def test_reply():
        client = openai.OpenAI(api_key="sk-test", base_url=os.environ["STUB_URL"], max_retries=1)
        try:
            client.chat.completions.create(
                model="gpt-4o-mini", messages=[{"role": "user", "content": os.environ.get("ASK", "Say hello")}]
            )
        except openai.OpenAIError as exc:
            raise AppError("the model call failed") from exc
"""


@pytest.fixture(autouse=True)
def isolated(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("JURYBOX_JUDGE_MODEL", "JURYBOX_FAIL_ON_REJECT"):
        monkeypatch.delenv(name, raising=False)
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")


def failure_section(output: str) -> list[str]:
    """The lines between pytest's FAILURES banner and its short summary."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if "= FAILURES =" in line)
    end = next(i for i, line in enumerate(lines) if "short test summary info" in line)
    return lines[start + 1 : end]


def normalised(lines: list[str]) -> str:
    text = re.sub(r" at 0x[0-9a-f]+", " at 0xADDR", "\n".join(lines))
    return normalise(re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", text))


def test_failed_expect_puts_the_verdict_first_and_hides_jurybox_frames(
    pytester: pytest.Pytester, snapshot: Callable[[str, str], None]
) -> None:
    pytester.makepyfile(test_refunds=EXPECT_TEST)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    section = failure_section(result.stdout.str())
    output = "\n".join(section)
    assert "_expect.py" not in output and "jurybox/testing" not in output
    first_error = next(line for line in section if line.startswith("E "))
    assert first_error == (
        "E       jurybox.testing.JuryboxAssertionError: is_relevant_to('refund policy') failed: "
        "relevance said fail (confidence 0.81): It talks about the weather."
    )
    assert "E         output: 'It will rain tomorrow in Paris, bring an umbrella.'" in section
    assert len(section) <= 12, output
    snapshot("pytest-expect-failure", normalised(section))


def test_missing_cassette_fails_in_a_few_lines_with_the_record_command(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, snapshot: Callable[[str, str], None]
) -> None:
    # In a folder under the rootdir: the paths and the command are relative to where pytest runs.
    pytester.mkdir("app")
    (pytester.path / "app" / "test_taped.py").write_text(textwrap.dedent(CASSETTE_TEST), encoding="utf-8")
    with StubServer("openai", reply="hello") as stub:
        monkeypatch.setenv("STUB_URL", stub.base_url)
        result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
        assert stub.requests == []
    result.assert_outcomes(failed=1)
    section = failure_section(result.stdout.str())
    output = "\n".join(section)
    # The banner line, then ours: no SDK, httpx or vcr frame, and none of vcrpy's own hint.
    assert len(section) <= 5, output
    assert re.fullmatch(
        r"POST http://127\.0\.0\.1:\d+/v1/chat/completions is not on cassette "
        r"app/cassettes/test_taped/test_reply\.yaml \(record mode none: nothing was sent\)",
        section[1],
    ), section[1]
    assert "  record it: pytest --record-mode once app/test_taped.py::test_reply" in section
    for noise in ("httpx", "_base_client", "vcr/", "record_mode='once' (the default)", "Traceback"):
        assert noise not in output
    # Under CI=true pytest prints the whole message in the short summary, so find its first line.
    summary = next(line for line in result.stdout.str().splitlines() if line.startswith("FAILED app/"))
    assert summary.startswith("FAILED app/test_taped.py::test_reply - Failed: POST http://127.0.0.1")
    snapshot("pytest-missing-cassette", normalised(section))


def test_changed_request_names_the_differing_field_and_rewrites(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_taped=CASSETTE_TEST)
    with StubServer("openai", reply="hello") as stub:
        monkeypatch.setenv("STUB_URL", stub.base_url)
        pytester.runpytest_inprocess("-p", "no:cacheprovider", "--record-mode", "once").assert_outcomes(passed=1)
        monkeypatch.setenv("ASK", "Say hi")
        result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    section = failure_section(result.stdout.str())
    assert section[2:] == [
        "  the closest recorded request differs in the body at messages[0].content: "
        'recorded "Say hello", sent "Say hi"',
        "  record it: pytest --record-mode rewrite test_taped.py::test_reply",
        "  (or --record-mode new_episodes to keep what is on it and add this request)",
    ]


JUDGED_TEST = """
    import pytest
    from jurybox.testing import expect

    @pytest.mark.cassette
    def test_judged():
        expect("Refunds within 30 days.", judge_model="openai:gpt-4o-mini").is_relevant_to("refund policy", retries=0)
"""


def test_a_judge_models_missing_request_fails_the_same_short_way(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The judge's provider turns vcrpy's exception into an ERROR verdict; the failure still names the request."""
    pytester.makepyfile(test_judged=JUDGED_TEST)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # refused, were it ever reached
    monkeypatch.setenv("JURYBOX_CACHE", "off")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    section = failure_section(result.stdout.str())
    assert section[1:] == [
        "POST http://127.0.0.1:9/v1/chat/completions is not on cassette cassettes/test_judged/test_judged.yaml "
        "(record mode none: nothing was sent)",
        "  the cassette file does not exist yet",
        "  record it: pytest --record-mode once test_judged.py::test_judged",
    ]


def test_a_test_that_handles_a_miss_keeps_its_own_failure(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_own="""
        import openai
        import pytest

        @pytest.mark.cassette
        def test_fallback():
            client = openai.OpenAI(api_key="sk-test", base_url="http://127.0.0.1:9/v1", max_retries=0)
            try:
                client.models.list()
            except Exception:
                pass  # the app falls back; the test then fails for its own reason
            assert 1 + 1 == 3, "the fallback answer is wrong"
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    output = result.stdout.str()
    assert "the fallback answer is wrong" in output and "is not on cassette" not in output
