"""A request body's bytes: written around a kept schema's text, equal to json.dumps of the whole body."""

from __future__ import annotations

import json
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jurybox.models._openai_wire import _json_default, encode_body, schema_format


def dumped(body: dict[str, Any]) -> bytes:
    """What the SDK's encoder settings give for ``body`` (json.dumps, built per call)."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=_json_default).encode()


SCHEMA = MappingProxyType(
    {
        "title": "Score Verdict",
        "type": "object",
        "properties": {"score": {"type": "number", "minimum": 0.0, "maximum": 1.0}, "reasoning": {"type": "string"}},
        "required": ["score", "reasoning"],
    }
)
texts = st.text(max_size=40)
values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)


@given(
    before=st.dictionaries(texts.filter(lambda key: key != "response_format"), values, max_size=4),
    after=st.dictionaries(texts.filter(lambda key: key != "response_format"), values, max_size=4),
)
def test_a_kept_schema_is_written_where_the_body_has_it(before: dict[str, Any], after: dict[str, Any]) -> None:
    response_format = {"type": "json_schema", "json_schema": schema_format(SCHEMA)}
    body = {**before, "response_format": response_format, **{k: v for k, v in after.items() if k not in before}}
    assert encode_body(body) == dumped(body)


@pytest.mark.parametrize(
    "response_format",
    [
        {"type": "json_object"},
        {"json_schema": "x", "type": "json_schema"},  # another order: encoded as it is
        {"type": "json_schema", "json_schema": {"name": "a", "schema": {}, "strict": False}},  # not a kept format
        {"type": "json_schema", "json_schema": None, "extra": 1},
    ],
)
def test_other_response_formats_are_encoded_whole(response_format: dict[str, Any]) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": 'say "é"\n'}], "response_format": response_format}
    assert encode_body(body) == dumped(body)


def test_a_refused_value_is_refused_as_json_dumps_refuses_it() -> None:
    body = {
        "model": "m",
        "temperature": float("nan"),
        "response_format": {"type": "json_schema", "json_schema": schema_format(SCHEMA)},
    }
    with pytest.raises(ValueError):
        dumped(body)
    with pytest.raises(ValueError):
        encode_body(body)
    with pytest.raises(TypeError, match="cannot send a object"):
        encode_body({"model": object()})
