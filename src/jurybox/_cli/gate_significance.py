"""``jurybox gate --method significance``: which gate rules to apply, and the significance rule's findings."""

from __future__ import annotations

from collections.abc import Sequence

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from jurybox._cli.layout import print_fitted, stacked_row
from jurybox.store import SignificanceCheck, SignificanceResult

METHODS = ("threshold", "significance", "both")

_STYLE = {"ok": "green", "regression": "bold red", "inconclusive": "yellow", "warmup": "cyan"}
_COLUMNS = ("metric", "run", "baseline", "change", "95% interval", "p (Holm)", "cases", "state")


def gate_methods(asked: Sequence[str]) -> set[str]:
    """The rules ``--method`` asks for (``both`` is both); threshold alone when none is given.

    Raises:
        typer.BadParameter: an unknown method.
    """
    found: set[str] = set()
    for item in asked:
        name = item.strip().lower()
        if name not in METHODS:
            raise typer.BadParameter(f"{item!r}: expected one of {', '.join(METHODS)}", param_hint="--method")
        found |= {"threshold", "significance"} if name == "both" else {name}
    return found or {"threshold"}


def print_significance(out: Console, result: SignificanceResult) -> bool:
    """The significance rule's table and findings; True when a metric regressed significantly."""
    runs = ", ".join(run.id for run in result.baseline) or "none"
    out.print(
        Text(
            f"Significance at alpha {result.alpha:g}: cases paired with {len(result.baseline)} baseline run(s): {runs}"
        )
    )
    left_out = f"This run: {result.errors} error, {result.abstains} abstain (left out, never a pass or a fail)"
    out.print(Text(left_out, style="dim"))
    table = Table(title="Drops larger than the noise", title_justify="left")
    for column in _COLUMNS:
        table.add_column(column, justify="left" if column in ("metric", "state") else "right", no_wrap=True)
    blocks = []
    for check in result.metrics:
        cells = _cells(check)
        table.add_row(*cells)
        details = [
            Text(f"{label} ", style="dim") + cell for label, cell in zip(_COLUMNS[1:-1], cells[1:-1], strict=True)
        ]
        blocks.append(stacked_row(Text(check.metric, style="bold") + Text(" · ") + cells[-1], details))
    print_fitted(out, table, blocks)
    for check in result.metrics:
        style = _STYLE[check.state]
        label = "REGRESSION" if check.state == "regression" else check.state
        out.print(Text(f"{label} {check.describe()}", style=style if check.state != "ok" else ""))
        if check.added or check.removed or check.undecided:
            out.print(
                Text(
                    f"    {check.added} added, {check.removed} removed, {check.undecided} undecided "
                    "(none counted as a failure)",
                    style="dim",
                )
            )
    return bool(result.regressions)


def _cells(check: SignificanceCheck) -> list[Text]:
    f = check.finding
    interval = "-" if f.interval is None else f"[{f.interval.low * 100:+.1f}, {f.interval.high * 100:+.1f}]"
    return [
        Text(check.metric),
        Text("-" if f.current_rate is None else f"{f.current_rate:.1%}"),
        Text("-" if f.baseline_rate is None else f"{f.baseline_rate:.1%}"),
        Text("-" if f.difference is None else f"{f.difference * 100:+.1f} pts"),
        Text(interval),
        Text(_p(check.adjusted_p)),
        Text(str(f.pairs)),
        Text(check.state, style=_STYLE[check.state]),
    ]


def _p(value: float | None) -> str:
    if value is None:
        return "-"
    return "< 0.001" if value < 0.001 else f"{value:.3f}"
