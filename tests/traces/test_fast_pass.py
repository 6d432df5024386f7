"""The one-pass reader of usual export lines answers what the careful reader answers, limits included.

Every line is read twice: as it is (the fast pass takes what it recognises) and with the fast pass
switched off (the careful reader: depth walk, then field-by-field conversion). Spans, counts, problems
and the Contexts built from them must be the same, and a line nested past the depth limit anywhere
must be refused by both.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jurybox.core import MAX_INPUT_DEPTH
from jurybox.traces import ReadStats, Span, _otlp_json, _otlp_json_fast, contexts_from_spans

EXAMPLES = int(os.environ.get("TRACES_EXAMPLES", "200"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

json_leaves = (
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=8)
)
json_values = st.recursive(
    json_leaves,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=12,
)
KEYS = ["gen_ai.operation.name", "gen_ai.input.messages", "gen_ai.tool.name", "input.value", "output.value", "k"]
TEXTS = ["chat", "execute_tool", "invoke_agent", "AGENT", "TOOL", '[{"role": "user", "content": "hi"}]', "é", ""]


def _usual_values() -> st.SearchStrategy[Any]:
    """AnyValues as exporters write them (the fast pass takes every one)."""
    scalar = st.one_of(
        st.builds(lambda t: {"stringValue": t}, st.sampled_from(TEXTS) | st.text(max_size=10)),
        st.builds(
            lambda n: {"intValue": n}, st.integers(-(2**63), 2**63 - 1).map(str) | st.integers(-(2**63), 2**63 - 1)
        ),
        st.builds(lambda b: {"boolValue": b}, st.booleans()),
        st.builds(lambda f: {"doubleValue": f}, st.floats(-1e18, 1e18) | st.integers(-(2**40), 2**40)),
        st.builds(lambda t: {"bytesValue": t}, st.sampled_from(["AAEC", ""])),
    )
    return st.recursive(
        scalar,
        lambda inner: st.one_of(
            st.builds(lambda values: {"arrayValue": {"values": values}}, st.lists(inner, max_size=3)),
            st.builds(
                lambda pairs: {"kvlistValue": {"values": [{"key": k, "value": v} for k, v in pairs]}},
                st.lists(st.tuples(st.sampled_from(KEYS), inner), max_size=3),
            ),
        ),
        max_leaves=5,
    )


usual_attributes = st.lists(
    st.builds(lambda k, v: {"key": k, "value": v}, st.sampled_from(KEYS), _usual_values()), max_size=5
)
times = st.integers(0, 2**63).map(str) | st.integers(0, 2**63)
usual_events = st.fixed_dictionaries(
    {"name": st.sampled_from(["exception", "gen_ai.choice"]), "timeUnixNano": times},
    optional={"attributes": usual_attributes, "droppedAttributesCount": st.integers(0, 3)},
)
usual_spans = st.fixed_dictionaries(
    {
        "traceId": st.sampled_from(["0123456789abcdef0123456789abcdef", "fedcba98765432100123456789abcdef"]),
        "spanId": st.sampled_from([f"{n:016x}" for n in range(1, 6)]),
        "name": st.sampled_from(["invoke_agent travel", "chat gpt", "execute_tool search", ""]),
        "kind": st.integers(0, 5),
        "startTimeUnixNano": times,
        "endTimeUnixNano": times,
        "attributes": usual_attributes,
        "status": st.sampled_from([{}, {"code": 2, "message": "boom"}, {"code": "STATUS_CODE_OK"}, {"code": 1}]),
    },
    optional={
        "parentSpanId": st.sampled_from([f"{n:016x}" for n in range(0, 6)] + [""]),
        "events": st.lists(usual_events, max_size=2),
        "links": st.lists(
            st.fixed_dictionaries({"traceId": st.just("ab" * 16), "attributes": usual_attributes}), max_size=1
        ),
        "flags": st.integers(0, 512),
        "droppedAttributesCount": st.integers(0, 3),
    },
)
# What a hostile or odd exporter writes instead: each replaces one field of a usual span.
odd_values = st.one_of(
    st.sampled_from(["-3", -1, "1_0", " 7 ", "+5", 1.5, 2.0**64, True, None, "", {}, [], "0" * 16, "0" * 32]),
    json_values,
    st.sampled_from(["", "xyz", "0123456789ABCDEF", "ASNFZ4mrze8=", "ASNFZ4mrze8BI0VniavN7w==", " 7 ", "-3", "1_0"]),
    st.integers(-5, 2**70),
    st.floats(0, 1e20),
    st.builds(lambda v: [{"key": "k", "value": v}], json_values),
    st.builds(
        lambda k, v: [{"key": "k", "value": {k: v}}],
        st.sampled_from(["intValue", "boolValue", "string_value", "x"]),
        json_leaves,
    ),
    st.builds(lambda v: [{"key": "k", "value": {"stringValue": "x"}, "more": v}], json_leaves),
    st.builds(lambda v: [{"name": "e", "timeUnixNano": v}], json_leaves),
)
FIELDS = ["traceId", "spanId", "parentSpanId", "name", "kind", "startTimeUnixNano", "attributes", "status", "events"]
FIELDS += ["links", "trace_id", "start_time_unix_nano", "unknownField"]


@st.composite
def spans(draw: st.DrawFn) -> dict[str, Any]:
    span = draw(usual_spans)
    for _ in range(draw(st.integers(0, 2))):
        field = draw(st.sampled_from(FIELDS))
        if draw(st.booleans()):
            span[field] = draw(odd_values)
        else:
            span.pop(field, None)
    return span


requests = st.builds(
    lambda service, scope, span_list, extra: {
        "resourceSpans": [
            {
                "resource": {"attributes": [{"key": "service.name", "value": service}]},
                "scopeSpans": [{"scope": scope, "spans": span_list}],
                **extra,
            }
        ]
    },
    _usual_values() | json_values,
    st.just({"name": "tests"}) | json_values,
    st.lists(spans(), max_size=5),
    st.just({}) | st.just({"schemaUrl": "u"}) | json_values.map(lambda v: {"schemaUrl": v}),
)


def _read(line: bytes, *, fast: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[list[Span], ReadStats]:
    with monkeypatch.context() as patch:
        # Short lines go to read_json before either pass; this test wants both passes on every line.
        patch.setattr(_otlp_json, "_few_brackets_or_too_many_values", lambda line: False)
        if not fast:
            patch.setattr(_otlp_json, "fast_request_spans", lambda data: None)
        stats = ReadStats()
        found = list(_otlp_json.read_json_lines(io.BytesIO(line + b"\n"), stats, "x"))
    return found, stats


def _same_reading(line: bytes, monkeypatch: pytest.MonkeyPatch) -> list[Span]:
    fast, fast_stats = _read(line, fast=True, monkeypatch=monkeypatch)
    careful, careful_stats = _read(line, fast=False, monkeypatch=monkeypatch)
    assert repr(fast) == repr(careful)  # repr: a float and an int of one value differ, as they should
    assert fast_stats == careful_stats
    assert repr(contexts_from_spans(fast)) == repr(contexts_from_spans(careful))
    return fast


@SETTINGS
@given(data=requests)
def test_the_fast_pass_reads_any_request_as_the_careful_reader(data: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    _same_reading(json.dumps(data).encode(), monkeypatch)


def _usual_span(number: int, **extra: Any) -> dict[str, Any]:
    return {
        "traceId": "0123456789abcdef0123456789abcdef",
        "spanId": f"{number:016x}",
        **({"parentSpanId": "0000000000000001"} if number > 1 else {}),
        "name": "invoke_agent travel" if number == 1 else "execute_tool search",
        "kind": 1,
        "startTimeUnixNano": str(1_700_000_000_000_000_000 + number),
        "endTimeUnixNano": str(1_700_000_000_100_000_000 + number),
        "attributes": [
            {
                "key": "gen_ai.operation.name",
                "value": {"stringValue": "invoke_agent" if number == 1 else "execute_tool"},
            },
            {"key": "gen_ai.tool.name", "value": {"stringValue": "search"}},
            {"key": "input.value", "value": {"stringValue": "hi"}},
            {"key": "output.value", "value": {"stringValue": "yo"}},
            {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "12"}},
            {"key": "llm.score", "value": {"doubleValue": 0.5}},
            {"key": "tags", "value": {"arrayValue": {"values": [{"stringValue": "a"}, {"boolValue": True}]}}},
        ],
        "status": {},
        **extra,
    }


def _usual_line(**extra: Any) -> dict[str, Any]:
    spans = [_usual_span(n) for n in range(1, 4)] + [_usual_span(4, **extra)]
    return {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"spans": spans}]}]}


def test_a_usual_line_takes_the_fast_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    data = _usual_line(events=[{"name": "exception", "timeUnixNano": "5", "attributes": []}])
    assert _otlp_json_fast.fast_request_spans(data) is not None
    spans = _same_reading(json.dumps(data).encode(), monkeypatch)
    assert len(spans) == 4 and spans[0].attributes["tags"] == ["a", True]
    [context] = contexts_from_spans(spans)
    assert (context.input, context.output) == ("hi", "yo")


def _nested(levels: int) -> Any:
    value: Any = {"stringValue": "bottom"}
    for _ in range(levels):
        value = {"arrayValue": {"values": [value]}}
    return value


# Where a hostile value can sit: every place the fast pass does not convert field by field.
PLACES: dict[str, Callable[[Any], dict[str, Any]]] = {
    "attribute": lambda deep: {"attributes": [{"key": "k", "value": deep}]},
    "event attribute": lambda deep: {"events": [{"name": "e", "attributes": [{"key": "k", "value": deep}]}]},
    "unread span field": lambda deep: {"kind": [deep]},
    "links": lambda deep: {"links": [{"attributes": [{"key": "k", "value": deep}]}]},
    "status": lambda deep: {"status": {"message": [deep]}},
}


@pytest.mark.parametrize("place", sorted(PLACES))
def test_a_line_nested_past_the_limit_is_refused_on_both_paths(place: str, monkeypatch: pytest.MonkeyPatch) -> None:
    line = json.dumps(_usual_line(**PLACES[place](_nested(60)))).encode()  # three levels a nesting: 180 and more
    for fast in (True, False):
        spans, stats = _read(line, fast=fast, monkeypatch=monkeypatch)
        assert spans == [] and stats.skipped["line over the input limits"] == 1, (place, fast)
    shallow = json.dumps(_usual_line(**PLACES[place](_nested(3)))).encode()
    assert _same_reading(shallow, monkeypatch)


def _lists(levels: int) -> Any:
    value: Any = []
    for _ in range(levels - 1):
        value = [value]
    return value


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def _with_resource(data: dict[str, Any], deep: Any) -> dict[str, Any]:
    data["resourceSpans"][0]["resource"]["attributes"] = [{"key": "k", "value": {"arrayValue": {"values": deep}}}]
    return data


def _with_scope(data: dict[str, Any], deep: Any) -> dict[str, Any]:
    data["resourceSpans"][0]["scopeSpans"][0]["scope"] = {"name": "s", "attributes": deep}
    return data


# Each place nests a list of lists one level at a time, so the limit is found to the level.
EXACT_PLACES = {
    "attribute": lambda deep: _usual_line(attributes=[{"key": "k", "value": {"arrayValue": {"values": deep}}}]),
    "event attribute": lambda deep: _usual_line(
        events=[{"name": "e", "attributes": [{"key": "k", "value": {"kvlistValue": {"values": deep}}}]}]
    ),
    "unread span field": lambda deep: _usual_line(kind=deep),
    "links": lambda deep: _usual_line(links=deep),
    "resource": lambda deep: _with_resource(_usual_line(), deep),
    "scope": lambda deep: _with_scope(_usual_line(), deep),
}


@pytest.mark.parametrize("place", sorted(EXACT_PLACES))
def test_the_depth_limit_is_exact_on_both_paths(place: str, monkeypatch: pytest.MonkeyPatch) -> None:
    outcomes = set()
    for levels in range(80, 100):
        data = EXACT_PLACES[place](_lists(levels))
        within = _depth(data) <= MAX_INPUT_DEPTH
        outcomes.add(within)
        assert (_otlp_json_fast.fast_request_spans(data) is not None) == within, levels
        line = json.dumps(data).encode()
        if within:
            assert len(_same_reading(line, monkeypatch)) == 4, levels
        else:
            for fast in (True, False):
                spans, stats = _read(line, fast=fast, monkeypatch=monkeypatch)
                assert spans == [] and stats.skipped["line over the input limits"] == 1, (levels, fast)
    assert outcomes == {True, False}  # the range crosses the limit


def test_a_resource_or_scope_too_deep_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    deep = _nested(60)
    for change in ("resource", "scope"):
        data = _usual_line()
        entry = data["resourceSpans"][0]
        if change == "resource":
            entry["resource"]["attributes"] = [{"key": "service.name", "value": deep}]
        else:
            entry["scopeSpans"][0]["scope"] = {"attributes": [{"key": "k", "value": deep}]}
        for fast in (True, False):
            spans, stats = _read(json.dumps(data).encode(), fast=fast, monkeypatch=monkeypatch)
            assert spans == [] and stats.skipped["line over the input limits"] == 1, (change, fast)


def test_an_integer_past_64_bits_reads_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    line = json.dumps(_usual_line(attributes=[{"key": "n", "value": {"intValue": 2**64 + 1}}])).encode()
    spans = _same_reading(line, monkeypatch)
    assert spans[-1].attributes["n"] == 2**64 + 1


ODD_FIELDS = [
    *(("startTimeUnixNano", v) for v in ["-3", -1, "1_0", " 7 ", "+5", 1.5, True, None, "x", 2**64 + 1, "٣"]),
    *(("traceId", v) for v in ["0123456789ABCDEF0123456789ABCDEF", "ASNFZ4mrze8BI0VniavN7w==", "", 5, "00" * 16]),
    *(("parentSpanId", v) for v in ["", "0" * 16, "AAAAAAAAAAE=", 7, None]),
    *(("name", v) for v in [5, None, ["x"], ""]),
    *(("status", v) for v in [0, "", [], "x", {"code": True}, {"code": 2.0}, {"message": 5}, {"code": "ERROR"}]),
    *(("events", v) for v in [{}, [{"name": 5}], [{"timeUnixNano": "-1"}], [{"name": None}], [{"x": 1}]]),
    *(("attributes", [{"key": "k", "value": v}]) for v in [{"intValue": "x"}, {"intValue": True}, {"boolValue": 1}]),
    *(("attributes", [{"key": "k", "value": v}]) for v in [{"doubleValue": "1.5"}, {"doubleValue": 2**64}, {}]),
    *(("attributes", [{"key": "k", "value": v}]) for v in [{"stringValue": 5}, {"string_value": "x"}, 5]),
    *(("attributes", [v]) for v in [{"key": 5, "value": {"stringValue": "x"}}, ["k", "v"], "kv", {"key": "k"}]),
    ("attributes", {}),
    ("attributes", "x"),
    ("attributes", None),
]


@pytest.mark.parametrize(("field", "value"), ODD_FIELDS, ids=repr)
def test_an_odd_field_reads_as_the_careful_reader_reads_it(
    field: str, value: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _same_reading(json.dumps(_usual_line(**{field: value})).encode(), monkeypatch)


@pytest.mark.parametrize(
    "extra",
    [{}, {"attributes": [{"key": "n", "value": {"intValue": 2**64 + 1}}]}, {"events": [{"name": "e"}]}],
    ids=["usual", "integer past 64 bits", "event"],
)
def test_without_orjson_the_fast_pass_reads_the_same(extra: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    from jurybox.traces import _fast_json

    line = json.dumps(_usual_line(**extra)).encode()
    with_orjson = _same_reading(line, monkeypatch)
    monkeypatch.setattr(_fast_json, "loads_fast", json.loads)  # the standard library's parse, as without the extra
    assert _otlp_json_fast.fast_request_spans(json.loads(line)) is not None
    assert repr(_same_reading(line, monkeypatch)) == repr(with_orjson)
