"""``capture: otel``: a Python agent's tool calls and usage read from its own OpenTelemetry spans.

One span processor is added to the process's SDK tracer provider (a provider is set when
there is none). Each agent call runs under a ``jurybox.agent_call`` span, so every span
the agent's instrumentation makes during the call lands in that call's trace; the
processor keeps the spans of open calls only, by trace id, and the call takes them when
it returns. Spans ended after the call returned (work left running in the background)
are not the round's.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jurybox.agents._errors import TargetConfigError
from jurybox.agents._reply import AgentReply
from jurybox.core import ToolCall

CAPTURE_CHOICES = ("none", "otel")
MAX_SPANS_PER_CALL = 10_000
"""Spans one agent call may leave; more are dropped (and counted in the reply's usage as ``spans_dropped``)."""
CALL_SPAN = "jurybox.agent_call"


@dataclass
class Captured:
    """What an agent call returned, and the spans it made."""

    value: Any
    spans: list[Any]
    dropped: int = 0


class _Buckets:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.open: dict[int, list[Any]] = {}
        self.dropped: dict[int, int] = {}

    def on_end(self, span: Any) -> None:
        trace_id = span.context.trace_id
        with self.lock:
            bucket = self.open.get(trace_id)
            if bucket is None:
                return
            if len(bucket) >= MAX_SPANS_PER_CALL:
                self.dropped[trace_id] = self.dropped.get(trace_id, 0) + 1
            else:
                bucket.append(span)

    def start(self, trace_id: int) -> None:
        with self.lock:
            self.open[trace_id] = []

    def take(self, trace_id: int) -> tuple[list[Any], int]:
        with self.lock:
            return self.open.pop(trace_id, []), self.dropped.pop(trace_id, 0)


class SpanCapture:
    """The process's one capturing processor and the tracer that opens each call's span."""

    _shared: SpanCapture | None = None
    _lock = threading.Lock()

    def __init__(self) -> None:
        try:
            from opentelemetry import trace
            from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
        except ImportError as exc:
            raise TargetConfigError(
                "agent.capture: otel needs the OpenTelemetry SDK: pip install 'jurybox[otel]'"
            ) from exc
        self.buckets = _Buckets()
        buckets = self.buckets

        class _Collector(SpanProcessor):
            def on_end(self, span: Any) -> None:
                buckets.on_end(span)

        provider = trace.get_tracer_provider()
        if not isinstance(provider, TracerProvider):
            provider = TracerProvider()
            trace.set_tracer_provider(provider)
            provider = trace.get_tracer_provider()  # another thread may have set one first
        if not hasattr(provider, "add_span_processor"):
            raise TargetConfigError(
                f"agent.capture: otel needs an OpenTelemetry SDK tracer provider; this process has "
                f"{type(provider).__name__}"
            )
        provider.add_span_processor(_Collector())
        self.tracer = provider.get_tracer("jurybox")

    @classmethod
    def shared(cls) -> SpanCapture:
        with cls._lock:
            if cls._shared is None:
                cls._shared = SpanCapture()
            return cls._shared

    def wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``fn`` run under a call span; it returns a ``Captured`` (async when ``fn`` is)."""
        if _is_async(fn):

            async def run_async(*args: Any) -> Captured:
                with self.tracer.start_as_current_span(CALL_SPAN) as span:
                    trace_id = span.get_span_context().trace_id
                    self.buckets.start(trace_id)
                    try:
                        value = await fn(*args)
                    except BaseException:
                        self.buckets.take(trace_id)
                        raise
                return Captured(value, *self.buckets.take(trace_id))

            return run_async

        def run(*args: Any) -> Captured:
            with self.tracer.start_as_current_span(CALL_SPAN) as span:
                trace_id = span.get_span_context().trace_id
                self.buckets.start(trace_id)
                try:
                    value = fn(*args)
                except BaseException:
                    self.buckets.take(trace_id)
                    raise
            return Captured(value, *self.buckets.take(trace_id))

        return run


def _is_async(fn: Any) -> bool:
    if inspect.iscoroutinefunction(fn):
        return True
    return not inspect.isroutine(fn) and inspect.iscoroutinefunction(type(fn).__call__)


def with_captured(reply: AgentReply, captured: Captured) -> AgentReply:
    """The reply with the tool calls and usage its spans show, where the reply itself said none."""
    if not captured.spans:
        contexts: list[Any] = []
    else:  # the trace readers, for an agent run with ``capture: otel`` only (a Python agent imports this module)
        from jurybox.traces import contexts_of_trace, spans_from_sdk

        contexts = contexts_of_trace(spans_from_sdk(captured.spans))
    calls: list[ToolCall] = [call for context in contexts for call in context.tool_calls]
    usage: dict[str, Any] = {}
    for context in contexts:
        for key, value in dict(context.metadata.get("usage") or {}).items():
            usage[key] = usage.get(key, 0) + value
    usage["captured_spans"] = len(captured.spans)
    if captured.dropped:
        usage["spans_dropped"] = captured.dropped
    merged_usage = {**usage, **dict(reply.usage)}
    return AgentReply(
        text=reply.text,
        tool_calls=reply.tool_calls or tuple(calls),
        sources=reply.sources,
        usage=merged_usage,
        raw=reply.raw,
    )
