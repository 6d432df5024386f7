import math

import pytest

from jurybox import BooleanScore, CategoricalScore, Check, Judgment, NumericScore, Status
from jurybox.core import normalize


def test_scores_normalize_to_unit_interval() -> None:
    assert normalize(BooleanScore(True)) == 1.0
    assert normalize(NumericScore(8, 1, 10)) == pytest.approx(7 / 9)
    assert normalize(CategoricalScore("B", {"A": 1.0, "B": 0.5, "C": 0.0})) == 0.5
    assert normalize(True) == 1.0
    assert normalize(0.25) == 0.25


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: NumericScore(11, 1, 10), "outside its bounds"),
        (lambda: NumericScore(1, 5, 5), "bounds are empty"),
        (lambda: NumericScore(math.nan), "finite"),
        (lambda: CategoricalScore("D", {"A": 1.0}), "unknown category 'D'; allowed: 'A'"),
        (lambda: CategoricalScore("A", {"A": 2.0}), "worth must be a number in 0..1"),
        (lambda: CategoricalScore("A", {}), "at least one category"),
        (lambda: normalize(1.5), "outside its bounds"),
        (lambda: BooleanScore(1), "needs a bool"),  # type: ignore[arg-type]
    ],
)
def test_invalid_scores_raise_clear_errors(make, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises((ValueError, TypeError), match=message):
        make()


def test_factories_set_status_and_score() -> None:
    assert Judgment.passed().status is Status.PASS
    assert Judgment.passed().value == 1.0
    assert Judgment.failed(0.2, "low").value == 0.2
    abstained = Judgment.abstained("no verdict", metadata={"raw": "???"})
    assert abstained.status is Status.ABSTAIN and abstained.value is None
    assert abstained.metadata["raw"] == "???"
    try:
        raise RuntimeError("boom")
    except RuntimeError as exc:
        errored = Judgment.errored("it broke", exception=exc)
    assert errored.status is Status.ERROR
    assert errored.error is not None and errored.error.type == "RuntimeError"
    assert "boom" in errored.error.traceback
    assert not errored.ok


def test_judgment_is_frozen_and_serializes() -> None:
    judgment = Judgment.passed(
        NumericScore(8, 1, 10), "good", checks=[Check("a", True, "fine")], judge="j", confidence=0.9
    )
    with pytest.raises(AttributeError):
        judgment.status = Status.FAIL  # type: ignore[misc]
    data = judgment.to_dict()
    assert data["status"] == "pass"
    assert data["score"] == {"kind": "numeric", "value": 8, "min": 1, "max": 10}
    assert data["checks"] == [{"name": "a", "passed": True, "message": "fine"}]
    with pytest.raises(ValueError, match="confidence"):
        Judgment.passed(confidence=1.5)


def test_walk_and_find_nested_judgments() -> None:
    leaf = Judgment.failed(judge="leaf")
    middle = Judgment.failed(judge="mid", children={"leaf": leaf})
    root = Judgment.failed(judge="root", children={"mid": middle})
    assert [path for path, _ in root.walk()] == ["", "mid", "mid/leaf"]
    assert root.find("leaf") is leaf
    assert root.find("missing") is None
