import pytest

from jurybox import Context, Status, evaluate
from jurybox.judges import json_schema, max_cost, max_latency, same_python, valid_json

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "occupancy": {"type": "number", "minimum": 0, "maximum": 1}},
    "required": ["name", "occupancy"],
    "additionalProperties": False,
}


def test_valid_json() -> None:
    assert evaluate(valid_json(), Context(output='{"a": 1}')).status is Status.PASS
    bad = evaluate(valid_json(), Context(output='{"a": 1,}'))
    assert bad.status is Status.FAIL and "line 1 column" in bad.reasoning


def test_json_schema_lists_each_violation_by_path() -> None:
    judge = json_schema(SCHEMA)
    assert evaluate(judge, Context(output='{"name": "Beach House", "occupancy": 0.8}')).status is Status.PASS
    result = evaluate(judge, Context(output='{"name": 3, "occupancy": 1.5, "extra": true}'))
    assert result.status is Status.FAIL
    names = {c.name for c in result.checks}
    assert {"$.name", "$.occupancy", "$"} <= names
    assert evaluate(judge, Context(output="not json")).status is Status.FAIL


def test_invalid_schema_is_refused_when_built() -> None:
    with pytest.raises(ValueError, match="invalid JSON Schema at properties/name"):
        json_schema({"type": "object", "properties": {"name": {"type": "strnig"}}})


def test_same_python_ignores_formatting_and_comments() -> None:
    expected = "def add(a, b):\n    return a + b\n"
    formatted = "def add( a,b ):  # sum\n\n    return (a +\n            b)\n"
    assert evaluate(same_python(expected), Context(output=formatted)).status is Status.PASS
    changed = evaluate(same_python(expected), Context(output="def add(a, b):\n    return a - b\n"))
    assert changed.status is Status.FAIL and "-    return a + b" in changed.reasoning
    broken = evaluate(same_python(expected), Context(output="def add(:"))
    assert broken.status is Status.FAIL and "output is not valid Python" in broken.reasoning
    documented = 'def add(a, b):\n    """Add."""\n    return a + b\n'
    assert evaluate(same_python(expected), Context(output=documented)).status is Status.FAIL
    assert evaluate(same_python(expected, ignore_docstrings=True), Context(output=documented)).status is Status.PASS
    with pytest.raises(SyntaxError, match="expected source is not valid Python"):
        same_python("def (")


def test_latency_and_cost_budgets() -> None:
    assert evaluate(max_latency(2), Context(duration=1.2)).status is Status.PASS
    assert evaluate(max_latency(2), Context(duration=3.0)).status is Status.FAIL
    assert evaluate(max_latency(2), Context()).status is Status.ABSTAIN
    assert evaluate(max_cost(0.01), Context(metadata={"cost": 0.002})).status is Status.PASS
    assert evaluate(max_cost(0.01), Context(metadata={"cost": 0.02})).status is Status.FAIL
    unknown = evaluate(max_cost(0.01), Context())
    assert unknown.status is Status.ABSTAIN and "cost unknown" in unknown.reasoning
    with pytest.raises(ValueError, match="positive"):
        max_latency(0)
