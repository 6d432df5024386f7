"""Judgments out: runs, cases and judgments as OpenTelemetry spans, sent over OTLP/HTTP.

One trace per run: the run's span, a span per case under it, and under each case a span
per judge of its verdict tree carrying the GenAI evaluation attributes
(``gen_ai.evaluation.name``, ``gen_ai.evaluation.score.value``,
``gen_ai.evaluation.score.label``, ``gen_ai.evaluation.explanation``) and a
``gen_ai.evaluation.result`` event with the same. A case judged from a trace links to
the agent span it judged, so a tracing backend shows the verdict beside the trace. A
judge's model calls are child spans of its judgment with their token usage.

The spans are plain records written straight into OTLP protobuf bytes (``_otlp_encode``) and
sent in batches from a background thread: no SDK span objects, no per-attribute validation
(that cost as much CPU as judging the case). The exporter never touches the process's global
tracer provider (the agent under test may be sending its own spans elsewhere). An SDK
``SpanExporter`` given instead of an endpoint (a test's in-memory one) gets SDK spans built
from the same records. Needs the ``otel`` extra.
"""

from __future__ import annotations

import atexit
import logging
import queue
import random
import threading
import time
import weakref
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from jurybox.core import CaseRecord, Judgment
from jurybox.traces._endpoint import traces_endpoint
from jurybox.traces._otlp_encode import (
    STATUS_ERROR,
    SpanRecord,
    SpanTemplate,
    attribute_bodies,
    event_span_bytes,
    export_request,
    fresh_bodies,
    repeated,
    span_bytes,
)

if TYPE_CHECKING:
    from jurybox.traces._live import LiveRun

logger = logging.getLogger("jurybox.traces.exporter")
SCOPE = "jurybox.exporter"
BATCH_SPANS = 4096
"""Spans one OTLP request carries at most.

A request costs the sender thread a few ms of CPU, mostly whatever its size (the HTTP client's
work), taken from the run it competes with for the GIL: 79 requests of 512 spans cost a
10,000-case run 13-18 us a case, 13 of 2 MB about 5.
"""
BATCH_BYTES = 2_000_000
"""Bytes of spans one OTLP/HTTP request carries at most (some 3,000 spans; the Collector takes 20 MiB)."""
BATCH_SECONDS = 5.0
"""A run's spans wait at most this long for their batch to fill (a slow run still shows its cases as they end)."""
TIMED_EVERY = 16
"""Cases whose span writing is timed for ``cpu_seconds``: one in this many (a sample, scaled up)."""
QUEUED_BATCHES = 32
"""Batches waiting for the sender thread (64 MB at most, some 25,000 cases' spans); past this the run
waits for it (a span is never dropped). Spans are sent while the run goes on: a collector that
is slow for a while must not hold the run's event loop up."""

MAX_EXPLANATION_CHARS = 4_000
"""Explanation text a judgment span carries (the full reasoning stays in the store)."""
MAX_JUDGMENT_SPANS = 200
"""Judgment spans one case sends (a verdict tree bigger than this is cut, and the cut is counted)."""


SPAN_KINDS: dict[str, dict[str, str]] = {
    "run": {"openinference.span.kind": "CHAIN"},
    "case": {"openinference.span.kind": "CHAIN"},
    "evaluation": {"openinference.span.kind": "EVALUATOR"},
    "model": {"openinference.span.kind": "LLM"},
}
"""OpenInference span kinds, so Phoenix and the like show each span for what it is."""
_CASE_KIND = SPAN_KINDS["case"]


def sdk_span(span: SpanRecord, resource: Any) -> Any:
    """The SDK's ``ReadableSpan`` of a record, validated as the SDK validates attributes."""
    from opentelemetry.attributes import BoundedAttributes
    from opentelemetry.sdk.trace import Event, ReadableSpan
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope
    from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags

    def checked(values: Mapping[str, Any]) -> BoundedAttributes:
        return BoundedAttributes(attributes=values, immutable=True)

    sampled = TraceFlags(TraceFlags.SAMPLED)
    parent = SpanContext(span.trace_id, span.parent_id, False, sampled) if span.parent_id is not None else None
    status = Status(StatusCode(span.status[0]), span.status[1]) if span.status else Status(StatusCode.UNSET)
    return ReadableSpan(
        name=span.name,
        context=SpanContext(span.trace_id, span.span_id, False, sampled),
        parent=parent,
        resource=resource,
        attributes=checked(span.attributes),
        events=[Event(name, checked(values), moment) for name, moment, values in span.events],
        links=[Link(SpanContext(t, s, True, sampled), checked(values)) for t, s, values in span.links],
        kind=SpanKind.INTERNAL,
        status=status,
        start_time=span.start_ns,
        end_time=span.end_ns,
        instrumentation_scope=InstrumentationScope(SCOPE),
    )


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


class RunSpan:
    """A run's span while the run goes on: its ids, start and attributes (``finish_run`` sends it)."""

    __slots__ = ("attributes", "name", "span_id", "start_ns", "trace_id")

    def __init__(self, name: str, attributes: dict[str, Any], start_ns: int) -> None:
        self.name = name
        self.trace_id = _new_id(128)
        self.span_id = _new_id(64)
        self.attributes = attributes
        self.start_ns = start_ns

    def set_attribute(self, key: str, value: Any) -> None:
        if value is not None:
            self.attributes[key] = value


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

        self._otlp: Any = None
        if span_exporter is None:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            url = traces_endpoint(endpoint)
            if url is None:
                raise ValueError("no OTLP endpoint: give --otel-endpoint URL or set OTEL_EXPORTER_OTLP_ENDPOINT")
            # Used for its HTTP client only (retries, TLS and header variables, compression): the bytes are ours.
            self._otlp = OTLPSpanExporter(endpoint=url, headers=dict(headers or {}))
            self.endpoint: str | None = url
        else:
            self.endpoint = None
        self._span_exporter = span_exporter
        # Phoenix files spans by this resource attribute; other backends ignore it.
        self._resource = Resource.create({"service.name": service_name, "openinference.project.name": service_name})
        self._resource_attributes = dict(self._resource.attributes)
        # Over OTLP/HTTP a span is written as bytes as soon as it ends: its attribute dicts die
        # young instead of piling up in a batch for the garbage collector to walk again and again.
        client: Any = getattr(self._otlp, "_client", None)
        self._direct = self._otlp is not None and callable(getattr(client, "export", None))
        self._batch: list[Any] = []  # span bytes when direct, else SpanRecords
        self._batch_bytes = 0
        self._batch_due = time.monotonic() + BATCH_SECONDS  # when the batch goes, full or not
        self._outbox: queue.Queue[list[Any] | threading.Event | None] = queue.Queue(QUEUED_BATCHES)
        self._sender: threading.Thread | None = None
        self._live_runs: weakref.WeakSet[LiveRun] = weakref.WeakSet()
        self._closed = False
        atexit.register(self.close)  # what is still queued goes out at exit, as the SDK's provider does
        self.cut_judgments = 0
        self.failed_batches = 0
        self.spans = 0
        """Spans handed to the sender so far."""
        self.requests = 0
        """Export requests the endpoint accepted (OTLP/HTTP), or batches the given exporter took."""
        self.bytes_sent = 0
        """Bytes of the accepted requests (OTLP/HTTP; 0 for a given span exporter)."""
        self.cases = 0
        """Case spans written."""
        # Thread CPU seconds: writing the timed cases of those told one at a time, writing batches, sending.
        self._sampled_cpu = self._batch_cpu = self._sender_cpu = 0.0
        self._timed = 0  # cases told one at a time whose writing was timed
        self._one_at_a_time = 0  # cases told one at a time (``export_record``), timed or not

    def start_run(
        self,
        name: str,
        *,
        run_id: str | None = None,
        attributes: Mapping[str, Any] | None = None,
        start_ns: int | None = None,
    ) -> RunSpan:
        """Open a run's span (at ``start_ns``, default now); hand it to ``export_record`` and ``finish_run``."""
        values = {"jurybox.run.name": name, "jurybox.run.id": run_id, **SPAN_KINDS["run"], **(attributes or {})}
        return RunSpan(f"jurybox run {name}", _clean(values), start_ns if start_ns is not None else time.time_ns())

    def live_run(self, name: str, *, start_ns: int | None = None) -> LiveRun:
        """A run whose cases are sent as they finish: tell it each record (``add``), then ``finish`` it.

        What ``jurybox run`` hands the runner, so no record is read back from the store to be
        exported; ``finish`` sends from the stored records only the cases it was not told of.
        """
        from jurybox.traces._live import LiveRun  # it imports this module

        live = LiveRun(self, self.start_run(name, start_ns=start_ns))
        self._live_runs.add(live)  # ``close`` writes what it still holds, should nobody finish it
        return live

    def finish_run(self, run: RunSpan, *, passed: int | None = None, total: int | None = None) -> None:
        run.set_attribute("jurybox.run.passed", passed)
        run.set_attribute("jurybox.run.cases", total)
        self._add(SpanRecord(run.trace_id, run.span_id, None, run.name, run.start_ns, time.time_ns(), run.attributes))

    @property
    def cpu_seconds(self) -> float:
        """CPU spent exporting so far: writing the spans (the threads that told of the cases) and sending them.

        A batch (``export_batch``, a live run's) is timed whole. A case told alone (``export_record``) is
        timed one in ``TIMED_EVERY`` (the first, then one every ``TIMED_EVERY``), the mean of the timed
        ones counted for every case (a thread's CPU clock is a system call, about 1 us a reading).
        The sending is timed on every request.
        """
        sampled = self._sampled_cpu / self._timed * self._one_at_a_time if self._timed else 0.0
        return sampled + self._batch_cpu + self._sender_cpu

    def export_record(self, record: CaseRecord, run: RunSpan) -> None:
        """A case's span under ``run``, with one span per judgment of its verdict tree."""
        self.cases += 1
        self._one_at_a_time += 1
        if self._one_at_a_time % TIMED_EVERY != 1:  # the 1st, 17th, 33rd... case is timed
            self._export_record(record, run, time.time())
            return
        began = time.thread_time()
        try:
            self._export_record(record, run, time.time())
        finally:
            self._sampled_cpu += time.thread_time() - began
            self._timed += 1

    def export_batch(self, records: Sequence[CaseRecord], run: RunSpan, moments: Sequence[float] | None = None) -> None:
        """``export_record`` of each of ``records``, one after another, the whole batch timed.

        What a live run hands over every ``LIVE_BATCH`` cases: written back to back, the spans cost
        about two thirds of what they cost one at a time between the runner's own steps (the
        encoder's code and its caches of repeated attributes stay warm). ``moments``: when each
        case was told of (``time.time()``), the end of a case that says no start of its own;
        default now. ``cases`` counts the ones written: when writing one raises, the ones before it.
        """
        if not records:
            return
        began = time.thread_time()
        written = 0
        now = time.time()
        try:
            for index, record in enumerate(records):
                self._export_record(record, run, moments[index] if moments is not None else now)
                written += 1
        finally:
            self._batch_cpu += time.thread_time() - began
            self.cases += written

    def _export_record(self, record: CaseRecord, run: RunSpan, moment: float) -> None:
        start_ns, end_ns = case_times(record, moment)
        links: list[tuple[int, int, Mapping[str, Any]]] = []
        trace_id, span_id = record.metadata.get("trace_id"), record.metadata.get("span_id")
        if isinstance(trace_id, str) and isinstance(span_id, str):
            try:
                judged = (int(trace_id, 16), int(span_id, 16))
                if 0 < judged[0] < 1 << 128 and 0 < judged[1] < 1 << 64:  # what the SDK takes as a valid link
                    links.append((*judged, _JUDGED_LINK))
            except ValueError:
                pass
        judgment = record.judgment
        # What is the case's own (its name, start, tokens; its verdict's name) is written, not remembered:
        # a cache entry per case would only push out the attributes that do repeat.
        once: dict[str, Any] = {"jurybox.case.name": record.case}
        tokens, started = record.tokens, record.started_at
        if tokens is not None:
            once["jurybox.case.tokens"] = tokens
        if trace_id is not None:
            once["jurybox.trace_id"] = trace_id
        if started is not None:
            once["jurybox.case.started_at"] = started.isoformat()
        label = record.status.value
        score = record.score
        verdict_name = {"gen_ai.evaluation.name": judgment.judge or record.case}
        status = None
        if label == "error":
            status = (STATUS_ERROR, (record.error or record.judgment.reasoning)[:500])
        case_id = _new_id(64)
        case: SpanRecord | bytes
        if self._direct:
            # The bytes of what repeats (status, score, the verdict but its name) are kept written:
            # only the case's own attributes are encoded here.
            same, verdict_attributes, verdict_event = _case_verdict(label, score, judgment)
            named = fresh_bodies(verdict_name)[0]
            case = event_span_bytes(
                (run.trace_id, case_id, run.span_id),
                f"jurybox case {record.case}",
                (start_ns, end_ns),
                repeated(b"\x4a", fresh_bodies(once)) + same + b"\x4a" + named + verdict_attributes,
                ("gen_ai.evaluation.result", end_ns, b"\x1a" + named + verdict_event),
                links,
                status,
            )
        else:
            repeated_values = _case_repeated(label, score)
            verdict_rest = _verdict(judgment)
            # The verdict's bodies serve the span and its event: encoded once.
            verdict_bodies = fresh_bodies(verdict_name) + attribute_bodies(verdict_rest)
            verdict = verdict_name | verdict_rest
            case = SpanRecord(
                run.trace_id,
                case_id,
                run.span_id,
                f"jurybox case {record.case}",
                start_ns,
                end_ns,
                once | repeated_values | verdict,
                (("gen_ai.evaluation.result", end_ns, verdict),),
                links,
                status,
                bodies=fresh_bodies(once) + attribute_bodies(repeated_values) + verdict_bodies,
                event_bodies=(verdict_bodies,),
                remember_name=False,
            )
        sent = 1
        for path, child in judgment.walk():
            if not path:
                continue  # the verdict itself is on the case's span
            if sent > MAX_JUDGMENT_SPANS:
                self.cut_judgments += 1
                continue
            sent += self._judgment(path, child, run.trace_id, case_id, start_ns, end_ns)
        if isinstance(case, bytes):  # added after its children, as the SDK ends them
            self._add_bytes(case)
        else:
            self._add(case)
        if self._batch and time.monotonic() >= self._batch_due:  # once a case: a slow live run's spans go out
            self._hand_over()

    def _judgment(self, path: str, judgment: Judgment, trace_id: int, parent: int, start_ns: int, end_ns: int) -> int:
        """One judgment's span (and its model call's); how many spans it made."""
        name = judgment.judge or path
        attributes, bodies, template = _judgment_attributes(name, path, judgment)
        span_id = _new_id(64)
        model = judgment.metadata.get("model")
        call = None
        if model and not judgment.children:
            latency = judgment.metadata.get("latency")
            began = end_ns - int(float(latency) * 1e9) if isinstance(latency, int | float) else start_ns
            call = (_model_call(str(model), judgment.metadata), max(start_ns, began))
        if self._direct:  # the repeated parts' bytes written once: only ids and times are packed here
            if call is not None:
                (_, _, call_template), began = call
                self._add_bytes(call_template.span(trace_id, _new_id(64), span_id, began, end_ns))
            self._add_bytes(template.span(trace_id, span_id, parent, start_ns, end_ns))
            return 1 if call is None else 2
        if call is not None:
            (call_attributes, call_bodies, _), began = call
            self._add(
                SpanRecord(
                    trace_id, _new_id(64), span_id, f"chat {model}", began, end_ns, call_attributes, bodies=call_bodies
                )
            )
        event = (("gen_ai.evaluation.result", end_ns, attributes),)
        self._add(
            SpanRecord(
                trace_id, span_id, parent, f"evaluation {name}", start_ns, end_ns, attributes, event, bodies=bodies
            )
        )
        return 1 if call is None else 2

    def export_records(
        self,
        records: Iterable[CaseRecord],
        *,
        run_name: str,
        run_id: str | None = None,
        start_ns: int | None = None,
    ) -> None:
        """A whole run at once: its span (from ``start_ns``, else its first case's start), and every record under it.

        Without ``start_ns``, ``records`` is read twice (a list, or the store's lazy sequence): once for
        the start time. A caller that knows when the run started passes it, and a store's records are
        decoded once.
        """
        if start_ns is None:
            moment = time.time()
            starts = [case_times(record, moment)[0] for record in records]
            start_ns = min(starts) if starts else None
        run = self.start_run(run_name, run_id=run_id, start_ns=start_ns)
        passed = total = 0
        for record in records:
            self.export_record(record, run)
            total += 1
            passed += record.status.value == "pass"
        self.finish_run(run, passed=passed, total=total)

    def send_waiting(self) -> None:
        """Hand the spans waiting in the current batch to the sender now, full or not (a live run's timer)."""
        if self._batch and not self._closed:
            self._hand_over()

    def flush(self, timeout_seconds: float = 30.0) -> bool:
        """Send what is waiting; False when it was not all sent within the timeout."""
        if self._batch:
            self._hand_over()
        if self._sender is None:
            return True
        sent = threading.Event()
        self._outbox.put(sent)
        return sent.wait(timeout_seconds)

    def close(self) -> None:
        """Send what is queued and stop."""
        if self._closed:
            return
        atexit.unregister(self.close)
        for live in list(self._live_runs):
            if not live.finished:
                live.write_waiting()
        self.flush()
        self._closed = True
        if self._sender is not None:
            self._outbox.put(None)
            self._sender.join()
        if self._span_exporter is not None:
            self._span_exporter.shutdown()
        if self._otlp is not None:
            self._otlp.shutdown()

    def _add(self, span: SpanRecord) -> None:
        if self._direct:
            self._add_bytes(span_bytes(span))
            return
        self.spans += 1
        self._batch.append(span)
        if len(self._batch) >= BATCH_SPANS:
            self._hand_over()

    def _add_bytes(self, data: bytes) -> None:
        """A span's bytes (OTLP/HTTP): batched by count and size."""
        self.spans += 1
        self._batch.append(data)
        self._batch_bytes += len(data)
        if self._batch_bytes >= BATCH_BYTES or len(self._batch) >= BATCH_SPANS:
            self._hand_over()

    def _hand_over(self) -> None:
        batch, self._batch = self._batch, []
        self._batch_bytes = 0
        self._batch_due = time.monotonic() + BATCH_SECONDS
        if self._sender is None:
            self._sender = threading.Thread(target=self._send_loop, name="jurybox-otlp-export", daemon=True)
            self._sender.start()
        self._outbox.put(batch)  # waits when the sender is behind: slower, never a dropped span

    def _send_loop(self) -> None:
        while True:
            item = self._outbox.get()
            if item is None:
                return
            if isinstance(item, threading.Event):
                item.set()
                continue
            try:
                self._send(item)
            except Exception:  # a collector that is down must not stop the run: say so and go on
                self.failed_batches += 1
                logger.exception("sending %d spans over OTLP failed", len(item))

    def _send(self, batch: list[Any]) -> None:
        began = time.thread_time()
        try:
            self._send_now(batch)
        finally:
            self._sender_cpu += time.thread_time() - began

    def _send_now(self, batch: list[Any]) -> None:
        if self._direct:
            data = export_request(self._resource_attributes, SCOPE, batch)
            result = self._otlp._client.export(data)
            if not getattr(result, "success", True):
                self.failed_batches += 1
                logger.warning("the OTLP endpoint refused %d spans: %s", len(batch), getattr(result, "error", ""))
                return
            self.requests += 1
            self.bytes_sent += len(data)
            return
        # An SDK exporter (given, or an SDK version whose HTTP client is not where this one has it).
        target = self._span_exporter if self._span_exporter is not None else self._otlp
        result = target.export([sdk_span(span, self._resource) for span in batch])
        if getattr(result, "name", "SUCCESS") == "SUCCESS":  # SpanExportResult.SUCCESS
            self.requests += 1
        else:
            self.failed_batches += 1


_JUDGED_LINK: Mapping[str, Any] = {"jurybox.link": "judged agent run"}


def _new_id(bits: int) -> int:
    """A random non-zero span (64 bits) or trace (128 bits) id, as the SDK's id generator makes them."""
    while True:
        number = random.getrandbits(bits)
        if number:
            return number


def _evaluation(name: str, judgment: Judgment) -> dict[str, Any]:
    """The GenAI evaluation attributes of a judgment (and jurybox's own beside them), the unknown ones left out."""
    return {"gen_ai.evaluation.name": name, **_verdict(judgment)}


def _verdict(judgment: Judgment) -> dict[str, Any]:
    """``_evaluation`` but the name."""
    out: dict[str, Any] = {}
    value = judgment.value
    if value is not None:
        out["gen_ai.evaluation.score.value"] = value
    out["gen_ai.evaluation.score.label"] = judgment.status.value
    if judgment.reasoning:
        out["gen_ai.evaluation.explanation"] = judgment.reasoning[:MAX_EXPLANATION_CHARS]
    if judgment.decided_by is not None:
        out["jurybox.judgment.decided_by"] = judgment.decided_by
    if judgment.degraded:
        out["jurybox.judgment.degraded"] = judgment.degraded
    return out


def _case_repeated(label: str, score: float | None) -> dict[str, Any]:
    """A case span's attributes that repeat from case to case (its status, score and span kind)."""
    values: dict[str, Any] = {"jurybox.case.status": label}
    if score is not None:
        values["jurybox.case.score"] = score
    values.update(_CASE_KIND)
    return values


# A case span's repeated attribute fields by what they say (threads share it: a lost entry is only a miss).
_case_verdicts: dict[tuple[Any, ...], tuple[bytes, bytes, bytes]] = {}


def _case_verdict(label: str, score: float | None, judgment: Judgment) -> tuple[bytes, bytes, bytes]:
    """A case span's repeated fields: its status, score and kind; its verdict but the verdict's name, as
    the span's attributes and as its event's (``repeated``).

    Most cases of a run end with one of a few verdicts (``llm_judge decided: all 2 passed``),
    so the bytes are remembered by the values themselves (floats by their bits: 0.0 and -0.0
    are equal keys but not the same bytes; other values with their type: ``True == 1``).
    """
    reasoning = judgment.reasoning
    key = (
        label,
        _exact(score),
        _exact(judgment.value),
        judgment.status,
        reasoning,
        judgment.decided_by,
        _exact(judgment.degraded),
    )
    found = _case_verdicts.get(key)
    if found is not None:
        return found
    rest = attribute_bodies(_verdict(judgment))
    made = (
        repeated(b"\x4a", attribute_bodies(_case_repeated(label, score))),
        repeated(b"\x4a", rest),
        repeated(b"\x1a", rest),
    )
    if len(reasoning) <= _REMEMBERED_REASONING:
        if len(_case_verdicts) >= _JUDGMENT_SPANS:
            _case_verdicts.clear()
        _case_verdicts[key] = made
    return made


def _exact(value: Any) -> Any:
    """A key that tells apart what compares equal but is written differently."""
    return value.hex() if value.__class__ is float else (value.__class__, value)


# A judgment span's attributes, their wire bytes and its span's, by what they are made of (threads
# share it: a lost entry is only a miss).
Made = tuple[dict[str, Any], list[bytes], SpanTemplate]
_judgment_spans: dict[tuple[Any, ...], Made] = {}
_JUDGMENT_SPANS = 4096


def _judgment_attributes(name: str, path: str, judgment: Judgment) -> Made:
    """A judgment span's attributes (its event's too), their encoded bodies and the span's template.

    A deterministic judge says the same few things case after case (``found 'EUR'``), so a
    judgment of the same name, path, score, label and explanation as one before reuses its
    attributes and their bytes. The dict is shared between spans and never changed.
    """
    reasoning = judgment.reasoning
    value = judgment.value
    # The score by its bits (float.hex): 0.0 and -0.0 are equal keys but not the same bytes.
    score = value.hex() if value is not None else None
    key = (name, path, score, judgment.status, reasoning, judgment.decided_by, _exact(judgment.degraded))
    found = _judgment_spans.get(key)
    if found is not None:
        return found
    attributes = _evaluation(name, judgment)
    attributes["jurybox.judgment.path"] = path
    attributes.update(SPAN_KINDS["evaluation"])
    bodies = attribute_bodies(attributes)
    made = (attributes, bodies, SpanTemplate(f"evaluation {name}", bodies, "gen_ai.evaluation.result"))
    if len(reasoning) <= _REMEMBERED_REASONING:
        if len(_judgment_spans) >= _JUDGMENT_SPANS:
            _judgment_spans.clear()
        _judgment_spans[key] = made
    return made


_model_calls: dict[tuple[Any, ...], Made] = {}


def _model_call(model: str, metadata: Mapping[str, Any]) -> Made:
    """A judge's model call's span attributes, their bodies and its template (remembered: calls repeat)."""
    tokens = metadata.get("tokens")
    # dict first: an ABC's isinstance check costs more than the rest of a remembered call.
    counts = (
        (tokens.get("input"), tokens.get("output"))
        if tokens.__class__ is dict or isinstance(tokens, Mapping)
        else (None, None)
    )
    attempts, cached = metadata.get("attempts"), metadata.get("cached")
    # By value and type: True == 1, but an attempt count of True is another attribute.
    key: tuple[Any, ...] | None = (
        model,
        counts[0],
        counts[1],
        attempts,
        cached,
        counts[0].__class__,
        counts[1].__class__,
        attempts.__class__,
        cached.__class__,
    )
    try:
        found = _model_calls.get(key)  # type: ignore[arg-type]
    except TypeError:  # an unhashable count: built, not remembered
        key, found = None, None
    if found is not None:
        return found
    attributes = _clean(
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": model,
            "gen_ai.usage.input_tokens": counts[0],
            "gen_ai.usage.output_tokens": counts[1],
            "jurybox.judge.attempts": attempts,
            "jurybox.judge.cached": cached,
            "llm.model_name": model,
            **SPAN_KINDS["model"],
        }
    )
    bodies = attribute_bodies(attributes)
    made = (attributes, bodies, SpanTemplate(f"chat {model}", bodies))
    if key is not None:
        if len(_model_calls) >= _JUDGMENT_SPANS:
            _model_calls.clear()
        _model_calls[key] = made
    return made


_REMEMBERED_REASONING = 200  # a longer explanation is a model's, said once


def _clean(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """Attributes without the unknown ones (OpenTelemetry has no null: unknown is left out, never 0)."""
    return {key: value for key, value in attributes.items() if value is not None}
