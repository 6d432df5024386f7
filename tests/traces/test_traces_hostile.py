"""Hostile and malformed exports: counted and skipped, never a crash, within the input limits."""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from otel_exports import genai_agent, record, to_otlp_json

from jurybox.traces import ReadStats, Span, contexts_of_trace, read_traces, spans_from_json_bytes

EXAMPLES = int(os.environ.get("TRACES_EXAMPLES", "60"))
"""Examples per generated test (TRACES_EXAMPLES=600 for a longer hunt)."""
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=30,
)


def _valid_request() -> dict[str, Any]:
    return to_otlp_json(encode_spans(record(genai_agent)))


def _read(path: Path, **options: Any) -> tuple[list[Any], ReadStats]:
    stats = ReadStats()
    return list(read_traces(path, stats=stats, **options)), stats


@SETTINGS
@given(st.binary(max_size=2000))
def test_any_bytes_are_read_without_a_crash(tmp_path: Path, data: bytes) -> None:
    for name in ("x.jsonl", "x.pb", "x.bin"):
        path = tmp_path / name
        path.write_bytes(data)
        _read(path)


@SETTINGS
@given(json_values)
def test_any_json_line_is_read_without_a_crash(tmp_path: Path, value: Any) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text(json.dumps(value) + "\n" + json.dumps({"resourceSpans": value}) + "\n")
    _read(path)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


@SETTINGS
@given(st.data())
def test_a_real_export_with_one_field_replaced_is_read_without_a_crash(tmp_path: Path, data: st.DataObject) -> None:
    request = _valid_request()
    where = data.draw(st.sampled_from(_paths(request)[1:]))
    target: Any = request
    for part in where[:-1]:
        target = target[part]
    target[where[-1]] = data.draw(json_values)
    path = tmp_path / "x.jsonl"
    path.write_text(json.dumps(request) + "\n")
    contexts, _ = _read(path)
    assert len(contexts) <= 4  # a span lost to the change leaves its children as roots of their own


def test_a_bad_line_is_counted_and_the_next_lines_are_read(tmp_path: Path) -> None:
    good = json.dumps(_valid_request())
    path = tmp_path / "x.jsonl"
    path.write_text(
        good + "\n{not json\n" + "[" * 5000 + "]" * 5000 + "\n" + good.replace("invoke_agent travel", "x") + "\n"
    )
    contexts, stats = _read(path)
    assert len(contexts) == 1  # the last line repeats the trace's ids: its spans come after it was complete
    assert stats.skipped["malformed line"] == 1
    assert stats.skipped["line over the input limits"] == 1
    assert any(":2: not JSON" in problem for problem in stats.problems)


def test_an_oversized_line_is_skipped_without_being_held(tmp_path: Path) -> None:
    good = json.dumps(_valid_request())
    path = tmp_path / "x.jsonl"
    path.write_text('{"resourceSpans": [' + " " * 5000 + "]}\n" + good + "\n")
    stats = ReadStats()
    from jurybox.traces._otlp_json import read_json_lines  # the line limit is a parameter for this test

    with path.open("rb") as handle:
        spans = list(read_json_lines(handle, stats, str(path), max_line_bytes=len(good) + 10))
    assert stats.skipped["oversized line"] == 1 and len(spans) == 4


def test_a_pretty_printed_request_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text(json.dumps(_valid_request(), indent=2))
    contexts, _ = _read(path)
    assert len(contexts) == 1


def test_protobuf_json_with_base64_ids_is_read(tmp_path: Path) -> None:
    from google.protobuf.json_format import MessageToJson

    path = tmp_path / "x.json"
    path.write_text(MessageToJson(encode_spans(record(genai_agent)), indent=None) + "\n")
    contexts, _ = _read(path)
    assert contexts[0].tool_calls[0].name == "search_hotels"


def test_a_cut_protobuf_stream_keeps_what_came_before(tmp_path: Path) -> None:
    body = encode_spans(record(genai_agent)).SerializeToString()
    path = tmp_path / "x.pb"
    path.write_bytes(struct.pack(">I", len(body)) + body + struct.pack(">I", len(body)) + body[:10])
    contexts, stats = _read(path)
    assert len(contexts) == 1 and stats.skipped["malformed message"] == 1


def _span(span_id: int, parent: int | None, **attributes: Any) -> Span:
    return Span(
        "a" * 32,
        f"{span_id:016x}",
        f"{parent:016x}" if parent is not None else None,
        f"s{span_id}",
        span_id,
        span_id + 1,
        attributes,
    )


def test_a_very_deep_trace_is_walked_without_recursion() -> None:
    spans = [_span(1, None, **{"gen_ai.operation.name": "invoke_agent", "input.value": "hi", "output.value": "yo"})]
    spans += [
        _span(i, i - 1, **{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t"}) for i in range(2, 20_000)
    ]
    [context] = contexts_of_trace(spans)
    assert len(context.tool_calls) == 19_998


def test_a_parent_cycle_is_counted_not_looped() -> None:
    stats = ReadStats()
    spans = [_span(1, 2, **{"gen_ai.operation.name": "chat"}), _span(2, 1, **{"gen_ai.operation.name": "chat"})]
    assert contexts_of_trace(spans, stats) == []
    assert stats.skipped["trace with no root span (its parent ids form a cycle)"] == 1


def test_a_request_body_over_the_depth_limit_is_refused() -> None:
    try:
        spans_from_json_bytes(b"[" * 1000 + b"]" * 1000, ReadStats())
    except ValueError as exc:
        assert "refused" in str(exc)
    else:
        raise AssertionError("a 1000-deep body was accepted")


def test_times_past_what_a_datetime_holds_are_dropped_not_raised() -> None:
    attributes = {"gen_ai.operation.name": "invoke_agent", "input.value": "hi", "output.value": "yo"}
    span = Span("b" * 32, "1" * 16, None, "agent", 10**30, 10**31, attributes)
    [context] = contexts_of_trace([span])
    assert context.started_at is None and context.output == "yo"


KNOWN_KEYS = [
    "gen_ai.operation.name",
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
    "gen_ai.tool.name",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "gen_ai.tool.call.id",
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens",
    "gen_ai.request.model",
    "openinference.span.kind",
    "llm.input_messages.0.message.role",
    "llm.input_messages.0.message.content",
    "llm.output_messages.0.message.tool_calls.0.tool_call.function.name",
    "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments",
    "llm.token_count.prompt",
    "tool.name",
    "input.value",
    "output.value",
    "gen_ai.prompt.0.content",
    "gen_ai.completion.0.tool_calls.0.name",
    "error.type",
    "final_result",
    "tool_arguments",
]
attribute_values = (
    json_values
    | json_values.map(json.dumps)
    | st.sampled_from(["invoke_agent", "execute_tool", "chat", "AGENT", "TOOL", "LLM", "CHAIN"])
)


@SETTINGS
@given(
    st.lists(
        st.tuples(
            st.integers(0, 6),
            st.one_of(st.none(), st.integers(0, 6)),
            st.dictionaries(st.sampled_from(KNOWN_KEYS), attribute_values, max_size=6),
            st.sampled_from(["unset", "ok", "error"]),
        ),
        max_size=8,
    )
)
def test_any_spans_of_known_attributes_become_contexts_or_counts(spans: list[Any]) -> None:
    trace = [
        Span(
            "c" * 32,
            f"{index + 1:016x}",
            None if parent is None else f"{parent + 1:016x}",
            "s",
            1,
            2,
            attrs,
            status=status,
        )
        for index, (_, parent, attrs, status) in enumerate(spans)
    ]
    for context in contexts_of_trace(trace):
        assert isinstance(context.input, str) and isinstance(context.output, str)
