"""The ``jurybox`` command. Each feature adds its sub-commands from its own module.

``main()`` imports only the module of the command it was asked for (``jurybox run``
never imports the dashboard, calibration or the store browser), so start-up costs
what the command uses; ``--help``, no command or an unknown one register them all.
``app`` (for tests and ``typer`` tooling) is the full command, built on first use.
"""

from __future__ import annotations

import time

STARTED = time.perf_counter()  # when the command's own code began (for `run -v`'s start-up time)

import gc  # noqa: E402
import importlib  # noqa: E402
import sys  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from typing import Any  # noqa: E402

import typer  # noqa: E402

from jurybox import __version__  # noqa: E402

# (module under jurybox._cli, the commands it registers), in --help order.
FEATURES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("check", ("check",)),
    ("lint", ("lint-cassettes",)),
    ("history", ("compare", "history", "gate", "store")),
    ("lessons", ("lessons",)),
    ("reports", ("report", "runs")),
    ("experiment", ("experiment",)),
    ("run", ("run",)),
    ("cache", ("cache",)),
    ("judges", ("judges",)),
    ("plugins", ("plugins",)),
    ("schema", ("schema",)),
    ("serve", ("serve",)),
    ("calibrate", ("calibrate",)),
    ("people", ("web", "reviews")),
    ("traces", ("judge-traces",)),
)


def _version() -> None:
    """Print the jurybox version."""
    typer.echo(__version__)


def build_app(command: str | None = None) -> typer.Typer:
    """The ``jurybox`` command with the sub-commands ``command`` needs (all of them for None or an unknown name)."""
    from jurybox._cli.help_format import hide_flag_types, short_usage_errors

    hide_flag_types()  # no `<bool>` after flags in --help
    short_usage_errors()  # a mistake on the command line is one line, not a box
    app = typer.Typer(
        name="jurybox",
        help="Test LLM apps and agents by meaning: judges, suites, cassettes, run history.",
        no_args_is_help=True,
        add_completion=False,
    )
    modules = [module for module, names in FEATURES if command in names] or [module for module, _ in FEATURES]
    for module in modules:
        importlib.import_module(f"jurybox._cli.{module}").register(app)
    app.command("version")(_version)
    return app


def _command(argv: Sequence[str]) -> str | None:
    """The sub-command named on the command line (the first argument), or None for ``--help``/none."""
    if not argv or argv[0].startswith("-"):
        return None
    return argv[0]


_STARTED_BY_MAIN: list[bool] = []


def owns_process() -> bool:
    """True in a process that ``main()`` started: the command owns it, and may leave its long-lived heap frozen."""
    return bool(_STARTED_BY_MAIN)


FAST_EXIT_COMMANDS = frozenset({"run"})
"""Commands whose process ends without freeing its heap object by object (see ``main``)."""


def main() -> None:
    _STARTED_BY_MAIN.append(True)
    # Importing a command's modules makes long-lived objects, not garbage: the collector's passes over
    # them while they load (young, then older generations: a tenth of a 200-case run's imports), and
    # every later full collection, would walk them for nothing. They are frozen once loaded instead.
    command = _command(sys.argv[1:])
    gc.disable()
    try:
        app = build_app(command)
    finally:
        gc.freeze()
        gc.enable()
    try:
        app()
    except SystemExit as stop:
        if command in FAST_EXIT_COMMANDS:
            _exit_now(stop.code)
        raise


def _exit_now(code: object) -> None:
    """End the process as Python's own exit would, without freeing every object first.

    A 10,000-case run spent 85 to 116 ms after its report tearing down its modules and
    freeing its cases one by one, for a process about to end. What the exit must still do
    is done: the threads that are not daemons are joined and the exit handlers run (the
    store's and the exporter's, Ray's shutdown), then both streams are flushed.
    """
    import atexit
    import contextlib
    import os
    import threading

    status = 0 if code is None else code if isinstance(code, int) else 1
    if not isinstance(code, int | None):
        print(code, file=sys.stderr)  # what SystemExit("message") prints
    threading._shutdown()  # type: ignore[attr-defined]  # what interpreter shutdown does first
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing more can be said on it
            stream.flush()
    os._exit(status)


def __getattr__(name: str) -> Any:
    if name == "app":
        app = build_app()
        globals()["app"] = app
        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if __name__ == "__main__":  # python -m jurybox.cli
    main()
