"""Judgments out: runs, cases and judgments as OpenTelemetry spans, sent over OTLP/HTTP.

One trace per run: the run's span, a span per case under it, and under each case a span
per judge of its verdict tree carrying the GenAI evaluation attributes
(``gen_ai.evaluation.name``, ``gen_ai.evaluation.score.value``,
``gen_ai.evaluation.score.label``, ``gen_ai.evaluation.explanation``) and a
``gen_ai.evaluation.result`` event with the same. A case judged from a trace links to
the agent span it judged, so a tracing backend shows the verdict beside the trace. A
judge's model calls are child spans of its judgment with their token usage.

The exporter has its own tracer provider: it never changes the process's global one
(the agent under test may be sending its own spans elsewhere). Needs the ``otel`` extra.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

from jurybox.core import CaseRecord, Judgment
from jurybox.traces._endpoint import traces_endpoint

MAX_EXPLANATION_CHARS = 4_000
"""Explanation text a judgment span carries (the full reasoning stays in the store)."""
QUEUE_SPANS = 8192
"""Spans the batch processor holds; the exporter flushes at half of it."""
MAX_JUDGMENT_SPANS = 200
"""Judgment spans one case sends (a verdict tree bigger than this is cut, and the cut is counted)."""


SPAN_KINDS: dict[str, dict[str, str]] = {
    "run": {"openinference.span.kind": "CHAIN"},
    "case": {"openinference.span.kind": "CHAIN"},
    "evaluation": {"openinference.span.kind": "EVALUATOR"},
    "model": {"openinference.span.kind": "LLM"},
}
"""OpenInference span kinds, so Phoenix and the like show each span for what it is."""


def case_times(record: CaseRecord, moment: float) -> tuple[int, int]:
    """(start, end) of a case's span in ns: when it ran; a case judged from a trace, when it was judged.

    A trace's agent run happened before the judging (its own time stays an attribute), and a
    child span must not start before the run span it sits under.
    """
    started = record.started_at
    if started is None or record.metadata.get("source") == "trace":
        end = int(moment * 1e9)
        return end - int(record.duration * 1e9), end
    start = int(started.timestamp() * 1e9)
    return start, start + int(record.duration * 1e9)


class OtlpExporter:
    """Sends runs, cases and judgments as spans to an OTLP/HTTP endpoint.

    Args:
        endpoint: The collector's URL (``http://127.0.0.1:4318`` or its ``/v1/traces``); default
            from ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_ENDPOINT``.
        service_name: The ``service.name`` of the spans.
        headers: Extra HTTP headers (an API key for a hosted backend).
        span_exporter: Any SDK ``SpanExporter`` instead of OTLP/HTTP (a test's in-memory one).

    Raises:
        ValueError: no endpoint given or configured, or one that is not an http(s) URL.
        ImportError: the ``otel`` extra is not installed.
    """

    def __init__(
        self,
        endpoint: str | None = None,
        *,
        service_name: str = "jurybox",
        headers: Mapping[str, str] | None = None,
        span_exporter: Any = None,
    ) -> None:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        if span_exporter is None:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            url = traces_endpoint(endpoint)
            if url is None:
                raise ValueError("no OTLP endpoint: give --otel-endpoint URL or set OTEL_EXPORTER_OTLP_ENDPOINT")
            span_exporter = OTLPSpanExporter(endpoint=url, headers=dict(headers or {}))
            self.endpoint: str | None = url
        else:
            self.endpoint = None
        # Phoenix files spans by this resource attribute; other backends ignore it.
        resource = Resource.create({"service.name": service_name, "openinference.project.name": service_name})
        self._provider = TracerProvider(resource=resource)
        # Spans go out in batches from a background thread; the queue is emptied (force_flush) before it
        # fills, so a 10,000-case run drops none (a full queue drops spans silently).
        processor = BatchSpanProcessor(span_exporter, max_queue_size=QUEUE_SPANS, max_export_batch_size=512)
        self._provider.add_span_processor(processor)
        self._queued = 0
        self._tracer = self._provider.get_tracer("jurybox.exporter")
        self.cut_judgments = 0

    def start_run(
        self,
        name: str,
        *,
        run_id: str | None = None,
        attributes: Mapping[str, Any] | None = None,
        start_ns: int | None = None,
    ) -> Any:
        """Open a run's span (at ``start_ns``, default now); hand it to ``export_record`` and ``finish_run``."""
        values = {"jurybox.run.name": name, "jurybox.run.id": run_id, **SPAN_KINDS["run"], **(attributes or {})}
        return self._tracer.start_span(f"jurybox run {name}", attributes=_clean(values), start_time=start_ns)

    def finish_run(self, run: Any, *, passed: int | None = None, total: int | None = None) -> None:
        if passed is not None:
            run.set_attribute("jurybox.run.passed", passed)
        if total is not None:
            run.set_attribute("jurybox.run.cases", total)
        run.end()

    def export_record(self, record: CaseRecord, run: Any) -> None:
        """A case's span under ``run``, with one span per judgment of its verdict tree."""
        from opentelemetry import trace
        from opentelemetry.trace import Link, SpanContext, Status, StatusCode, TraceFlags

        start_ns, end_ns = case_times(record, time.time())
        links = []
        trace_id, span_id = record.metadata.get("trace_id"), record.metadata.get("span_id")
        if isinstance(trace_id, str) and isinstance(span_id, str):
            try:
                judged = SpanContext(int(trace_id, 16), int(span_id, 16), is_remote=True, trace_flags=TraceFlags(1))
                links.append(Link(judged, {"jurybox.link": "judged agent run"}))
            except ValueError:
                pass
        parent = trace.set_span_in_context(run)
        case = self._tracer.start_span(
            f"jurybox case {record.case}",
            context=parent,
            links=links,
            start_time=start_ns,
            attributes=_clean(
                {
                    "jurybox.case.name": record.case,
                    "jurybox.case.status": record.status.value,
                    "jurybox.case.score": record.score,
                    "jurybox.case.tokens": record.tokens,
                    "jurybox.trace_id": trace_id,
                    "jurybox.case.started_at": record.started_at.isoformat() if record.started_at else None,
                    **SPAN_KINDS["case"],
                    **_evaluation(record.judgment.judge or record.case, record.judgment),  # the case's verdict
                }
            ),
        )
        case.add_event(
            "gen_ai.evaluation.result",
            attributes=_clean(_evaluation(record.judgment.judge or record.case, record.judgment)),
            timestamp=end_ns,
        )
        if record.status.value == "error":
            case.set_status(Status(StatusCode.ERROR, (record.error or record.judgment.reasoning)[:500]))
        inside = trace.set_span_in_context(case)
        sent = 1
        for path, judgment in record.judgment.walk():
            if not path:
                continue  # the verdict itself is on the case's span
            if sent > MAX_JUDGMENT_SPANS:
                self.cut_judgments += 1
                continue
            sent += self._judgment(path, judgment, inside, start_ns, end_ns)
        case.end(end_time=end_ns)
        self._queued += sent
        if self._queued >= QUEUE_SPANS // 2:
            self._provider.force_flush()
            self._queued = 0

    def _judgment(self, path: str, judgment: Judgment, parent: Any, start_ns: int, end_ns: int) -> int:
        """One judgment's span (and its model call's); how many spans it made."""
        from opentelemetry import trace

        name = judgment.judge or path
        attributes = _clean({**_evaluation(name, judgment), "jurybox.judgment.path": path, **SPAN_KINDS["evaluation"]})
        span = self._tracer.start_span(
            f"evaluation {name}",
            context=parent,
            start_time=start_ns,
            attributes=attributes,  # the case links
        )
        span.add_event("gen_ai.evaluation.result", attributes=attributes, timestamp=end_ns)
        model = judgment.metadata.get("model")
        tokens = judgment.metadata.get("tokens")
        if model and not judgment.children:
            latency = judgment.metadata.get("latency")
            began = end_ns - int(float(latency) * 1e9) if isinstance(latency, int | float) else start_ns
            call = self._tracer.start_span(
                f"chat {model}",
                context=trace.set_span_in_context(span),
                start_time=max(start_ns, began),
                attributes=_clean(
                    {
                        "gen_ai.operation.name": "chat",
                        "gen_ai.request.model": str(model),
                        "gen_ai.usage.input_tokens": tokens.get("input") if isinstance(tokens, Mapping) else None,
                        "gen_ai.usage.output_tokens": tokens.get("output") if isinstance(tokens, Mapping) else None,
                        "jurybox.judge.attempts": judgment.metadata.get("attempts"),
                        "jurybox.judge.cached": judgment.metadata.get("cached"),
                        "llm.model_name": str(model),
                        **SPAN_KINDS["model"],
                    }
                ),
            )
            call.end(end_time=end_ns)
            span.end(end_time=end_ns)
            return 2
        span.end(end_time=end_ns)
        return 1

    def export_records(self, records: Iterable[CaseRecord], *, run_name: str, run_id: str | None = None) -> None:
        """A whole run at once: its span (from its first case's start), and every record under it.

        ``records`` is read twice (a list, or the store's lazy sequence): once for the start time.
        """
        moment = time.time()
        starts = [case_times(record, moment)[0] for record in records]
        run = self.start_run(run_name, run_id=run_id, start_ns=min(starts) if starts else None)
        passed = total = 0
        for record in records:
            self.export_record(record, run)
            total += 1
            passed += record.status.value == "pass"
        self.finish_run(run, passed=passed, total=total)

    def flush(self, timeout_seconds: float = 30.0) -> bool:
        return bool(self._provider.force_flush(int(timeout_seconds * 1000)))

    def close(self) -> None:
        """Send what is queued and stop."""
        self._provider.force_flush()
        self._provider.shutdown()


def _evaluation(name: str, judgment: Judgment) -> dict[str, Any]:
    """The GenAI evaluation attributes of a judgment (and jurybox's own beside them)."""
    return {
        "gen_ai.evaluation.name": name,
        "gen_ai.evaluation.score.value": judgment.value,
        "gen_ai.evaluation.score.label": judgment.status.value,
        "gen_ai.evaluation.explanation": judgment.reasoning[:MAX_EXPLANATION_CHARS] if judgment.reasoning else None,
        "jurybox.judgment.decided_by": judgment.decided_by,
        "jurybox.judgment.degraded": judgment.degraded or None,
    }


def _clean(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """Attributes without the unknown ones (OpenTelemetry has no null: unknown is left out, never 0)."""
    return {key: value for key, value in attributes.items() if value is not None}
