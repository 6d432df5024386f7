"""``--help`` without a ``<bool>`` after every flag, and usage errors in one line.

Typer's rich help (0.29) prints each option's type in the options panel, flags
included, so ``--dry-run``, ``--no-store`` and even ``--help`` read as if they took
a ``<bool>`` value. Click's plain help leaves flags bare; this does the same for
the rich panel, for every jurybox command, in one place.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from importlib.abc import Loader, MetaPathFinder
from importlib.machinery import ModuleSpec, PathFinder
from types import ModuleType
from typing import Any

import typer
from typer.core import TyperOption

_RICH_UTILS = "typer.rich_utils"


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

    Typer's ``rich_utils`` (rich's Markdown with markdown-it, its tracebacks: some 40 ms) is
    imported only to draw help or an error; a command that runs without either never loads
    it, so the change is made when it is imported, or now if it already was.
    """
    module = sys.modules.get(_RICH_UTILS)
    if module is not None:
        _shorten(module)
    elif not any(isinstance(finder, _ShortenOnImport) for finder in sys.meta_path):
        sys.meta_path.insert(0, _ShortenOnImport())


def _shorten(rich_utils: ModuleType) -> None:
    """Put the one-line ``rich_format_error`` in typer's ``rich_utils`` (once)."""
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
    rich_utils.rich_format_error = rich_format_error  # type: ignore[attr-defined]


class _ShortenOnImport(MetaPathFinder):
    """Finds ``typer.rich_utils`` as the import system would, and shortens its errors once it has run."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname != _RICH_UTILS:
            return None
        sys.meta_path.remove(self)  # needed once: the module is imported once
        spec = PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader: Loader = spec.loader
        run_module = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run_module(module)
            _shorten(module)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec
