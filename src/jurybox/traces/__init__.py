"""Traces in: OpenTelemetry trace exports read into Contexts every judge can judge.

``read_traces(path)`` reads an OTLP export (OTLP/JSON, one export request a line as
the Collector's file exporter writes it, or OTLP protobuf) and yields one Context per
top-level agent span (or per trace when no span is an agent): the user's input, the
final output, every tool call with its arguments and result, the model calls' messages
and token usage, timings and errors. Spans written under the OpenTelemetry GenAI
semantic conventions and under OpenInference are both read; a span of no known shape
is counted in ``ReadStats`` and left out, never an error.
"""

from jurybox.core import KIND_EXPORTER, PluginRegistry
from jurybox.traces._contexts import contexts_of_trace
from jurybox.traces._conventions import AGENT, MODEL, OTHER, TOOL, role_of
from jurybox.traces._endpoint import ENDPOINT_VARIABLES, traces_endpoint
from jurybox.traces._judge import ajudge_contexts, case_name, judge_context, judge_traces, trace_cascade
from jurybox.traces._otlp_json import MAX_LINE_BYTES, spans_from_json_bytes
from jurybox.traces._otlp_proto import MAX_MESSAGE_BYTES, ProtobufUnavailableError, spans_from_proto_bytes
from jurybox.traces._read import TraceAssembler, contexts_from_spans, read_spans, read_traces
from jurybox.traces._sampling import Sampler, by_trace, span_from_dict, span_to_dict
from jurybox.traces._sdk import span_from_sdk, spans_from_sdk
from jurybox.traces._spans import ReadStats, Span, SpanEvent

PluginRegistry.default().register(
    KIND_EXPORTER,
    "otlp",
    "jurybox.traces._exporter:OtlpExporter",
    aliases=("otel", "opentelemetry"),
    summary="runs, cases and judgments as OpenTelemetry spans over OTLP/HTTP (GenAI evaluation attributes)",
    extra="otel",
    requires=("opentelemetry.sdk", "opentelemetry.exporter.otlp.proto.http"),
)

__all__ = [
    "AGENT",
    "ENDPOINT_VARIABLES",
    "MAX_LINE_BYTES",
    "MAX_MESSAGE_BYTES",
    "MODEL",
    "OTHER",
    "TOOL",
    "ProtobufUnavailableError",
    "ReadStats",
    "Sampler",
    "Span",
    "SpanEvent",
    "TraceAssembler",
    "ajudge_contexts",
    "by_trace",
    "case_name",
    "contexts_from_spans",
    "contexts_of_trace",
    "judge_context",
    "judge_traces",
    "read_spans",
    "read_traces",
    "role_of",
    "span_from_dict",
    "span_from_sdk",
    "span_to_dict",
    "spans_from_json_bytes",
    "spans_from_proto_bytes",
    "spans_from_sdk",
    "trace_cascade",
    "traces_endpoint",
]
