"""``jurybox check``: judge recorded executions (JSON Lines) with a judge from a Python module."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from jurybox.core import Context, Judgment, Status, contexts_from_jsonl, evaluate

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
        with runs.open(encoding="utf-8") as handle:
            contexts: list[Context] = contexts_from_jsonl(handle, str(runs))
    except OSError as exc:
        raise typer.BadParameter(f"cannot read {runs}: {exc}") from exc
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    chosen = load_judge(judge)
    rows = []
    for number, context in enumerate(contexts, start=1):
        label = str(context.metadata.get("case", f"#{number}"))
        rows.append((label, evaluate(chosen, context)))
    console = Console()
    console.print(verdict_table(rows))
    counts = {status: sum(1 for _, j in rows if j.status is status) for status in Status}
    console.print(", ".join(f"{n} {status.value}" for status, n in counts.items()))
    if gate and counts[Status.PASS] != len(rows):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command(name="check")(check)
