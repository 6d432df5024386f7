"""Seed 002, round 2: the contract marker, pytest-recording's vcr marker and fixture, assert_llm_output_similar."""

from __future__ import annotations

import hypothesis
import openai
import pytest
import vcr

import jurybox.judges
import jurybox.llm
import jurybox.models
import jurybox.suites
import jurybox.testing
from jurybox.testing import JuryboxAssertionError, assert_llm_output_similar

PRELOADED = (hypothesis, openai, vcr, jurybox.judges, jurybox.llm, jurybox.models, jurybox.suites, jurybox.testing)
pytest_plugins = ["pytester"]
INI = "[pytest]\nasyncio_default_fixture_loop_scope = function\n"


def test_assert_llm_output_similar() -> None:
    assert_llm_output_similar("Check-in is at 4 pm.", "Check-in is at 4 pm sharp.", threshold=0.8)
    with pytest.raises(JuryboxAssertionError, match="is_similar_to"):
        assert_llm_output_similar("Check-out is at noon.", "Check-in is at 4 pm sharp.", threshold=0.9)


SEED_002 = """
    import urllib.request

    import pytest
    from jurybox.testing import assert_llm_output_similar

    @pytest.mark.contract
    def test_contract():
        pass

    @pytest.mark.llm_drift_threshold(0.6)
    def test_drift():
        assert_llm_output_similar("Check-in is at 4 pm.", "Check-in is at 4 pm sharp.")

    @pytest.mark.vcr
    def test_taped(vcr_cassette):
        assert vcr_cassette is not None and len(vcr_cassette) == 0

    def test_untaped(vcr_cassette):
        assert vcr_cassette is None

    @pytest.mark.vcr("other.yaml")
    def test_extra_cassettes():
        pass
"""


def test_seed_002_markers_and_fixture(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(test_seed=SEED_002)
    tape = pytester.path / "cassettes" / "test_seed" / "test_taped.yaml"
    tape.parent.mkdir(parents=True)
    tape.write_text("interactions: []\nversion: 1\n", encoding="utf-8")
    result = pytester.runpytest_inprocess("--strict-markers")
    result.assert_outcomes(passed=4, errors=1)
    result.stdout.fnmatch_lines(["*@pytest.mark.vcr with extra cassette files needs pytest-recording*"])
    pytester.runpytest_inprocess("--strict-markers", "-m", "contract").assert_outcomes(passed=1, deselected=4)
