"""``jurybox calibrate``: judges against human labels, side by side, with intervals and a CI gate."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from jurybox._cli.common import open_for_command
from jurybox.calibrate import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    LABEL_KINDS,
    CalibrationInputError,
    CalibrationResult,
    LabelKind,
    NumpyMissingError,
    calibration_figures,
    load_labelled_set,
    to_console,
    to_html,
    to_markdown,
)
from jurybox.store import StoreAccessError, StoreError

EXIT_BELOW_BAR = 1
EXIT_USAGE = 2


def calibrate_command(
    dataset: Annotated[
        Path, typer.Argument(help="Labelled set: .jsonl, .csv, .yaml, or a suite with label: good|bad cases.")
    ],
    judge: Annotated[
        list[str],
        typer.Option(
            "--judge",
            "-j",
            help="A judge: a registered name ('correctness'), with options ('correctness: {threshold: 0.8}'), "
            "or module:attr (a judge, jury or cascade). Repeat to compare judges.",
        ),
    ],
    recorded: Annotated[
        Path | None,
        typer.Option("--recorded", "-r", help="Recorded judge replies (JSONL: id, judge, order, text): no model call."),
    ] = None,
    kind: Annotated[
        str | None, typer.Option("--kind", help=f"Label kind: {', '.join(LABEL_KINDS)} (default: inferred).")
    ] = None,
    slice_by: Annotated[
        list[str] | None, typer.Option("--slice", help="Slice by 'tags' or a metadata field. Repeatable.")
    ] = None,
    fail_under: Annotated[
        str | None, typer.Option("--fail-under", help="Exit 1 when a judge is below a bar, e.g. kappa=0.6,tnr=0.8.")
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", help="Judge model for registered judges, e.g. openai:gpt-4o-mini.")
    ] = None,
    resamples: Annotated[
        int, typer.Option("--resamples", min=0, help="Bootstrap resamples per interval.")
    ] = DEFAULT_RESAMPLES,
    seed: Annotated[int, typer.Option("--seed", min=0, help="Bootstrap seed.")] = DEFAULT_SEED,
    json_path: Annotated[
        Path | None, typer.Option("--json", help="Write the result as JSON here ('-': stdout).")
    ] = None,
    rows: Annotated[bool, typer.Option("--rows", help="Put every row's verdict in the JSON.")] = False,
    markdown_path: Annotated[Path | None, typer.Option("--markdown", help="Write a Markdown report here.")] = None,
    html_path: Annotated[Path | None, typer.Option("--html", help="Write a self-contained HTML report here.")] = None,
    disagreements: Annotated[int, typer.Option("--disagreements", min=0, help="Disagreements shown per judge.")] = 5,
    store: Annotated[
        str | None,
        typer.Option(
            "--store",
            help="Save each judge's calibration to this store, where run reports find it "
            "(default $JURYBOX_STORE or sqlite:///.jurybox/jurybox.db, as jurybox run).",
        ),
    ] = None,
    no_store: Annotated[bool, typer.Option("--no-store", help="Do not save the calibrations.")] = False,
) -> None:
    """Measure judges against human labels: accuracy, TPR/TNR, kappa, alpha, correlations, intervals."""
    console = Console()
    errors = Console(stderr=True, soft_wrap=True)  # file:line:field messages stay on one line

    def usage_error(message: str) -> typer.Exit:
        errors.print(f"[red]error:[/] {escape(message)}")
        return typer.Exit(EXIT_USAGE)

    if kind is not None and kind not in LABEL_KINDS:
        raise usage_error(f"--kind must be one of {', '.join(LABEL_KINDS)}, got {kind!r}")
    chosen: LabelKind | None = kind  # checked just above
    try:
        # numpy is imported here, for the figures (an extra): `jurybox --help` and `run` do without it.
        from jurybox.calibrate import calibrate, parse_bars, shortfalls
    except NumpyMissingError as exc:
        raise usage_error(str(exc)) from None
    try:
        labelled = load_labelled_set(dataset, kind=chosen)
        bars = parse_bars(fail_under, labelled.kind) if fail_under is not None else None
        result = calibrate(
            labelled, list(judge), recorded=recorded, slices=slice_by or (), resamples=resamples, seed=seed, model=model
        )
    except CalibrationInputError as exc:
        raise usage_error(str(exc)) from None
    except ValueError as exc:
        raise usage_error(str(exc)) from None
    if json_path is not None:
        text = result.to_json(rows=rows)
        if str(json_path) == "-":
            sys.stdout.write(text + "\n")
        else:
            json_path.write_text(text + "\n", encoding="utf-8")
    if str(json_path) != "-":
        to_console(result, console, disagreements=disagreements)
    if markdown_path is not None:
        markdown_path.write_text(to_markdown(result), encoding="utf-8")
    if html_path is not None:
        html_path.write_text(to_html(result), encoding="utf-8")
    if not no_store:
        try:
            where = save_calibrations(result, store)
        except (StoreError, StoreAccessError, ValueError) as exc:
            raise usage_error(f"cannot save the calibrations to the store: {exc}") from None
        errors.print(f"saved {len(result.judges)} calibration(s) to the store {escape(where)}", highlight=False)
    if bars is not None:
        below = shortfalls(result, bars)
        for item in below:
            errors.print(f"[red]below the bar:[/] {escape(str(item))}")
        if below:
            raise typer.Exit(EXIT_BELOW_BAR)


def save_calibrations(result: CalibrationResult, url: str | None) -> str:
    """File each judge's calibration in the store at ``url`` under its identity; return the store's URL.

    The whole calibration is kept, disagreements included but not every row's verdict
    (``--rows`` is for the JSON file): a store holds many calibrations.
    """
    with open_for_command(url, writes=True) as opened:
        for judge in result.judges:
            opened.calibrations.save(
                judge.identity.to_dict(),
                figures=calibration_figures(result, judge),
                calibration=judge.to_dict(),
                dataset=result.dataset,
            )
        return opened.url


def register(app: typer.Typer) -> None:
    app.command("calibrate")(calibrate_command)
