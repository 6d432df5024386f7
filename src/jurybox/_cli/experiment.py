"""``jurybox experiment show | list``: an experiment's variants side by side, with paired statistics.

``jurybox run suite.yaml`` on a suite with ``variants:`` (or ``trials:``) prints
the experiment's matrix when it ends; ``experiment show`` prints it again, from
the store, as the console's 80 columns, JSON, Markdown (a pull-request comment)
or an HTML page with every variant's replies and judgments side by side.
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from jurybox._cli.common import StoreOption, console, fail, opened_store
from jurybox.experiments import console_text, experiment_view, html_page, markdown_text

experiment_app = typer.Typer(help="Experiments: a suite's variants compared case by case (variants: in a suite).")


class ExperimentFormat(StrEnum):
    console = "console"
    json = "json"
    markdown = "markdown"
    html = "html"


@experiment_app.command("show")
def show(
    experiment: Annotated[
        str, typer.Argument(help="The experiment's id, a unique prefix of it, or 'last'.", show_default=False)
    ] = "last",
    output_format: Annotated[
        ExperimentFormat, typer.Option("--format", "-f", help="console, json, markdown or html.")
    ] = ExperimentFormat.console,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file instead of standard output.")
    ] = None,
    rows: Annotated[
        int, typer.Option("--rows", min=0, help="Console: disagreeing cases listed at most (0: all).")
    ] = 30,
    store_url: StoreOption = None,
) -> None:
    """Show an experiment: each variant's pass rate with its interval, cost and latency; the cases the
    variants disagree on; and each variant against the first, with the number of pairs compared."""
    with opened_store(store_url, existing=True) as store:
        view = experiment_view(store, experiment)
    if output_format is ExperimentFormat.json:
        text = json.dumps(view.to_dict(), indent=2) + "\n"
    elif output_format is ExperimentFormat.markdown:
        text = markdown_text(view)
    elif output_format is ExperimentFormat.html:
        text = html_page(view)
    else:
        text = console_text(view, rows=rows or None)
    if output is None:
        console().out(text, end="", highlight=False)
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        fail(f"cannot write {output}: {exc}")
    console().print(f"wrote {output}", highlight=False)


@experiment_app.command("list")
def list_experiments(
    limit: Annotated[int, typer.Option("--limit", min=1, help="How many runs of experiments to look through.")] = 200,
    store_url: StoreOption = None,
) -> None:
    """List experiments, newest first: id, suite, and each variant's run and pass rate."""
    with opened_store(store_url, existing=True) as store:
        runs = [run for run in store.runs.newest(limit=limit) if run.experiment_id is not None]
    out = console()
    seen: dict[str, list[str]] = {}
    for run in runs:
        assert run.experiment_id is not None
        rate = "-" if run.pass_rate is None else f"{run.pass_rate:.1%}"
        seen.setdefault(run.experiment_id, []).insert(0, f"{run.variant or run.suite} {rate} ({run.status})")
    if not seen:
        out.print("no experiments in the store (a suite with variants: or trials: runs as one)")
    for experiment, variants in seen.items():
        out.print(f"{experiment}  {'  '.join(variants)}", highlight=False, markup=False)


def register(app: typer.Typer) -> None:
    """Add ``jurybox experiment`` to the CLI."""
    app.add_typer(experiment_app, name="experiment")
