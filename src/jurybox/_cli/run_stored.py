"""``jurybox run --suite NAME``: run the current version of a suite kept in the store.

The suite is exported from the store (``jurybox store export``) to a file in a
temporary folder and loaded like any suite file, except that its relative paths
(the agent's module or file, seeds, plugins) resolve against the current
directory, where ``jurybox store import`` was run from. The run then records the
version of every case it ran, as any run does.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape

from jurybox._cli.common import open_for_command
from jurybox.store import StoreAccessError, StoreError, export_suite_file

if TYPE_CHECKING:
    from jurybox._cli.run import RunRequest

EXIT_USAGE = 2
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def run_stored(
    request: RunRequest,
    execute: Callable[..., int],
    *,
    console: Console | None = None,
    status: Console | None = None,
) -> int:
    """Run the stored suites ``request.stored_suites`` through ``execute`` (``jurybox run``'s); the exit code."""
    status = status or Console(stderr=True)
    problem = _problem(request)
    if problem is not None:
        status.print(f"[red]error:[/] {escape(problem)}", highlight=False)
        return EXIT_USAGE
    with tempfile.TemporaryDirectory(prefix="jurybox-stored-") as folder:
        try:
            paths = _export(request, Path(folder))
        except (StoreError, StoreAccessError, OSError) as exc:
            status.print(f"[red]error:[/] {escape(str(exc))}", highlight=False)
            return EXIT_USAGE
        # The files live as long as the run: worker processes load the suite from them again.
        stored = replace(request, suites=tuple(paths), base_dir=Path.cwd())
        code: int = execute(stored, console=console, status=status)
        return code


def _problem(request: RunRequest) -> str | None:
    if request.suites:
        return "give suite files or --suite NAME (a suite kept in the store), not both"
    if request.no_store:
        return "--suite reads the suite from the store; it cannot be used with --no-store"
    if len(set(request.stored_suites)) != len(request.stored_suites):
        return "a --suite is given twice"
    return None


def _export(request: RunRequest, folder: Path) -> list[Path]:
    store = open_for_command(request.store)
    try:
        paths = []
        for index, name in enumerate(request.stored_suites):
            # The file's name is the suite's: the loader's messages name it (and never a hostile path).
            path = folder / f"{index}-{_UNSAFE.sub('_', name)[:80] or 'suite'}.yaml"
            export_suite_file(store, name, path)
            paths.append(path)
        return paths
    finally:
        store.close()


StoredSuiteOption = Annotated[
    list[str] | None,
    typer.Option(
        "--suite",
        help="Run the current version of this suite kept in the store (--store), instead of suite files "
        "(repeatable). Its relative paths resolve against the current directory.",
        show_default=False,
    ),
]


def run_request(request: RunRequest, execute: Callable[..., int]) -> int:
    """``jurybox run``: suite files through ``execute``, or the stored suites ``--suite`` names."""
    if request.stored_suites:
        return run_stored(request, execute)
    if not request.suites:
        Console(stderr=True).print(
            "[red]error:[/] give a suite file, or --suite NAME to run a suite kept in the store", highlight=False
        )
        return EXIT_USAGE
    return execute(request)
