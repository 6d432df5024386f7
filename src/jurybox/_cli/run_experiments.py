"""``jurybox run`` of an experiment (a suite with ``variants:`` or ``trials:``): the matrix at the end.

Each variant is an ordinary run and writes its file reports as any run does;
the console shows the variants side by side once they have all run, read back
from the store, instead of one long table per variant.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

from jurybox import runs
from jurybox.experiments import console_text, experiment_view
from jurybox.store import StoreError

if TYPE_CHECKING:
    from jurybox._cli.run import RunRequest


def experiment_request(request: RunRequest) -> RunRequest:
    """How one variant's run is reported: its file formats as asked, its console table left to the matrix."""
    return replace(request, formats=tuple(fmt for fmt in request.formats if fmt != "console"))


def print_experiments(prepared: runs.PreparedRun, formats: Any, console: Console, status: Console) -> None:
    """Each experiment of the request, as the 80-column matrix (when the console format was asked for)."""
    if prepared.store is None or not prepared.experiments:
        if prepared.experiments:
            status.print("the experiment's matrix is read from the store: run without --no-store to see it")
        return
    for experiment in prepared.experiments.values():
        try:
            view = experiment_view(prepared.store, experiment)
        except StoreError as exc:
            status.print(f"[yellow]warning:[/] cannot read experiment {experiment}: {escape(str(exc))}")
            continue
        if "console" in formats:
            console.out(console_text(view), end="", highlight=False)
        status.print(
            f"experiment {experiment}: jurybox experiment show {experiment} --format markdown|json|html",
            highlight=False,
            soft_wrap=True,
        )
