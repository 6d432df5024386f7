"""Writing several report formats at once, with one naming rule.

Naming rule for ``output``:

* ``"-"``: the one requested file format goes to standard output.
* A path with a file suffix (``junit.xml``, ``report.html``) and exactly one file format:
  that file is written, whatever its name.
* Anything else (an existing directory, a path without a suffix, or several file
  formats): ``output`` is a directory (created if missing) and each format is written
  as ``<suite>.<ext>`` in it: ``.json``, ``.junit.xml``, ``.md``, ``.html`` (a format an
  installed plug-in registers says its own extension), where
  ``<suite>`` is the suite name with characters other than letters, digits, ``.``,
  ``_`` and ``-`` replaced by ``-``. Two suites in one directory therefore never collide.

``console`` is never a file: it prints to the given rich console.
Files are written atomically (a temporary file renamed into place), so a CI step
never reads half a report.
"""

from __future__ import annotations

import os
import re
import secrets
import sys
from collections.abc import Iterable
from pathlib import Path

from rich.console import Console

from jurybox.report._console import render_console
from jurybox.report._formats import BUILT_IN, canonical_format, report_format, report_formats, unknown_formats
from jurybox.report._model import RunReport

FORMATS = BUILT_IN
"""jurybox's own report formats, in the order they are produced (``report_formats()`` adds the plug-ins')."""

EXTENSIONS = {"json": ".json", "junit": ".junit.xml", "markdown": ".md", "html": ".html"}
"""File extension of each of jurybox's own file formats under the directory naming rule."""

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def report_filename(suite: str, fmt: str) -> str:
    """File name of format ``fmt`` for ``suite`` under the directory naming rule."""
    stem = _UNSAFE.sub("-", suite).strip("-.") or "suite"
    return stem + report_format(fmt).extension


def write_reports(
    report: RunReport,
    formats: Iterable[str],
    output: str | Path | None = None,
    *,
    console: Console | None = None,
    console_rows: int | None = None,
    console_verbose: bool = False,
) -> dict[str, Path | None]:
    """Produce every requested format; see the module docstring for the naming rule.

    Args:
        report: The run.
        formats: Format names (``FORMATS``, or one an installed plug-in registers); repeats are ignored.
        output: ``"-"``, a file or a directory; required when a file format is asked for.
        console: Where ``console`` prints (default: standard output).
        console_rows: Show at most this many cases in the console table, failing first
            (None: every case).
        console_verbose: List every passing case in the console with its reasoning (``jurybox run -v``).

    Returns:
        Format -> the file written (None for ``console`` and for standard output).

    Raises:
        ValueError: an unknown format, no ``output`` for a file format, ``"-"`` with
            several file formats, or an existing directory given where a file is meant.
    """
    wanted = _known(formats)
    file_formats = _file_formats(wanted, output)
    to_stdout = output is not None and str(output) == "-"
    target = Path(output) if output is not None else Path()
    single_file = len(file_formats) == 1 and target.suffix != "" and not target.is_dir()
    written: dict[str, Path | None] = {}

    def write(fmt: str) -> None:
        render = report_format(fmt).render
        if render is None:  # not reached: only file formats are written here
            raise ValueError(f"report format {fmt!r} writes no file")
        if to_stdout:
            sys.stdout.writelines(render(report))
            written[fmt] = None
            return
        path = target if single_file else target / report_filename(report.suite, fmt)
        _write_atomic(path, render(report))
        written[fmt] = path

    # The JSON report of a streamed run adds the totals up in the pass that writes its cases
    # (see iter_json); written first, it spares the console and the other files a pass over the store.
    # Not on standard output, where the console table comes first as it always has.
    first = ["json"] if "json" in file_formats and not report.tallied and not to_stdout else []
    try:
        for fmt in first:
            write(fmt)
    finally:  # the table is printed even when that file could not be written
        if "console" in wanted:
            limit = console_rows if console_rows is not None and console_rows < len(report.cases) else None
            render_console(report, console or Console(), limit=limit, verbose=console_verbose)
            written["console"] = None
    for fmt in file_formats:
        if fmt not in first:
            write(fmt)
    return {fmt: written[fmt] for fmt in _in_order(list(written))}


def check_report_output(formats: Iterable[str], output: str | Path | None) -> None:
    """Refuse, before a run starts, the formats and output ``write_reports`` would refuse after it.

    Also refuses an output whose folder cannot be made or written (a path under a file, a
    read-only folder), so a long run does not end with "cannot write the report". Nothing is created.

    Raises:
        ValueError: what is wrong, naming the path.
    """
    wanted = _known(formats)
    file_formats = _file_formats(wanted, output)
    if not file_formats or output is None or str(output) == "-":
        return
    target = Path(output)
    single_file = len(file_formats) == 1 and target.suffix != "" and not target.is_dir()
    folder = target.parent if single_file else target
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise ValueError(f"cannot write reports to {target}: {existing} is a file, not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ValueError(f"cannot write reports to {target}: {existing} is not writable")


def _known(formats: Iterable[str]) -> list[str]:
    """The formats asked for, each by its registered name, repeats dropped.

    Raises:
        ValueError: an unknown format, with the closest name and the list of valid ones.
    """
    asked = list(dict.fromkeys(formats))
    named = {fmt: canonical_format(fmt) for fmt in asked}
    unknown = [fmt for fmt, name in named.items() if name is None]
    if unknown:
        raise ValueError(f"unknown report format(s) {unknown_formats(unknown)}; valid: {', '.join(report_formats())}")
    return list(dict.fromkeys(name for name in named.values() if name is not None))


def _in_order(names: list[str]) -> list[str]:
    """``names`` in ``report_formats()``' order (jurybox's own first, then by name), without listing every
    format: that would read every installed plug-in's entry point (and import its module) on each run."""
    order = {name: index for index, name in enumerate(BUILT_IN)}
    return sorted(names, key=lambda name: (order.get(name, len(order)), name))


def _file_formats(wanted: list[str], output: str | Path | None) -> list[str]:
    file_formats = [f for f in _in_order(wanted) if report_format(f).writes_file]
    if file_formats and output is None:
        raise ValueError(f"format(s) {', '.join(file_formats)} write files: give an output path (--output)")
    if output is not None and str(output) == "-" and len(file_formats) > 1:
        raise ValueError(f"output '-' (standard output) takes one format, got {', '.join(file_formats)}")
    return file_formats


def _write_atomic(path: Path, pieces: Iterable[str]) -> None:
    if path.is_dir():
        raise ValueError(f"{path} is a directory; cannot write a report file there")
    path.parent.mkdir(parents=True, exist_ok=True)
    # Not tempfile.mkstemp: its 0600 mode would make the report unreadable to a CI artifact
    # uploader running as another user; "x" mode honours the umask like any other file.
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        with temporary.open("x", encoding="utf-8", newline="\n") as stream:
            stream.writelines(pieces)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
