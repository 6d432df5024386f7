"""A trace's spans -> Contexts: one per top-level agent span, or one per trace when no span is an agent.

The Context holds what the judges read: the user's input, the final output, every
tool call (arguments and result) in the order it started, the messages of the last
model call, token usage summed over the model calls, timings and errors. The trace's
ids, service and model calls go in ``metadata`` so a verdict can be traced back.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from jurybox.core import Context, Message, ToolCall
from jurybox.traces._conventions import (
    AGENT,
    MODEL,
    OTHER,
    TOOL,
    agent_io,
    arguments_mapping,
    as_jurybox_messages,
    error_of,
    model_of,
    readable_input,
    readable_output,
    role_of,
    speaks_genai,
    tool_call_of,
    usage_of,
)
from jurybox.traces._messages import ModelMessage, call_messages, last_text, parse_json_text
from jurybox.traces._spans import ReadStats, Span

MAX_RECORDED_MODEL_CALLS = 200
"""Model calls one Context lists in ``metadata["model_calls"]`` (all are counted and summed)."""
MAX_RECORDED_ERRORS = 20


def contexts_of_trace(spans: Iterable[Span], stats: ReadStats | None = None) -> list[Context]:
    """The Contexts of one trace's spans (a span of another trace is not expected here)."""
    stats = stats if stats is not None else ReadStats()
    spans = list(spans)
    by_id = {span.span_id: span for span in spans}
    children: dict[str | None, list[Span]] = defaultdict(list)
    roots: list[Span] = []
    for span in spans:
        if span.parent_id is not None and span.parent_id in by_id and span.parent_id != span.span_id:
            children[span.parent_id].append(span)
        else:
            roots.append(span)
    stats.traces += 1
    # Each span's role is read several times below (agents, sibling groups, the Context): worked out once.
    roles = {id(span): role_of(span) for span in spans}
    if all(role == OTHER for role in roles.values()) and not any(speaks_genai(span) for span in spans):
        stats.skip("trace with no GenAI or OpenInference span")
        return []
    if not roots:
        stats.skip("trace with no root span (its parent ids form a cycle)")
        return []
    units = _merge_sibling_agents(_top_agents(roots, children, roles), by_id) or roots
    contexts = []
    for unit in sorted(units, key=lambda span: span.start_ns):
        subtree = _subtree(unit, children)
        context = _context(unit, subtree, stats, roles)
        if context is not None:
            contexts.append(context)
    stats.contexts += len(contexts)
    return contexts


def _top_agents(roots: list[Span], children: Mapping[str | None, list[Span]], roles: Mapping[int, str]) -> list[Span]:
    """Agent spans with no agent above them (walked without recursion: a hostile trace may be deep)."""
    found: list[Span] = []
    stack = list(roots)
    seen: set[str] = set()
    while stack:
        span = stack.pop()
        if span.span_id in seen:
            continue
        seen.add(span.span_id)
        if roles[id(span)] == AGENT:
            found.append(span)
            continue
        stack.extend(children.get(span.span_id, ()))
    return found


def _merge_sibling_agents(agents: list[Span], by_id: Mapping[str, Span]) -> list[Span]:
    """Agent spans that share a parent become that parent: one graph run whose nodes each say AGENT.

    LangGraph's OpenInference spans mark each ``agent`` node AGENT under one ``LangGraph`` chain,
    and an agent handing off to another leaves two agent spans under one workflow: in both the
    user's request is the parent's, and so is the Context.
    """
    parents: dict[str | None, list[Span]] = defaultdict(list)
    for agent in agents:
        parents[agent.parent_id].append(agent)
    units: list[Span] = []
    for parent_id, group in parents.items():
        parent = by_id.get(parent_id) if parent_id is not None else None
        if len(group) > 1 and parent is not None:
            units.append(parent)
        else:
            units.extend(group)
    return units


def _subtree(unit: Span, children: Mapping[str | None, list[Span]]) -> list[Span]:
    out: list[Span] = []
    stack = [unit]
    seen: set[str] = set()
    while stack:
        span = stack.pop()
        if span.span_id in seen:
            continue
        seen.add(span.span_id)
        out.append(span)
        stack.extend(children.get(span.span_id, ()))
    out.sort(key=lambda span: (span.start_ns, span.end_ns))
    return out


def _context(unit: Span, subtree: list[Span], stats: ReadStats, roles: Mapping[int, str]) -> Context | None:
    models: list[Span] = []
    tools: list[Span] = []
    unknown = 0
    for span in subtree:
        role = roles[id(span)]
        if role == MODEL:
            models.append(span)
        elif role == TOOL:
            tools.append(span)
        elif role == OTHER and span is not unit:
            unknown += 1
    if unknown:
        stats.skip("span of no known shape", count=unknown)
    calls = [(span, *call_messages(span)) for span in models]
    user, answer = agent_io(unit)
    unit_role = roles[id(unit)]
    if user is None and unit_role == OTHER and "input.value" in unit.attributes:
        user = readable_input(unit.attributes["input.value"])
    if answer is None and unit_role == OTHER and "output.value" in unit.attributes:
        answer = readable_output(unit.attributes["output.value"])
    if user is None:
        user = next((text for _, inputs, _ in calls if (text := last_text(inputs, "user"))), None)
    if answer is None:
        answer = next((text for _, _, outputs in reversed(calls) if (text := last_text(outputs, "assistant"))), None)
    asked = _calls_from_messages(calls)
    tool_calls = _with_asked_arguments([tool_call_of(span) for span in tools], asked) or asked
    if user is None and answer is None and not tool_calls:
        stats.skip("agent or trace with no input, output or tool call")
        return None
    messages: list[Message]
    if calls:
        _, inputs, outputs = calls[-1]
        messages = as_jurybox_messages([*inputs, *outputs])
    else:
        said = (("user", user), ("assistant", answer))
        messages = [Message(role, text) for role, text in said if text]
    usage: dict[str, int] = {}
    model_calls: list[dict[str, Any]] = []
    for span, _, _ in calls:
        counts = usage_of(span)
        for key, value in counts.items():
            usage[key] = usage.get(key, 0) + value
        if len(model_calls) < MAX_RECORDED_MODEL_CALLS:
            model_calls.append(
                {
                    "name": span.name,
                    "model": model_of(span),
                    **counts,
                    "duration": span.duration,
                    "error": error_of(span),
                }
            )
    errors = [{"span": span.name, "error": text} for span in subtree if (text := error_of(span))]
    metadata: dict[str, Any] = {
        "case": f"{unit.name or 'trace'} {unit.trace_id[:8]}",
        "trace_id": unit.trace_id,
        "span_id": unit.span_id,
        "span_name": unit.name,
        "service": unit.service,
        "spans": len(subtree),
        "model_calls": model_calls,
        "model_call_count": len(calls),
        "tool_call_count": len(tool_calls),
        "errors": errors[:MAX_RECORDED_ERRORS],
    }
    last_model = next((model for span, _, _ in reversed(calls) if (model := model_of(span))), None)
    if last_model:
        metadata["model"] = last_model
    if usage:
        metadata["usage"] = usage
        metadata["tokens"] = sum(usage.values())
    unit_error = error_of(unit)
    return Context(
        input=user or "",
        output=answer or "",
        messages=tuple(messages),
        tool_calls=tuple(tool_calls),
        status="error" if unit_error else "completed",
        started_at=_moment(unit.start_ns),
        duration=unit.duration,
        metadata=metadata,
    )


def _moment(nanoseconds: int) -> datetime | None:
    """A span time as a datetime; None when missing or past what a datetime holds (a hostile value)."""
    if not nanoseconds:
        return None
    try:
        return datetime.fromtimestamp(nanoseconds / 1e9, tz=UTC)
    except (OverflowError, ValueError, OSError):
        return None


def _with_asked_arguments(spans: list[dict[str, Any]], asked: list[ToolCall]) -> list[ToolCall]:
    """Tool spans as calls; one whose span holds only the raw input (LangChain's tools record the
    input string) takes the arguments and id the model asked for it with, matched by name in order."""
    unused = list(asked)
    out = []
    for recorded in spans:
        call = recorded
        match = next((a for a in unused if a.name == call["name"]), None)
        if match is not None:
            unused.remove(match)
            if set(call["arguments"]) <= {"input"} and match.arguments:
                call = {**call, "arguments": dict(match.arguments), "id": call["id"] or match.id}
        # built directly: ``arguments`` is already a mapping and the fields are known (what coerce checks)
        out.append(ToolCall(name=call["name"], arguments=call["arguments"], result=call["result"], id=call["id"]))
    return out


def _calls_from_messages(calls: list[tuple[Span, list[ModelMessage], list[ModelMessage]]]) -> list[ToolCall]:
    """Tool calls the model asked for, joined by id with the results later calls sent back (no tool spans)."""
    asked: list[dict[str, Any]] = []
    results: dict[str, str] = {}
    for _, inputs, outputs in calls:
        for message in inputs:
            if message.tool_call_id is not None:
                results[message.tool_call_id] = message.text
        for message in outputs:
            for call in message.tool_calls:
                name = call.get("name")
                if isinstance(name, str) and name:
                    identifier = call.get("id")
                    asked.append(
                        {
                            "name": name,
                            "arguments": arguments_mapping(call.get("arguments")),
                            "id": str(identifier) if identifier is not None else None,
                        }
                    )
    return [
        ToolCall(
            name=call["name"],
            arguments=call["arguments"],
            result=parse_json_text(results[call["id"]]) if call["id"] in results else None,
            id=call["id"],
        )
        for call in asked
    ]
