"""Attribute bytes written by the exporter's encoder equal opentelemetry-proto's, whatever came before them.

The encoder remembers short attributes by ``(key, value)``; values that are equal in Python
but differ on the wire (``1`` and ``True``, ``(1,)`` and ``(True,)``, ``0.0`` and ``-0.0``)
must never share bytes.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.exporter.otlp.proto.common._internal import _encode_attributes
from opentelemetry.proto.common.v1.common_pb2 import KeyValue

from jurybox.traces._otlp_encode import attribute_bodies

SCALARS = st.one_of(
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.sampled_from([0.0, -0.0, 1.0, 0.5, -2.5]),
    st.floats(allow_nan=False, width=64),
    st.text(max_size=12),
)
# Arrays of one type only: the SDK drops a mixed one before any encoder sees it, and so does this one.
ARRAYS = st.one_of(
    st.lists(st.sampled_from([0, 1, 2]), max_size=3),
    st.lists(st.booleans(), max_size=3),
    st.lists(st.sampled_from([0.0, -0.0, 1.0]), max_size=3),
).map(tuple)
VALUES = st.one_of(SCALARS, ARRAYS)


def _decoded(values: dict[str, Any]) -> list[KeyValue]:
    found = []
    for body in attribute_bodies(values):
        length, start = _varint(body)
        assert start + length == len(body)
        found.append(KeyValue.FromString(body[start:]))
    return found


def _varint(data: bytes) -> tuple[int, int]:
    value = shift = 0
    for index, byte in enumerate(data):
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, index + 1
    raise AssertionError("unterminated length")


@settings(max_examples=200, deadline=None)
@given(st.lists(VALUES, min_size=1, max_size=8))
def test_equal_looking_values_in_turn_each_get_their_own_bytes(values: list[Any]) -> None:
    for value in values:
        assert _decoded({"k": value}) == list(_encode_attributes({"k": value}))


def test_the_listed_look_alikes() -> None:
    for first, second in (((1,), (True,)), (0.0, -0.0), (1, True), (1, 1.0), ((0,), (False,))):
        for value in (first, second, first):
            assert _decoded({"k": value}) == list(_encode_attributes({"k": value})), value
