"""``--help`` without a ``<bool>`` after every flag.

Typer's rich help (0.29) prints each option's type in the options panel, flags
included, so ``--dry-run``, ``--no-store`` and even ``--help`` read as if they took
a ``<bool>`` value. Click's plain help leaves flags bare; this does the same for
the rich panel, for every jurybox command, in one place.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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

    display_type_rich._jurybox_flags_bare = True  # type: ignore[attr-defined]
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]
