"""orjson, when installed, parses what the standard library would, with the same answers and errors."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jurybox.core import InputLimitError
from jurybox.traces import _fast_json
from jurybox.traces._messages import parse_json_text
from jurybox.traces._otlp_json import load_line

TEXTS = [
    '{"a": 1, "b": 2, "a": 3}',
    "1e400",
    "NaN",
    '"\\ud800"',
    "123456789012345678901234567890",
    "[1, -12345678901234567890, 18446744073709551615]",
    '{"s": "1700000000000000000123"}',
    "[1.5e-320, -0.0, 0.1]",
    "\ufeff[1]",
    "[1,]",
]


def _answer(parse: object, text: str | bytes) -> str:
    try:
        return repr(parse(text))  # type: ignore[operator]
    except ValueError as exc:
        return f"{type(exc).__name__}: {exc}"


@pytest.mark.parametrize("text", TEXTS)
def test_the_same_answer_or_error_as_the_standard_library(text: str) -> None:
    for spelt in (text, text.encode("utf-8", "surrogatepass")):
        assert _answer(_fast_json.loads, spelt) == _answer(json.loads, spelt)


def _line(tail: str) -> bytes:
    """An export-sized line: more brackets than the depth limit, so load_line parses it first."""
    return ('{"a": [' + ", ".join(["[1, 2]"] * 80) + ", " + tail + "]}").encode()


@pytest.mark.parametrize("tail", ['{"b": [123456789012345678901234, 1.5e30, 2]}', '"x"', "NaN", "[1e400]"])
def test_an_export_line_reads_the_same_with_and_without_orjson(tail: str, monkeypatch: pytest.MonkeyPatch) -> None:
    line = _line(tail)
    fast = repr(load_line(line, "f"))
    monkeypatch.setattr(_fast_json, "loads_fast", json.loads)
    assert repr(load_line(line, "f")) == fast == repr(json.loads(line))


def test_the_depth_limit_holds_on_both_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    deep = _line("[" * 200 + "]" * 200)
    with pytest.raises(InputLimitError, match="deeper"):
        load_line(deep, "f")
    monkeypatch.setattr(_fast_json, "loads_fast", json.loads)
    with pytest.raises(InputLimitError, match="deeper"):
        load_line(deep, "f")
    monkeypatch.setattr(_fast_json, "loads", json.loads)
    assert parse_json_text("[" * 200 + "]" * 200) == "[" * 200 + "]" * 200  # too deep: kept as the text


def test_attribute_json_text_parses_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = ['{"role": "user", "n": 99999999999999999999999}', "[1, 2", "NaN", '"é"', "12"]
    fast = [repr(parse_json_text(text)) for text in texts]
    monkeypatch.setattr(_fast_json, "loads", json.loads)
    assert [repr(parse_json_text(text)) for text in texts] == fast


EDGES = [2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63), -(2**63) - 1, -(10**19) + 1, -(10**19), -(2**64) - 1, 10**18]


@settings(max_examples=150, deadline=None)
@given(number=st.one_of(st.sampled_from(EDGES), st.integers(min_value=-(2**70), max_value=2**70)))
def test_every_integer_reads_exactly_short_text_or_export_line(number: int) -> None:
    text = json.dumps({"amount": number, "list": [number, {"n": number}]})
    assert _answer(_fast_json.loads, text) == _answer(json.loads, text)
    assert repr(parse_json_text(text)) == repr(json.loads(text))
    line = _line(json.dumps({"amount": number}))
    assert repr(load_line(line, "f")) == repr(json.loads(line))
