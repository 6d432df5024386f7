import pytest

from jurybox import Context, Status, evaluate
from jurybox.judges import contains, equals, matches, similar, starts_with


def run(judge, output: str, expected: str | None = None):  # type: ignore[no-untyped-def]
    return evaluate(judge, Context(output=output, expected=expected))


def test_equals() -> None:
    assert run(equals("Paris"), " Paris\n").status is Status.PASS
    assert run(equals("Paris"), "paris").status is Status.FAIL
    assert run(equals("Paris", case_sensitive=False), "paris").status is Status.PASS
    assert run(equals("Paris", strip=False), "Paris ").status is Status.FAIL
    assert run(equals(), "42", expected="42").status is Status.PASS
    missing = run(equals(), "42")
    assert missing.status is Status.ERROR and "needs a reference" in missing.reasoning


def test_contains_any_all_and_case() -> None:
    listings = "We have the Beach House and the mountain cabin."
    assert run(contains("beach house"), listings).status is Status.PASS
    assert run(contains("beach house", case_sensitive=True), listings).status is Status.FAIL
    both = run(contains(["Beach House", "Mountain Cabin", "City Apartment"], all=True), listings)
    assert both.status is Status.FAIL
    assert "missing 'City Apartment'" in both.reasoning
    assert [c.passed for c in both.checks] == [True, True, False]
    assert both.value == pytest.approx(2 / 3)
    assert run(contains(["Castle", "Cabin"]), listings).status is Status.PASS
    assert run(contains(["Castle", "Igloo"]), listings).status is Status.FAIL
    with pytest.raises(ValueError, match="non-empty"):
        contains([])


def test_matches_and_starts_with() -> None:
    assert run(matches(r"\d+ listings?"), "You have 3 listings").status is Status.PASS
    assert run(matches(r"\d+", full=True), "3 listings").status is Status.FAIL
    assert run(matches(r"\d+", full=True), "33").status is Status.PASS
    with pytest.raises(ValueError, match="invalid regular expression"):
        matches("([")
    assert run(starts_with("Sure"), "  Sure, here").status is Status.PASS
    assert run(starts_with("sure"), "Sure").status is Status.FAIL
    assert run(starts_with("sure", case_sensitive=False), "Sure").status is Status.PASS
    with pytest.raises(ValueError):
        starts_with("")


def test_similar_default_threshold_and_override() -> None:
    recorded = "You have three properties: Beach House, Mountain Cabin and City Apartment."
    close = "You have three properties: Beach House, Mountain Cabin, and City Apartment."
    far = "I could not find any listings."
    assert run(similar(recorded), close).status is Status.PASS
    result = run(similar(recorded), far)
    assert result.status is Status.FAIL and "threshold 0.85" in result.reasoning
    assert 0 < (result.value or 0) < 0.85
    assert run(similar(threshold=0.1), far, expected=recorded).status is Status.PASS
    with pytest.raises(ValueError, match=r"0\.\.1"):
        similar("x", threshold=1.2)
