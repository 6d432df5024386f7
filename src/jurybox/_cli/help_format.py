"""``--help`` without a ``<bool>`` after every flag, and usage errors in one line.

Typer's rich help (0.29) prints each option's type in the options panel, flags
included, so ``--dry-run``, ``--no-store`` and even ``--help`` read as if they took
a ``<bool>`` value. Click's plain help leaves flags bare; this does the same for
the rich panel, for every jurybox command, in one place.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import typer
from typer.core import TyperOption


def hide_flag_types() -> None:
    """Make the rich help show no type for a flag (an option that takes no value). Safe to call twice."""
    original: Callable[..., str | None] = TyperOption.display_type_rich
    if getattr(original, "_jurybox_flags_bare", False):
        return

    def display_type_rich(self: TyperOption, ctx: Any) -> str | None:
        if self.is_flag and self.metavar is None:
            return None
        return original(self, ctx)

    range_text: Callable[..., str | None] = TyperOption._get_number_range_help_str

    def number_range(self: TyperOption) -> str | None:
        # An option whose value is named (SECONDS, N) says its bounds in its help, not in a wide column.
        return None if self.metavar is not None else range_text(self)

    display_type_rich._jurybox_flags_bare = True  # type: ignore[attr-defined]
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]
    TyperOption._get_number_range_help_str = number_range  # type: ignore[method-assign]


def short_usage_errors() -> None:
    """Make a command-line mistake one line on stderr: ``error: <what> (jurybox run --help)``.

    Typer draws it as the usage line, a "Try ... --help" line and a boxed message: four
    lines or more for one mistake, and a box that wraps badly in a CI log. Exit code 2 as before.
    Safe to call twice.
    """
    from typer import rich_utils

    original: Callable[..., None] = rich_utils.rich_format_error
    if getattr(original, "_jurybox_short", False):
        return

    # ``Any``: typer raises its own vendored copy of click's exceptions.
    def rich_format_error(self: Any) -> None:
        if type(self).__name__ == "NoArgsIsHelpError":  # the help itself was printed: nothing to add
            return
        ctx: Any = getattr(self, "ctx", None)
        hint = f" (see {ctx.command_path} --help)" if ctx is not None else ""
        message = " ".join(str(self.format_message()).split())
        typer.echo(f"error: {message}{hint}", err=True)

    rich_format_error._jurybox_short = True  # type: ignore[attr-defined]
    rich_utils.rich_format_error = rich_format_error
