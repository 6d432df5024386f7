"""``jurybox run`` of an experiment (a suite with ``variants:`` or ``trials:``): the matrix at the end.

Each variant is an ordinary run and writes its file reports as any run does;
the console shows the variants side by side once they have all run, read back
from the store, instead of one long table per variant.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

from jurybox import runs
from jurybox.store import StoreError

if TYPE_CHECKING:
    from jurybox._cli.run import RunRequest
    from jurybox.experiments import ExperimentView


def experiment_request(request: RunRequest) -> RunRequest:
    """How one variant's run is reported: its file formats as asked, its console table left to the matrix."""
    return replace(request, formats=tuple(fmt for fmt in request.formats if fmt != "console"))


EXPERIMENT_FILES = {"json": "json", "markdown": "md", "html": "html"}
"""The formats an experiment is also written in (into ``--output DIR``), and each file's extension."""


def check_variant_output(prepared: runs.PreparedRun, output: str | None) -> None:
    """Several variants write one report each: ``--output`` must then be a directory, as for several suites.

    Raises:
        runs.RunRequestError: ``--output`` names a file and more than one run will be written.
    """
    if len(prepared.suites) > 1 and output not in (None, "-") and Path(output).suffix:
        prepared.close()
        raise runs.RunRequestError(
            f"{len(prepared.suites)} runs (an experiment's variants) write a report each: --output must be a directory"
        )


def print_experiments(
    prepared: runs.PreparedRun, formats: Any, output: str | None, console: Console, status: Console
) -> None:
    """Each experiment of the request: the 80-column matrix (with the console format), and its files
    in the file formats it has (JSON, Markdown, HTML) in the ``--output`` directory."""
    if prepared.store is None or not prepared.experiments:
        if prepared.experiments:
            status.print("the experiment's matrix is read from the store: run without --no-store to see it")
        return
    # The experiments' views (and the statistics they use) only for a run that is one.
    from jurybox.experiments import console_text, experiment_view

    for experiment in prepared.experiments.values():
        try:
            view = experiment_view(prepared.store, experiment)
        except StoreError as exc:
            status.print(f"[yellow]warning:[/] cannot read experiment {experiment}: {escape(str(exc))}")
            continue
        if "console" in formats:
            console.out(console_text(view), end="", highlight=False)
        for fmt in formats:
            if fmt in EXPERIMENT_FILES and output not in (None, "-"):
                _write(view, fmt, Path(str(output)) / f"experiment-{experiment}.{EXPERIMENT_FILES[fmt]}", status)
        status.print(
            f"experiment {experiment}: jurybox experiment show {experiment} --format markdown|json|html",
            highlight=False,
            soft_wrap=True,
        )


def _write(view: ExperimentView, fmt: str, path: Path, status: Console) -> None:
    from jurybox.experiments import html_page, markdown_text

    text = {
        "json": lambda: json.dumps(view.to_dict(), indent=2) + "\n",
        "markdown": lambda: markdown_text(view),
        "html": lambda: html_page(view),
    }[fmt]()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        status.print(f"[red]error:[/] cannot write the experiment's {fmt}: {escape(str(exc))}")
        return
    status.print(f"wrote experiment {fmt}: {escape(str(path))}", highlight=False, soft_wrap=True)
