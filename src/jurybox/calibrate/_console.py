"""The console report: judges side by side, readable at 80 columns."""

from __future__ import annotations

from rich import box
from rich.console import Console, Group
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from jurybox.calibrate._format import (
    NAMES,
    count_names,
    figure_names,
    figure_text,
    headline,
    human_text,
    shorten,
    usage_rows,
)
from jurybox.calibrate._result import CalibrationResult, JudgeCalibration

DISAGREEMENTS_SHOWN = 5


def to_console(result: CalibrationResult, console: Console, *, disagreements: int = DISAGREEMENTS_SHOWN) -> None:
    """Print the calibration: figures, counts and spend per judge, confusion matrices, slices, disagreements."""
    console.print(Text(headline(result), style="bold"))
    if "alpha" in result.humans:
        console.print(
            f"People among themselves: Krippendorff's alpha {figure_text(result.humans['alpha'])} (the ceiling)"
        )
    console.print(_figures_table(result))
    for judge in result.judges:
        if judge.overall.confusion is not None:
            console.print(_confusion_table(judge))
    for judge in result.judges:
        for field in judge.slices:
            console.print(_slice_table(judge, field))
    if disagreements:
        for judge in result.judges:
            if judge.disagreement_count:
                console.print(_disagreement_table(judge, disagreements))


def _figures_table(result: CalibrationResult) -> Table:
    table = Table(box=box.SIMPLE_HEAD, title="judge vs people", title_justify="left", pad_edge=False)
    table.add_column("figure", overflow="fold")
    for judge in result.judges:
        table.add_column(escape(judge.name), overflow="fold", justify="right")
    for name in figure_names(result):
        table.add_row(NAMES.get(name, name), *(figure_text(j.figure(name)) for j in result.judges))
    table.add_section()
    for name in count_names(result):
        table.add_row(name, *(str(j.overall.counts.get(name, "-")) for j in result.judges))
    table.add_section()
    usage = [usage_rows(j) for j in result.judges]
    for name in usage[0]:
        table.add_row(name, *(u[name] for u in usage))
    return table


def _confusion_table(judge: JudgeCalibration) -> Table:
    confusion = judge.overall.confusion
    assert confusion is not None
    table = Table(
        box=box.SIMPLE_HEAD, title=f"{escape(judge.name)}: people (rows) x judge (columns)", title_justify="left"
    )
    table.add_column("")
    for column in confusion.columns:
        table.add_column(escape(column), justify="right")
    for row, counts in zip(confusion.rows, confusion.counts, strict=True):
        table.add_row(escape(row), *(str(c) for c in counts))
    return table


def _slice_table(judge: JudgeCalibration, field: str) -> Table:
    slices = judge.slices[field]
    names = [n for n in ("accuracy", "kappa", "tnr", "spearman") if n in judge.overall.figures][:2]
    table = Table(box=box.SIMPLE_HEAD, title=f"{escape(judge.name)} by {escape(field)}", title_justify="left")
    table.add_column(escape(field), overflow="fold")
    table.add_column("n", justify="right")
    for name in names:
        table.add_column(NAMES.get(name, name), justify="right")
    table.add_column("undecided", justify="right")
    for value, figures in slices.items():
        undecided = figures.counts.get("abstain", 0) + figures.counts.get("error", 0)
        table.add_row(
            escape(value),
            str(figures.counts["n"]),
            *(figure_text(figures.figures.get(n)) for n in names),
            str(undecided),
        )
    return table


def _disagreement_table(judge: JudgeCalibration, limit: int) -> Group:
    table = Table(box=box.SIMPLE_HEAD, show_lines=False, expand=False)
    table.add_column("id", overflow="fold")
    table.add_column("people")
    table.add_column("judge")
    table.add_column("conf.", justify="right")
    table.add_column("judge's reasoning", overflow="fold", ratio=1)
    for item in judge.disagreements[:limit]:
        confidence = "-" if item.confidence is None else f"{item.confidence:.2f}"
        table.add_row(
            escape(item.id),
            escape(human_text(item.human)),
            escape(item.judge),
            confidence,
            escape(shorten(item.reasoning, 160)),
        )
    title = Text(f"{judge.name}: {judge.disagreement_count} disagreement(s), most confident first", style="bold")
    return Group(title, table)
