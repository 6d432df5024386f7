"""Stored runs from the command line: ``jurybox runs`` lists them, ``jurybox report RUN`` re-renders one.

Both only read the store: they never create one where none exists (a typo in
``--store`` says so instead of leaving an empty database behind). ``report``
uses the same writers and file naming rule as ``jurybox run``, so a report
rendered later is the report the run would have written.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from jurybox._cli.common import StoreOption, console, error_console, fail, opened_store
from jurybox.report import FORMATS, RunReport, check_report_output, report_from_store, write_reports
from jurybox.store import RunInfo

#: From this width on, ``jurybox runs`` also shows the start time (the run id already begins with it).
WIDE = 110

_STATUS_STYLE = {"completed": "green", "running": "cyan", "interrupted": "yellow", "failed": "bold red"}

FormatsOption = Annotated[
    list[str] | None,
    typer.Option("--format", "-f", help=f"Report format, repeatable: {', '.join(FORMATS)}. Default: console."),
]
"""``--format``: the report formats of ``jurybox run`` and ``jurybox report``."""

OutputOption = Annotated[
    str | None, typer.Option("--output", "-o", help="File or directory for file formats; '-' for stdout.")
]
"""``--output``: where ``jurybox run`` and ``jurybox report`` write their file formats."""


# -- what every report command prints after writing --------------------------------------------


def summary_line(report: RunReport) -> str:
    """One line: the run, how many cases passed, and what did not pass."""
    totals = report.totals
    rest = [
        f"{count} {label}"
        for count, label in ((totals.failed, "failed"), (totals.errored, "errored"), (totals.abstained, "abstained"))
        if count
    ]
    detail = f" ({', '.join(rest)})" if rest else ""
    return f"{report.suite} · run {report.run_id} · {report.status}: {totals.passed}/{totals.cases} passed{detail}"


def print_written(report: RunReport, written: Mapping[str, Path | None], out: Console) -> None:
    """After ``write_reports``: the summary when no console table was printed, then every file written.

    A run with ``--format html --output DIR`` would otherwise end in silence, and CI logs
    would not say where the report went.
    """
    if "console" not in written:
        out.print(escape(summary_line(report)), highlight=False)
    for fmt, path in written.items():
        if path is not None:
            out.print(f"wrote {fmt} report: {escape(str(path))}", highlight=False, soft_wrap=True)


# -- jurybox report -------------------------------------------------------------------------------


def report(
    run: Annotated[str, typer.Argument(help="The run: id, unique id prefix or 'last'.")],
    formats: FormatsOption = None,
    output: OutputOption = None,
    suite: Annotated[str | None, typer.Option("--suite", help="With 'last': the latest run of this suite.")] = None,
    verbose: Annotated[
        bool,
        typer.Option("--verbose", "-v", help="Console: list every passing case with its reasoning, not just names."),
    ] = False,
    store_url: StoreOption = None,
) -> None:
    """Render a stored run again, in any format: no Python, no re-run, no judge calls."""
    wanted = tuple(formats or ("console",))
    errors = error_console()
    try:
        check_report_output(wanted, output)
    except ValueError as exc:
        fail(str(exc), to=errors)
    with opened_store(store_url, existing=True, errors=errors) as store:
        info = store.runs.resolve(run, suite=suite)
        rendered = report_from_store(store, info.id)
        try:
            written = write_reports(rendered, wanted, output, console=console(), console_verbose=verbose)
        except (ValueError, OSError) as exc:
            fail(f"cannot write the report: {exc}", to=errors)
    # Paths go to stderr: with --output - the report itself is on stdout.
    print_written(rendered, written, errors)


# -- jurybox runs ---------------------------------------------------------------------------------


def runs(
    suite: Annotated[str | None, typer.Argument(help="Only runs of this suite.")] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", help="How many runs, newest first.", min=1)] = 20,
    store_url: StoreOption = None,
) -> None:
    """List stored runs, newest first: id, suite, status, results and duration."""
    out = console()
    with opened_store(store_url, existing=True, errors=error_console()) as store:
        found = store.runs.newest(suite, limit=limit)
        where = store.url
    if not found:
        what = f"suite {suite!r}" if suite else "any suite"
        out.print(f"no runs of {escape(what)} in store {escape(where)}", highlight=False)
        return
    wide = out.width >= WIDE
    out.print(runs_table(found, wide=wide))
    out.print(
        f"{len(found)} run(s). See one with: jurybox report RUN (id, unique prefix or 'last')",
        highlight=False,
    )
    if not wide:  # say what is left out, rather than leave it to be missed
        out.print(
            f"(the started (UTC) column needs {WIDE} columns: the run id begins with its date and time)",
            highlight=False,
            style="dim",
        )


def runs_table(found: list[RunInfo], *, wide: bool) -> Table:
    """The ``jurybox runs`` table: ids and statuses never cut; a long suite name wraps, never elided."""
    table = Table(box=None, pad_edge=False, header_style="bold")
    table.add_column("run", no_wrap=True)
    table.add_column("suite", overflow="fold")
    table.add_column("status", no_wrap=True)
    table.add_column("results", overflow="fold")
    table.add_column("time", justify="right", no_wrap=True)
    if wide:
        table.add_column("started (UTC)", no_wrap=True)
    for info in found:
        cells: list[str | Text] = [
            info.id,
            escape(info.suite),
            Text(info.status, style=_STATUS_STYLE.get(info.status, "")),
            results_text(info),
            duration_text(info),
        ]
        if wide:
            cells.append(f"{info.started_at:%Y-%m-%d %H:%M}")
        table.add_row(*cells)
    return table


def results_text(info: RunInfo) -> str:
    """``18 pass 2 fail`` (+ errors, abstentions, and ``of 30`` while cases are missing)."""
    parts = [f"{info.passed} pass", f"{info.failed} fail"]
    if info.errored:
        parts.append(f"{info.errored} error")
    if info.abstained:
        parts.append(f"{info.abstained} abstain")
    if info.recorded < info.planned:
        parts.append(f"of {info.planned}")
    return " ".join(parts)


def duration_text(info: RunInfo) -> str:
    """Wall time of a finished run, else the time its recorded cases took."""
    seconds = info.wall_time if info.wall_time is not None else info.duration
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{rest:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def register(app: typer.Typer) -> None:
    """Add ``report`` and ``runs`` to the ``jurybox`` app."""
    app.command()(report)
    app.command()(runs)
