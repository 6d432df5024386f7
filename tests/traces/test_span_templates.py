"""Over OTLP/HTTP a judgment's span is packed into its template's bytes: the bytes ``span_bytes`` writes.

The records path (an SDK exporter given) is compared with the SDK's own encoder in
test_otlp_exporter.py; here the direct path must give the same bytes as the records path,
span for span, for any verdict tree, with the same ids.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from otel_exports import Keep

import jurybox.traces._exporter as exporter_module
from jurybox.core import CaseRecord, Judgment, Status
from jurybox.traces._exporter import OtlpExporter  # the module under test
from jurybox.traces._otlp_encode import SpanRecord, SpanTemplate, span_bytes

texts = st.text(st.characters(codec="utf-8"), max_size=12) | st.sampled_from(["found 'EUR'", "x" * 300, "é\x00"])
scores = st.none() | st.sampled_from([0.0, -0.0, 1.0, 0.25]) | st.floats(0, 1)
counts = st.none() | st.integers(0, 10**6) | st.booleans()
# Texts many cases share, so that verdicts meet the exporter's remembered bytes under keys that compare
# equal (0.0 and -0.0, 1 and True) and must still get their own bytes.
shared = st.sampled_from(["same", ""])


@st.composite
def judgments(draw: st.DrawFn, depth: int = 0) -> Judgment:
    status = draw(st.sampled_from(list(Status)))
    metadata: dict[str, Any] = {}
    children = {}
    if depth < 2 and draw(st.booleans()):
        for index in range(draw(st.integers(1, 3))):
            children[f"{draw(texts)}{index}"] = draw(judgments(depth + 1))
    elif draw(st.booleans()):
        metadata = {
            "model": draw(st.sampled_from(["openai:gpt-4o-mini", "fake:m", "ü"])),
            "tokens": {"input": draw(counts), "output": draw(counts)},
            "latency": draw(st.none() | st.floats(0, 5)),
            "attempts": draw(st.none() | st.integers(1, 3)),
            "cached": draw(st.none() | st.booleans()),
        }
    return Judgment(
        status,
        draw(scores),
        draw(shared | texts),
        judge=draw(st.none() | texts),
        decided_by=draw(st.none() | shared | texts),
        degraded=draw(st.booleans() | st.sampled_from([0, 1])),  # 1 == True: other bytes, another cache entry
        metadata=metadata,
        children=children,
    )


hex_ids = st.sampled_from(["0" * 32, "f" * 32, "1" * 31 + "2", "zz", "ab" * 8]) | st.text(
    "0123456789abcdef", max_size=33
)


@st.composite
def case_extras(draw: st.DrawFn) -> dict[str, Any]:
    """What a case span says of the case but its verdict: tokens, an error, the trace it judged."""
    metadata: dict[str, Any] = {}
    if draw(st.booleans()):  # judged from a trace: a link to it (when the ids are valid), the trace id
        metadata = {"trace_id": draw(hex_ids), "span_id": draw(hex_ids | st.none()), "source": "trace"}
    return {
        "tokens": draw(st.none() | st.integers(0, 10**7)),
        "error": draw(st.none() | texts),
        "metadata": metadata,
        "started_at": draw(st.none() | st.just(datetime(2026, 11, 27, tzinfo=UTC))),
    }


@settings(max_examples=120, deadline=None)
@given(
    verdicts=st.lists(st.tuples(judgments(), case_extras()), min_size=1, max_size=8),
    seed=st.integers(0, 2**32),
)
def test_the_direct_bytes_are_the_records_bytes(verdicts: list[tuple[Judgment, dict[str, Any]]], seed: int) -> None:
    records = []
    for i, (judgment, extras) in enumerate(verdicts):
        started = extras.pop("started_at")
        if started is not None:
            started += timedelta(seconds=i)
        records.append(CaseRecord(f"c{i}", judgment, started_at=started, duration=1.5, **extras))
    assert_same_bytes_both_ways(records, seed)


@pytest.mark.parametrize(
    ("first", "then"),
    [
        ({"degraded": True}, {"degraded": 1}),
        ({"score": 0.0}, {"score": -0.0}),
        ({"score": None}, {"score": 0.0}),
        ({"decided_by": None}, {"decided_by": "same"}),
        ({"reasoning": "x" * 250}, {"reasoning": "x" * 250 + "y"}),
    ],
)
def test_look_alike_verdicts_get_their_own_bytes(first: dict[str, Any], then: dict[str, Any]) -> None:
    """Values that compare equal (1 and True, 0.0 and -0.0) are written differently: never the remembered bytes."""
    base: dict[str, Any] = {"status": Status.PASS, "score": 1.0, "reasoning": "same"}
    started = datetime(2026, 11, 27, tzinfo=UTC)
    records = [
        CaseRecord(f"c{i}", Judgment(**(base | values)), started_at=started, duration=1.5)
        for i, values in enumerate([first, then, first])
    ]
    assert_same_bytes_both_ways(records, 7)


def assert_same_bytes_both_ways(records: list[CaseRecord], seed: int) -> None:
    """The direct path writes, span for span, the bytes ``span_bytes`` writes of the records path's spans."""
    direct = OtlpExporter("http://127.0.0.1:9/v1/traces")
    assert direct._direct
    sent: list[bytes] = []
    direct._add_bytes = sent.append  # type: ignore[method-assign]
    direct._add = lambda span: sent.append(span_bytes(span))  # type: ignore[method-assign]
    written: list[SpanRecord] = []
    records_path = OtlpExporter(span_exporter=Keep())
    records_path._add = written.append  # type: ignore[method-assign]
    for exporter in (direct, records_path):
        random.seed(seed)  # the same ids both ways
        run = exporter.start_run("r", start_ns=1)
        # The same clock both ways: a case with no start, or judged from a trace, ends when it is exported.
        with patch.object(exporter_module.time, "time", lambda: 1_800_000_000.0):
            for record in records:
                exporter.export_record(record, run)
        assert exporter.cases == len(records)
    direct.close()
    records_path.close()
    assert sent == [span_bytes(span) for span in written]


@given(name=texts, bodies=st.lists(st.binary(max_size=200), max_size=4), event=st.none() | texts)
def test_a_template_packs_what_span_bytes_writes(name: str, bodies: list[bytes], event: str | None) -> None:
    values = {"k": 1}  # the event's attributes are the span's own: written from the same bodies
    events = () if event is None else ((event, 7_000, values),)
    span = SpanRecord(2**100 + 3, 2**60 + 5, 9, name, 6_000, 7_000, values, events, bodies=bodies)
    assert SpanTemplate(name, bodies, event).span(2**100 + 3, 2**60 + 5, 9, 6_000, 7_000) == span_bytes(span)
