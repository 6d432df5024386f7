"""``jurybox judge-traces``: judge what an agent's OpenTelemetry traces say it did."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from jurybox._cli.check import verdict_table
from jurybox._cli.common import StoreOption, console, error_console, fail, opened_store
from jurybox._cli.otel_option import OtelEndpointOption, otel_exporter
from jurybox.core import (
    TIER_LLM,
    CaseRecord,
    Context,
    Status,
    run_sync,
    to_jsonable,
)
from jurybox.suites import JudgeModelError, SuiteError, load_judges
from jurybox.traces import (
    ProtobufUnavailableError,
    ReadStats,
    ajudge_contexts,
    case_name,
    read_traces,
)

MAX_TRACE_CONTEXTS = 100_000
"""Contexts one ``judge-traces`` judges: a bigger export is split, or judged online (``serve --otlp``)."""
MAX_TABLE_ROWS = 1_000


def judge_traces_command(
    file: Annotated[Path, typer.Argument(help="An OTLP trace export: OTLP/JSON (one request a line) or protobuf.")],
    judges: Annotated[Path, typer.Option("--judges", "-j", help="The judges file (YAML: judges, judge_model).")],
    judge_model: Annotated[
        str | None, typer.Option("--judge-model", help="Model for the LLM judges (over the file's judge_model).")
    ] = None,
    format: Annotated[str, typer.Option("--format", help="auto, json or protobuf.")] = "auto",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write every verdict as JSON Lines here.")
    ] = None,
    suite: Annotated[
        str | None, typer.Option("--suite", help="Keep the verdicts in the store as a run of this suite.")
    ] = None,
    store_url: StoreOption = None,
    concurrency: Annotated[int, typer.Option("--concurrency", min=1, max=256, help="Traces judged at once.")] = 8,
    otel_endpoint: OtelEndpointOption = None,
    gate: Annotated[bool, typer.Option("--gate/--no-gate", help="Exit 1 when any verdict is not a pass.")] = True,
) -> None:
    """Judge every agent run in an OpenTelemetry trace export with the judges of a judges file."""
    if format not in ("auto", "json", "protobuf"):
        raise typer.BadParameter(f"--format must be auto, json or protobuf, got {format!r}")
    try:
        built = load_judges(judges, judge_model=judge_model)
    except (SuiteError, JudgeModelError) as exc:
        fail(str(exc), to=error_console())
    has_model = any(b.tier == TIER_LLM and b.own_model for b in built) or _suite_model(built)
    chosen = [b for b in built if b.tier != TIER_LLM or b.own_model or has_model]
    left_out = [b.label for b in built if b not in chosen]
    if left_out:
        error_console().print(f"note: no judge model: the LLM judges {', '.join(left_out)} are left out")
    if not chosen:
        fail("no judge is left to run: give --judge-model or set JURYBOX_JUDGE_MODEL", to=error_console())
    stats = ReadStats()
    contexts = _read(file, stats, format)
    exporter = otel_exporter(otel_endpoint)
    records = run_sync(lambda: _judge(contexts, chosen, concurrency), thread_name="jurybox-judge-traces")
    out = console()
    out.print(verdict_table([(record.case, record.judgment) for record in records[:MAX_TABLE_ROWS]]))
    counts = {status: sum(1 for r in records if r.status is status) for status in Status}
    out.print(escape(stats.summary()))
    out.print(", ".join(f"{n} {status.value}" for status, n in counts.items()))
    for problem in stats.problems:
        error_console().print(f"skipped: {escape(problem)}")
    if output is not None:
        _write_jsonl(output, records)
    if suite is not None:
        run_id = _store(store_url, suite, file, records)
        out.print(f"stored as run {run_id} of suite {escape(suite)}")
    if exporter is not None:
        exporter.export_records(records, run_name=f"judge-traces {file.name}")
        exporter.close()
    if gate and counts[Status.PASS] != len(records):
        raise typer.Exit(1)


def _suite_model(built: list[Any]) -> bool:
    return any(getattr(b.judge, "model", None) is not None for b in built if b.tier == TIER_LLM)


def _read(file: Path, stats: ReadStats, format: str) -> list[Context]:
    contexts: list[Context] = []
    try:
        for context in read_traces(file, stats=stats, format=format):  # type: ignore[arg-type]
            contexts.append(context)
            if len(contexts) > MAX_TRACE_CONTEXTS:
                fail(
                    f"{file}: refused: more than {MAX_TRACE_CONTEXTS:,} agent runs; split the export",
                    to=error_console(),
                )
    except OSError as exc:
        fail(f"cannot read {file}: {exc.strerror or exc}", to=error_console())
    except ProtobufUnavailableError as exc:
        fail(str(exc), to=error_console())
    return contexts


async def _judge(contexts: list[Context], judges: list[Any], concurrency: int) -> list[CaseRecord]:
    records = [record async for record in ajudge_contexts(contexts, judges, concurrency=concurrency)]
    order = {case_name(context): index for index, context in enumerate(contexts)}
    return sorted(records, key=lambda record: order.get(record.case, 0))


def _write_jsonl(path: Path, records: list[CaseRecord]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(
                json.dumps(
                    to_jsonable(
                        {
                            "case": record.case,
                            "trace_id": record.metadata.get("trace_id"),
                            "span_id": record.metadata.get("span_id"),
                            "status": record.status.value,
                            "score": record.score,
                            "judgment": record.judgment.to_dict(),
                            "context": record.context.to_dict() if record.context else None,
                        }
                    )
                )
                + "\n"
            )


def _store(url: str | None, suite: str, file: Path, records: list[CaseRecord]) -> str:
    unique: dict[str, CaseRecord] = {}
    for record in records:
        unique.setdefault(record.case, record)  # the same agent span twice in one export: judged once
    with opened_store(url, writes=True, errors=error_console()) as store:
        plan = {
            name: {"trace_id": r.metadata.get("trace_id"), "span_id": r.metadata.get("span_id")}
            for name, r in unique.items()
        }
        run_id = store.runs.begin(suite, cases=plan, config={"source": "traces", "file": str(file)})
        store.results.record_many(run_id, list(unique.values()))
        store.finish_run(run_id)
    return run_id


def register(app: typer.Typer) -> None:
    app.command(name="judge-traces")(judge_traces_command)
