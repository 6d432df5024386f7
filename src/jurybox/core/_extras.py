"""Optional packages, imported when a feature first needs them, with one line naming the extra to install.

The base install is light (docs/install.md); a feature whose package is missing says
``<feature> needs <package>: pip install 'jurybox[<extra>]'`` instead of a traceback.
"""

from __future__ import annotations

import importlib
from types import ModuleType


class ExtraMissingError(ImportError):
    """An optional package a feature needs is not installed; the message names the extra that brings it."""

    def __init__(self, message: str, *, extra: str, package: str) -> None:
        super().__init__(message, name=package)
        self.extra = extra
        self.package = package


def extra_hint(extra: str) -> str:
    """``pip install 'jurybox[<extra>]'``."""
    return f"pip install 'jurybox[{extra}]'"


def require(module: str, *, extra: str, feature: str, package: str | None = None) -> ModuleType:
    """Import ``module`` (e.g. ``"vcr"``), or raise ExtraMissingError naming ``extra``.

    Args:
        module: The module to import.
        extra: The jurybox extra that installs it (``cassettes``).
        feature: What needs it, as the message's subject (``"recording cassettes"``).
        package: Its distribution's name when that differs from the module's (``vcrpy``).

    Raises:
        ExtraMissingError: the module (or its top-level package) is not installed. An ImportError
            from inside an installed package (a broken install) is raised as it is.
    """
    try:
        return importlib.import_module(module)
    except ImportError as error:
        top = module.split(".", maxsplit=1)[0]
        if error.name not in (module, top):
            raise
        name = package or top
        raise ExtraMissingError(f"{feature} needs {name}: {extra_hint(extra)}", extra=extra, package=name) from None
