"""What the commands share: opening the store, printing an error and exiting, and how figures are written.

Every command that uses the store opens it through :func:`opened_store` (or
:func:`open_for_command`, for ``jurybox run``, which keeps the store open across
its own error handling): a store that another process has locked says so before
the command waits for it, a store that cannot be read or does not exist is one
``error:`` line and exit code 2, never a traceback.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.text import Text

if TYPE_CHECKING:  # the store (SQLAlchemy) loads when a command opens it
    from jurybox.store import Store


EXIT_USAGE = 2
"""The exit code of a usage error: a bad option, a store that cannot be opened, a run that does not exist."""

BUSY_TIMEOUT = 30.0
"""Seconds a command waits for another process's write lock on a SQLite store."""

StoreOption = Annotated[
    str | None,
    typer.Option(
        "--store",
        help="Store URL (sqlite:///path.db or postgresql+psycopg://...). Default: $JURYBOX_STORE, "
        "else sqlite:///.jurybox/jurybox.db.",
        show_default=False,
    ),
]
"""The ``--store`` option of every command that reads a store (``jurybox serve`` takes it from here)."""


def console() -> Console:
    """Standard output, for what a command prints (built per command, so a test runner's swapped stdout is used)."""
    return Console(highlight=False, soft_wrap=False)


def error_console() -> Console:
    """Standard error, one line per message however long (a store URL or a path must stay whole to be copied)."""
    return Console(stderr=True, highlight=False, soft_wrap=True)


def fail(message: str, *, to: Console | None = None) -> NoReturn:
    """Print ``error: message`` (on ``to``; standard output by default) and exit with :data:`EXIT_USAGE`."""
    (to or console()).print(Text(f"error: {message}", style="bold red"))
    raise typer.Exit(EXIT_USAGE)


def open_for_command(
    url: str | None,
    *,
    existing: bool = False,
    writes: bool = False,
    busy_timeout: float = BUSY_TIMEOUT,
    notice: Console | None = None,
) -> Store:
    """Open the store a command uses; the caller closes it.

    Args:
        url: The ``--store`` URL (None: ``$JURYBOX_STORE``, else the default file).
        existing: Refuse a SQLite file that does not exist instead of creating an empty store
            (for commands that only read: a typo in ``--store`` must not leave a new file behind).
        writes: The command writes: when another process holds the SQLite store's write lock,
            say on ``notice`` that it waits, and for how long, before waiting in silence.
        busy_timeout: Seconds to wait for that lock.
        notice: Where the lock notice goes (default: standard error).

    Raises:
        StoreError: the store does not exist (with ``existing``), cannot be read, or was written
            by a newer jurybox; the message says what to do.
        StoreAccessError: the database is locked (past ``busy_timeout``) or cannot be reached.
    """
    from jurybox.store import StoreError, lock_notice, open_store, store_file

    if existing:
        path = store_file(url)
        if path is not None and not path.is_file():
            raise StoreError(
                f"no jurybox store at {path}: nothing was run with a store here yet "
                "(jurybox run SUITE keeps every run); or give --store URL / set JURYBOX_STORE"
            )
    if writes:
        waiting = lock_notice(url, busy_timeout)
        if waiting is not None:
            (notice or error_console()).print(f"waiting: {escape(waiting)}", highlight=False)
    return open_store(url, busy_timeout=busy_timeout)


@contextmanager
def opened_store(
    url: str | None, *, existing: bool = False, writes: bool = False, errors: Console | None = None
) -> Iterator[Store]:
    """The store for a command (see :func:`open_for_command`), closed afterwards.

    A store error while opening it or inside the block (an unknown run, a suite file
    that cannot be read, a database that is locked or down) is printed as ``error: ...``
    on ``errors`` (default: standard output) and the command exits with code 2.
    """
    from jurybox.store import StoreAccessError, StoreError, SuiteFileError

    try:
        store = open_for_command(url, existing=existing, writes=writes)
    except (StoreError, StoreAccessError) as exc:
        fail(str(exc), to=errors)
    try:
        yield store
    except (StoreError, StoreAccessError, SuiteFileError) as exc:
        fail(str(exc), to=errors)
    finally:
        store.close()


def pct(value: float | None, *, signed: bool = False) -> str:
    """A fraction as a percentage with one decimal (``-`` for unknown)."""
    if value is None:
        return "-"
    return f"{value:+.1%}" if signed else f"{value:.1%}"


def money(value: float | None) -> str:
    """A cost in dollars to four decimals (``-`` for unknown: never $0)."""
    return "-" if value is None else f"${value:.4f}"


def seconds(value: float | None) -> str:
    """A duration in seconds to two decimals (``-`` for unknown)."""
    return "-" if value is None else f"{value:.2f}s"


def dashboard_hint(store_url: str | None) -> str:
    """The command that opens the dashboard on ``store_url`` (what ``jurybox run`` prints last).

    Here, not in ``serve``: ``jurybox run`` prints it without importing the dashboard's command.
    """
    return "jurybox serve" + (f" --store {shlex.quote(store_url)}" if store_url else "")
