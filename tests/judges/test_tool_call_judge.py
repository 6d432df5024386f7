import pytest

from jurybox import Context, Status, evaluate
from jurybox.judges import tool_calls

CALLS = [
    {"name": "get_listings", "arguments": {"owner_id": 7}},
    {"name": "get_bookings", "arguments": {"listing_id": 1, "month": "2026-06"}},
]


def judged(judge, calls=CALLS):  # type: ignore[no-untyped-def]
    return evaluate(judge, Context(tool_calls=calls))


def test_strict_requires_same_order_and_count() -> None:
    assert judged(tool_calls(["get_listings", "get_bookings"])).status is Status.PASS
    swapped = judged(tool_calls(["get_bookings", "get_listings"]))
    assert swapped.status is Status.FAIL
    assert "at position 1: expected get_bookings, got get_listings" in swapped.reasoning
    extra = judged(tool_calls(["get_listings"]))
    assert extra.status is Status.FAIL and "unexpected call #2 get_bookings" in extra.reasoning
    missing = judged(tool_calls(["get_listings", "get_bookings", "get_revenue"]))
    assert missing.status is Status.FAIL and "get_revenue" in missing.reasoning


def test_unordered_subset_superset() -> None:
    assert judged(tool_calls(["get_bookings", "get_listings"], mode="unordered")).status is Status.PASS
    assert judged(tool_calls(["get_bookings"], mode="unordered")).status is Status.FAIL
    assert judged(tool_calls(["get_bookings"], mode="subset")).status is Status.PASS
    subset_missing = judged(tool_calls(["get_revenue"], mode="subset"))
    assert subset_missing.status is Status.FAIL and "get_revenue not called" in subset_missing.reasoning
    assert judged(tool_calls(["get_listings", "get_bookings", "get_revenue"], mode="superset")).status is Status.PASS
    superset_extra = judged(tool_calls(["get_listings"], mode="superset"))
    assert superset_extra.status is Status.FAIL and "unexpected call #2 get_bookings" in superset_extra.reasoning


def test_argument_modes_and_differences() -> None:
    exact = tool_calls([{"name": "get_listings", "arguments": {"owner_id": 8}}], mode="subset")
    result = judged(exact)
    assert result.status is Status.FAIL
    assert "argument 'owner_id': expected 8, got 7" in result.reasoning
    partial = [{"name": "get_bookings", "arguments": {"listing_id": 1}}]
    assert judged(tool_calls(partial, mode="subset")).status is Status.FAIL  # exact args: month is extra
    assert judged(tool_calls(partial, mode="subset", args="subset")).status is Status.PASS
    wide = [{"name": "get_bookings", "arguments": {"listing_id": 1, "month": "2026-06", "limit": 10}}]
    assert judged(tool_calls(wide, mode="subset", args="superset")).status is Status.PASS
    assert judged(tool_calls(wide, mode="subset", args="subset")).status is Status.FAIL
    ignored = [{"name": "get_listings", "arguments": {"owner_id": 999}}]
    assert judged(tool_calls(ignored, mode="subset", args="ignore")).status is Status.PASS


def test_per_tool_override() -> None:
    expected = [
        {"name": "get_listings", "arguments": {"owner_id": 1}},
        {"name": "get_bookings", "arguments": {"listing_id": 1}},
    ]
    judge = tool_calls(expected, per_tool={"get_listings": "ignore", "get_bookings": "subset"})
    assert judged(judge).status is Status.PASS


def test_matching_uses_distinct_calls() -> None:
    twice = [{"name": "search", "arguments": {"q": "a"}}, {"name": "search", "arguments": {"q": "b"}}]
    expected = [{"name": "search", "arguments": {"q": "b"}}, {"name": "search", "arguments": {"q": "a"}}]
    assert judged(tool_calls(expected, mode="unordered"), twice).status is Status.PASS
    once = [{"name": "search", "arguments": {"q": "a"}}]
    result = judged(tool_calls(["search", "search"], mode="subset"), once)
    assert result.status is Status.FAIL


def test_checks_name_each_expected_call() -> None:
    result = judged(tool_calls(["get_listings", "get_revenue"], mode="subset"))
    assert [(c.name, c.passed) for c in result.checks] == [
        ("expected #1 get_listings", True),
        ("expected #2 get_revenue", False),
        ("call #2 get_bookings", True),  # an extra call is allowed in subset mode, and still listed
    ]
    assert result.value == pytest.approx(0.5)


def test_no_calls_expected() -> None:
    assert judged(tool_calls([]), []).status is Status.PASS
    assert judged(tool_calls([])).status is Status.FAIL


def test_bad_options_raise() -> None:
    with pytest.raises(ValueError, match="mode"):
        tool_calls(["a"], mode="loose")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="argument mode for search"):
        tool_calls(["a"], per_tool={"search": "fuzzy"})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="list of expected calls"):
        tool_calls("get_listings")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="has no 'name'"):
        tool_calls([{"arguments": {}}])
