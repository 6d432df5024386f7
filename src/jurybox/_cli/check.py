"""``jurybox check``: judge recorded executions (JSON Lines) with a judge from a Python module."""

from __future__ import annotations

import functools
import importlib
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from jurybox.core import MAX_INPUT_BYTES, Judgment, Status, aevaluate, iter_contexts_jsonl, run_sync

#: Records one ``jurybox check`` judges: a corpus bigger than this is a suite's work.
MAX_CHECK_RECORDS = 100_000
#: Rows the verdict table lists (a terminal table of more is unreadable and slow to draw).
MAX_TABLE_ROWS = 1_000

STATUS_STYLE = {Status.PASS: "green", Status.FAIL: "red", Status.ABSTAIN: "yellow", Status.ERROR: "magenta"}


def load_judge(spec: str) -> Any:
    """Import ``module:attribute`` (the module's folder may be the current one)."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise typer.BadParameter(f"{spec!r} is not module:attribute (e.g. examples.recorded.judges:cascade)")
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise typer.BadParameter(f"cannot import {module_name!r}: {exc}") from exc
    try:
        judge = getattr(module, attribute)
    except AttributeError as exc:
        raise typer.BadParameter(f"{module_name!r} has no {attribute!r}") from exc
    if not callable(judge):
        raise typer.BadParameter(f"{spec} is a {type(judge).__name__}, not a judge")
    return judge


def verdict_table(rows: list[tuple[str, Judgment]]) -> Table:
    table = Table(title="Verdicts", show_lines=False)
    for column in ("case", "verdict", "score", "decided by", "reasoning"):
        table.add_column(column, overflow="fold")
    for label, judgment in rows:
        value = "-" if judgment.value is None else f"{judgment.value:.2f}"
        style = STATUS_STYLE[judgment.status]
        table.add_row(
            escape(label),
            f"[{style}]{judgment.status.value.upper()}[/]",
            value,
            escape(judgment.decided_by or judgment.judge),
            escape(judgment.reasoning.splitlines()[0] if judgment.reasoning else ""),
        )
    return table


def check(
    runs: Annotated[Path, typer.Argument(help="Recorded executions, one JSON Context a line (.jsonl).")],
    judge: Annotated[str, typer.Option("--judge", "-j", help="The judge to apply, as module:attribute.")],
    gate: Annotated[bool, typer.Option("--gate/--no-gate", help="Exit 1 when any verdict is not a pass.")] = True,
) -> None:
    """Judge recorded executions and print a verdict table."""
    try:
        records = _count_records(runs)
    except OSError as exc:
        raise typer.BadParameter(f"cannot read {runs}: {exc}") from exc
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    chosen = load_judge(judge)
    try:
        rows, counts = run_sync(functools.partial(_judge_all, runs, chosen), thread_name="jurybox-check")
    except (OSError, ValueError) as exc:  # the file changed since it was checked
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    console = Console()
    console.print(verdict_table(rows))
    if records > len(rows):
        console.print(f"(the first {len(rows):,} of {records:,} verdicts; the counts below are for all)")
    console.print(", ".join(f"{n} {status.value}" for status, n in counts.items()))
    if gate and counts[Status.PASS] != records:
        raise typer.Exit(1)


def _count_records(runs: Path) -> int:
    """Check every line before judging any (a bad line stops the run before it costs anything); the count.

    Raises:
        ValueError: the file is over the size or record limit, or a line is not a recorded execution.
    """
    size = runs.stat().st_size
    if size > MAX_INPUT_BYTES:
        raise ValueError(f"{runs}: refused: the file is {size:,} bytes, over the {MAX_INPUT_BYTES // 2**20} MB limit")
    records = 0
    with runs.open("rb") as raw:  # counted first, cheaply: a file far over the limit is refused at once
        for number, line in enumerate(raw, start=1):
            records += bool(line.strip())
            if records > MAX_CHECK_RECORDS:
                raise ValueError(
                    f"{runs}:{number}: refused: more than {MAX_CHECK_RECORDS:,} records; "
                    "split the file, or judge a corpus this size with jurybox run and a cases_file"
                )
    try:
        with runs.open(encoding="utf-8") as handle:
            for _ in iter_contexts_jsonl(handle, str(runs)):
                pass
    except UnicodeDecodeError as exc:
        raise ValueError(f"{runs}: not UTF-8 text ({exc.reason})") from None
    return records


async def _judge_all(runs: Path, judge: Any) -> tuple[list[tuple[str, Judgment]], dict[Status, int]]:
    """Every record judged on one event loop, read one at a time; the first rows kept for the table."""
    rows: list[tuple[str, Judgment]] = []
    counts = dict.fromkeys(Status, 0)
    with runs.open(encoding="utf-8") as handle:
        for number, (_, context) in enumerate(iter_contexts_jsonl(handle, str(runs)), start=1):
            judgment = await aevaluate(judge, context)
            counts[judgment.status] += 1
            if len(rows) < MAX_TABLE_ROWS:
                rows.append((str(context.metadata.get("case", f"#{number}")), judgment))
    return rows, counts


def register(app: typer.Typer) -> None:
    app.command(name="check")(check)
