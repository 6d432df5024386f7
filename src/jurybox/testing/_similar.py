"""``assert_llm_output_similar``: the one-call drift check of tests written against recorded outputs."""

from __future__ import annotations

from jurybox.testing._expect import expect


def assert_llm_output_similar(actual: str, expected: str, threshold: float | None = None) -> None:
    """Fail unless ``actual`` is similar to the recorded ``expected`` output.

    The same check as ``expect(actual).is_similar_to(expected, threshold)``: text similarity
    (difflib ratio) of at least ``threshold``; by default the test's
    ``@pytest.mark.llm_drift_threshold(x)`` (or ``similarity_threshold``), then
    ``[tool.jurybox] similarity_threshold``, then 0.85.

    Raises:
        JuryboxAssertionError: the output drifted, with both ratios in the message.
    """
    __tracebackhide__ = True
    expect(actual).is_similar_to(expected, threshold)
