"""Judging the Contexts read from traces: every judge on every Context, as a suite case's cascade would.

Judges are grouped by tier (deterministic, similarity, LLM operations, LLM judge) in
one cascade per Context: an earlier tier's failure rejects the trace before the LLM
judges are paid for, as a suite case does. Each result is a ``CaseRecord`` (the store,
the reports and the exporter take it as they take a suite's).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterable, Sequence
from pathlib import Path
from typing import Any

from jurybox.core import (
    TIERS,
    Cascade,
    CaseRecord,
    Context,
    Judgment,
    Tier,
    aevaluate,
    judge_name,
    run_sync,
    tier_of,
)
from jurybox.traces._read import Format, read_traces
from jurybox.traces._spans import ReadStats

DEFAULT_CONCURRENCY = 8


def trace_cascade(judges: Sequence[Any], name: str = "trace") -> Cascade:
    """One cascade over ``judges``: plain judges, or built ones with ``judge`` and ``tier`` (``BuiltJudge``)."""
    if not judges:
        raise ValueError("judging traces needs at least one judge")
    groups: dict[str, list[Any]] = {tier: [] for tier in TIERS}
    for item in judges:
        judge = getattr(item, "judge", item)
        tier = getattr(item, "tier", None) if hasattr(item, "judge") else None
        groups[tier if tier in groups else tier_of(judge)].append(judge)
    present = [tier for tier in TIERS if groups[tier]]
    tiers = [
        Tier.final(*groups[tier], name=tier)
        if index == len(present) - 1
        else Tier.reject_on_any_fail(*groups[tier], name=tier)
        for index, tier in enumerate(present)
    ]
    return Cascade(*tiers, name=name)


def case_name(context: Context) -> str:
    """The name a trace's Context is recorded under: its span name, trace id and span id."""
    metadata = context.metadata
    return f"{metadata.get('span_name') or 'trace'} [{metadata.get('trace_id', '?')}/{metadata.get('span_id', '?')}]"


async def judge_context(context: Context, cascade: Cascade) -> CaseRecord:
    """One Context judged by the cascade, as a CaseRecord (an agent that failed is judged all the same)."""
    started = time.perf_counter()
    judgment: Judgment = await aevaluate(cascade, context)
    tokens = context.metadata.get("tokens")
    return CaseRecord(
        case=case_name(context),
        judgment=judgment,
        context=context,
        duration=time.perf_counter() - started,
        tokens=tokens if isinstance(tokens, int) else None,
        started_at=context.started_at,
        error=None,
        metadata={
            "source": "trace",
            "trace_id": context.metadata.get("trace_id"),
            "span_id": context.metadata.get("span_id"),
            "judged_by": judge_name(cascade),
        },
    )


async def ajudge_contexts(
    contexts: Iterable[Context], judges: Sequence[Any], *, concurrency: int = DEFAULT_CONCURRENCY
) -> AsyncIterator[CaseRecord]:
    """Each Context judged, ``concurrency`` at a time, as each finishes; Contexts are read as room frees up."""
    cascade = trace_cascade(judges)
    limit = max(1, concurrency)
    pending: set[asyncio.Task[CaseRecord]] = set()
    for context in contexts:
        pending.add(asyncio.ensure_future(judge_context(context, cascade)))
        if len(pending) >= limit:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                yield task.result()
    while pending:
        done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            yield task.result()


def judge_traces(
    path: str | Path,
    judges: Sequence[Any],
    *,
    stats: ReadStats | None = None,
    format: Format = "auto",
    concurrency: int = DEFAULT_CONCURRENCY,
) -> list[CaseRecord]:
    """Read a trace export and judge every Context in it with ``judges``; one CaseRecord per Context.

    Args:
        path: An OTLP/JSON or OTLP protobuf export.
        judges: Judges (functions, judge objects), or built ones (``jurybox.suites.load_judges``).
        stats: Filled with what was read and skipped.
        format: ``json``, ``protobuf`` or ``auto``.
        concurrency: Contexts judged at once.

    Example:
        >>> from jurybox.judges import tool_calls
        >>> records = judge_traces("traces.jsonl", [tool_calls(["search_hotels"])])  # doctest: +SKIP
    """
    read = stats if stats is not None else ReadStats()

    async def collect() -> list[CaseRecord]:
        return [
            record
            async for record in ajudge_contexts(
                read_traces(path, stats=read, format=format), judges, concurrency=concurrency
            )
        ]

    return run_sync(collect, thread_name="jurybox-judge-traces")
