"""pytest fails fast and briefly: one check of the judge server per session, a one-line recording failure,
an undecided judge's own reply in the failure, and the session's cache hits in its summary.

The failure of a test whose judge could not decide is kept in
``tests/snapshots/pytest-undecided-judge.txt`` (see tests/snapshot_util.py).
"""

from __future__ import annotations

import os
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

DEAD = "openai:m@http://127.0.0.1:9/v1"  # port 9 (discard): refused at once on a test machine
RELEVANT = '{"relevant": true, "confidence": 0.9, "reasoning": "about refunds"}'

THREE_JUDGED_TESTS = """
    import pytest
    from jurybox.testing import expect

    @pytest.mark.parametrize("n", [1, 2, 3])
    def test_judged(n):
        expect(f"Refunds take {n} days.", query="How do refunds work?").is_relevant_to("refund policy")
"""


@pytest.fixture(autouse=True)
def isolated(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("JURYBOX_JUDGE_MODEL", "JURYBOX_FAIL_ON_REJECT", "JURYBOX_CACHE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("JURYBOX_CACHE_DIR", str(pytester.path / "cache"))
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")


def _calls(stub: StubServer) -> int:
    """Judge calls the server got."""
    return sum(1 for request in stub.requests if request.method == "POST")


def failure_section(output: str) -> list[str]:
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if "= FAILURES =" in line)
    end = next(i for i, line in enumerate(lines) if "short test summary info" in line)
    return lines[start + 1 : end]


def test_a_dead_judge_server_is_checked_once_and_every_test_fails_at_once(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_judged=THREE_JUDGED_TESTS)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--jurybox-model", DEAD)
    result.assert_outcomes(failed=3)
    output = result.stdout.str()
    # Without the check each test paid four retries with back-off (about 9 s each; benchmarks/pytest_dead_judge.py).
    # Once in each failure (the short summary's FAILED lines repeat it when the terminal is wide enough).
    details = "\n".join(line for line in output.splitlines() if not line.startswith("FAILED "))
    assert details.count("checked once for this pytest session") == 3
    assert "connection refused at http://127.0.0.1:9/v1" in output
    assert "after 4 retries" not in output
    summary = [line for line in output.splitlines() if line.startswith("jurybox: judge server")]
    assert summary == [
        "jurybox: judge server http://127.0.0.1:9/v1 unreachable (connection refused); "
        "0 of 3 judge call(s) answered from the response cache"
    ]


def test_a_fully_cached_session_passes_with_the_server_down_and_says_so(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_judged=THREE_JUDGED_TESTS)
    with StubServer("openai", reply=RELEVANT) as stub:
        first = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--jurybox-model", f"openai:m@{stub.base_url}")
        url = stub.base_url
    first.assert_outcomes(passed=3)
    assert "jurybox: 3 judge call(s), 0 from the response cache" in first.stdout.str()
    again = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--jurybox-model", f"openai:m@{url}")
    again.assert_outcomes(passed=3)
    output = again.stdout.str()
    assert "jurybox: 3 judge call(s), 3 from the response cache" in output
    assert f"jurybox: judge server {url} unreachable (connection refused); 3 of 3 judge call(s) answered" in output


def test_no_cache_and_refresh_cache_options(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_judged=THREE_JUDGED_TESTS)
    with StubServer("openai", reply=RELEVANT) as stub:
        spec = f"openai:m@{stub.base_url}"
        pytester.runpytest_inprocess("-p", "no:cacheprovider", "--jurybox-model", spec).assert_outcomes(passed=3)
        assert _calls(stub) == 3
        off = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--jurybox-model", spec, "--jurybox-no-cache")
        assert _calls(stub) == 6  # asked again, nothing read from the cache
        assert "3 judge call(s), 0 from the response cache (cache off)" in off.stdout.str()
        refresh = pytester.runpytest_inprocess(
            "-p", "no:cacheprovider", "--jurybox-model", spec, "--jurybox-refresh-cache"
        )
        assert _calls(stub) == 9
        assert "(cache refreshed)" in refresh.stdout.str()
        cached = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--jurybox-model", spec)
        assert _calls(stub) == 9  # the refreshed replies were written back
        assert "3 from the response cache" in cached.stdout.str()
    assert "JURYBOX_CACHE" not in os.environ  # the session put the switch back
    both = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--jurybox-no-cache", "--jurybox-refresh-cache")
    assert both.ret == pytest.ExitCode.USAGE_ERROR
    assert "contradict each other" in both.stderr.str()


def test_recording_against_a_dead_server_is_one_line_naming_the_url_and_the_record_mode(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_taped="""
        import openai
        import pytest

        @pytest.mark.cassette
        def test_reply():
            client = openai.OpenAI(api_key="sk-test", base_url="http://127.0.0.1:9/v1", max_retries=1)
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "Say hello"}])
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--record-mode", "once")
    result.assert_outcomes(failed=1)
    section = failure_section(result.stdout.str())
    assert section[1:] == [
        "recording cassettes/test_taped/test_reply.yaml (record mode once): connection refused at "
        "http://127.0.0.1:9: is the server running?; start the server, or replay what is recorded with "
        "--record-mode none"
    ]


UNDECIDED_TEST = """
    from jurybox.testing import expect

    def test_answer(fake_model):
        fake_model("Hmm. The answer mentions refunds, so I would lean towards relevant, but I am not sure.")
        expect("Refunds take 5 days.", query="How do refunds work?").is_relevant_to("refund policy")
"""


def test_an_undecided_judge_s_reply_is_in_the_failure(
    pytester: pytest.Pytester, snapshot: Callable[[str, str], None]
) -> None:
    pytester.makepyfile(test_refunds=UNDECIDED_TEST)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--junitxml=junit.xml")
    result.assert_outcomes(failed=1)
    section = failure_section(result.stdout.str())
    assert (
        "E         judge replied: 'Hmm. The answer mentions refunds, so I would lean towards relevant, "
        "but I am not sure.'"
    ) in section
    junit = (pytester.path / "junit.xml").read_text(encoding="utf-8")
    assert "judge replied: " in junit and "lean towards relevant" in junit
    shown = [line for line in section if "generated xml file" not in line]
    text = re.sub(r" at 0x[0-9a-f]+", " at 0xADDR", "\n".join(shown))
    snapshot("pytest-undecided-judge", normalise(textwrap.dedent(text)))
