"""Judgments out: run, case and judgment spans sent over OTLP/HTTP to a local receiver."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from otel_exports import Keep, genai_agent, openinference_agent, record, write_json_lines
from otlp_receiver import otlp_receiver
from typer.testing import CliRunner

from jurybox.cli import app
from jurybox.core import KIND_EXPORTER, PluginRegistry
from jurybox.judges import contains, tool_calls
from jurybox.llm import relevance
from jurybox.models import FakeModel
from jurybox.traces import judge_traces, traces_endpoint
from jurybox.traces._exporter import OtlpExporter  # the module under test


@pytest.fixture
def export(tmp_path: Path) -> Path:
    spans = record(genai_agent, functools.partial(genai_agent, city="Rome"), openinference_agent)
    return write_json_lines(tmp_path / "traces.jsonl", [spans])


def test_judgments_carry_the_genai_evaluation_attributes_and_link_to_the_judged_span(export: Path) -> None:
    model = FakeModel('{"relevant": true, "confidence": 0.9, "reasoning": "answers it"}')
    records = judge_traces(export, [tool_calls(["search_hotels"]), relevance(model=model)])
    exporter_class = PluginRegistry.default().load(KIND_EXPORTER, "otlp")
    with otlp_receiver() as (url, received):
        exporter = exporter_class(url)
        exporter.export_records(records, run_name="ci")
        exporter.close()
    spans = received.spans()
    by_name = {span.name: (span, attrs) for span, attrs in spans}
    run, _ = by_name["jurybox run ci"]
    cases = [(s, a) for s, a in spans if s.name.startswith("jurybox case")]
    assert len(cases) == 3 and all(s.parent_span_id == run.span_id for s, _ in cases)
    evaluations = [(s, a) for s, a in spans if "gen_ai.evaluation.name" in a]
    labels = {(a["gen_ai.evaluation.name"], a["gen_ai.evaluation.score.label"]) for _, a in evaluations}
    assert ("relevance", "pass") in labels
    assert any(name.startswith("tool_calls") and label == "fail" for name, label in labels)
    judged = {record.metadata["span_id"] for record in records}
    for span, _ in cases:
        [link] = span.links
        assert link.span_id.hex() in judged  # each case links to the agent span it judged
    calls = [(s, a) for s, a in spans if a.get("gen_ai.operation.name") == "chat"]
    assert len(calls) == 2 and all(a["gen_ai.request.model"] == "fake:model" for _, a in calls)
    evaluation_ids = {s.span_id for s, a in evaluations if a["gen_ai.evaluation.name"] == "relevance"}
    assert all(s.parent_span_id in evaluation_ids for s, _ in calls)
    assert all(any(e.name == "gen_ai.evaluation.result" for e in s.events) for s, _ in evaluations)


def test_the_command_exports_to_the_endpoint(tmp_path: Path, export: Path) -> None:
    judges = tmp_path / "judges.yaml"
    judges.write_text("judges:\n  - contains: {text: EUR}\n")
    with otlp_receiver() as (url, received):
        result = CliRunner().invoke(app, ["judge-traces", str(export), "--judges", str(judges), "--otel-endpoint", url])
        assert result.exit_code == 1, result.output
        names = [span.name for span, _ in received.spans()]
    assert sum(name.startswith("jurybox case") for name in names) == 3
    assert any(name.startswith("jurybox run") for name in names)


def test_the_endpoint_comes_from_the_standard_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    assert traces_endpoint() == "http://127.0.0.1:4318/v1/traces"
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://collector:9999/custom")
    assert traces_endpoint() == "http://collector:9999/custom"
    assert traces_endpoint("http://h:1/v1/traces") == "http://h:1/v1/traces"
    with pytest.raises(ValueError, match="http"):
        traces_endpoint("ftp://nowhere")


def test_without_an_endpoint_the_exporter_says_how_to_give_one(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ValueError, match="--otel-endpoint"):
        OtlpExporter()


def test_a_deterministic_only_run_sends_no_model_call_spans(export: Path) -> None:
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    memory = InMemorySpanExporter()
    exporter = OtlpExporter(span_exporter=memory)
    exporter.export_records(judge_traces(export, [contains("EUR")]), run_name="x")
    exporter.close()
    spans = memory.get_finished_spans()
    assert not [s for s in spans if (s.attributes or {}).get("gen_ai.operation.name") == "chat"]
    assert {s.attributes["gen_ai.evaluation.score.label"] for s in spans if s.name.startswith("evaluation")} == {
        "pass",
        "fail",
    }


def test_jurybox_run_exports_each_suite_run(tmp_path: Path) -> None:
    here = Path(__file__).parent
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        f"""
name: exported
agent: {{python: "{here / "otel_agent.py"}:respond", capture: otel}}
cases:
  - name: lisbon
    prompt: "A hotel in Lisbon?"
    expect_tools: {{calls: [search_hotels]}}
    judges: [{{contains: {{text: EUR}}}}]
"""
    )
    with otlp_receiver() as (url, received):
        result = CliRunner().invoke(app, ["run", str(suite), "--no-store", "--otel-endpoint", url])
        assert result.exit_code == 0, result.output
        spans = received.spans()
    names = [span.name for span, _ in spans]
    assert "jurybox run exported" in names and "jurybox case lisbon" in names
    assert {a["gen_ai.evaluation.score.label"] for _, a in spans if "gen_ai.evaluation.name" in a} == {"pass"}


def test_a_bad_endpoint_is_a_usage_error_before_the_run(tmp_path: Path, export: Path) -> None:
    judges = tmp_path / "judges.yaml"
    judges.write_text("judges:\n  - contains: {text: EUR}\n")
    result = CliRunner().invoke(app, ["judge-traces", str(export), "--judges", str(judges), "--otel-endpoint", "nope"])
    assert result.exit_code == 2 and "http(s) URL" in result.output


def test_a_big_run_drops_no_span() -> None:
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from jurybox.core import CaseRecord, Judgment

    judged = Judgment.passed(
        1.0, "ok", judge="case", children={"contains": Judgment.passed(1.0, "found", judge="contains")}
    )
    records = [CaseRecord(case=f"case {i}", judgment=judged) for i in range(6000)]
    memory = InMemorySpanExporter()
    exporter = OtlpExporter(span_exporter=memory)
    exporter.export_records(records, run_name="big")
    exporter.close()
    assert len(memory.get_finished_spans()) == 1 + 6000 * 2  # the run, each case and its one judge


def test_the_spans_written_directly_are_the_bytes_the_sdk_encoder_writes() -> None:
    import datetime

    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    from jurybox.core import CaseRecord, Judgment
    from jurybox.traces._exporter import SCOPE
    from jurybox.traces._otlp_encode import SpanRecord, export_request, span_bytes

    call = {"model": "m", "tokens": {"input": 3, "output": -4}, "latency": 0.5, "cached": True, "attempts": 2}
    judged = Judgment.passed(
        0.75,
        "ok é \x00",
        judge="case",
        children={"contains": Judgment.errored("x" * 5000, judge="contains", metadata=call)},
    )
    started = datetime.datetime.now(datetime.UTC)
    records = [
        CaseRecord(case=f"case {i}", judgment=judged, metadata={"trace_id": "ab" * 16, "span_id": "cd" * 8})
        for i in range(2)
    ] + [CaseRecord(case="later", judgment=judged, started_at=started, duration=1.5)]
    keep = Keep()
    exporter = OtlpExporter(span_exporter=keep)
    written: list[SpanRecord] = []
    add = exporter._add
    exporter._add = lambda span: (written.append(span), add(span))  # type: ignore[method-assign]
    exporter.export_records(records, run_name="r", run_id="id1")
    exporter.close()
    mine = ExportTraceServiceRequest()
    mine.ParseFromString(export_request(exporter._resource_attributes, SCOPE, written))
    assert len(written) == 1 + 3 * 3
    assert MessageToDict(mine) == MessageToDict(encode_spans(keep.spans))  # type: ignore[arg-type]
    # what the OTLP/HTTP path sends: each span's bytes written as it ends
    assert export_request(exporter._resource_attributes, SCOPE, [span_bytes(s) for s in written]) == (
        export_request(exporter._resource_attributes, SCOPE, written)
    )


def test_a_repeated_judgment_reuses_its_bytes_and_they_stay_the_sdk_encoders() -> None:
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    from jurybox.core import CaseRecord, Judgment
    from jurybox.traces._exporter import SCOPE
    from jurybox.traces._otlp_encode import SpanRecord, export_request

    def case(score: float) -> Judgment:  # the same short explanation each time: remembered after the first
        child = Judgment.failed(score, "found nothing", judge="contains")
        return Judgment.failed(score, "no", judge="case", children={"contains": child})

    records = [CaseRecord(case=f"c{i}", judgment=case(score)) for i, score in enumerate([0.0, 0.0, -0.0, 0.25, 0.0])]
    keep = Keep()
    exporter = OtlpExporter(span_exporter=keep)
    written: list[SpanRecord] = []
    add = exporter._add
    exporter._add = lambda span: (written.append(span), add(span))  # type: ignore[method-assign]
    exporter.export_records(records, run_name="r")
    exporter.close()
    judged = [span for span in written if span.name == "evaluation contains"]
    assert judged[0].bodies is judged[1].bodies is judged[4].bodies  # reused
    assert judged[2].bodies is not judged[0].bodies  # -0.0 is written with its sign
    mine = ExportTraceServiceRequest()
    mine.ParseFromString(export_request(exporter._resource_attributes, SCOPE, written))
    assert MessageToDict(mine) == MessageToDict(encode_spans(keep.spans))  # type: ignore[arg-type]


def test_a_run_whose_start_is_known_is_read_once_and_its_span_starts_then() -> None:
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from jurybox.core import CaseRecord, Judgment

    class ReadOnce(list[CaseRecord]):  # a store's lazy records: each pass decodes them all again
        passes = 0

        def __iter__(self):  # type: ignore[no-untyped-def]
            ReadOnce.passes += 1
            return super().__iter__()

    records = ReadOnce(CaseRecord(case=f"c{i}", judgment=Judgment.passed(1.0, "ok", judge="j")) for i in range(3))
    memory = InMemorySpanExporter()
    exporter = OtlpExporter(span_exporter=memory)
    exporter.export_records(records, run_name="r", run_id="id1", start_ns=1_700_000_000_000_000_000)
    exporter.close()
    assert ReadOnce.passes == 1
    [run] = [span for span in memory.get_finished_spans() if span.name == "jurybox run r"]
    assert run.start_time == 1_700_000_000_000_000_000 and run.attributes["jurybox.run.cases"] == 3
