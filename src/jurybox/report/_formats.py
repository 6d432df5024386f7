"""Report formats by name: the ``report`` plug-ins ``--format NAME`` asks for.

Each renderer module registers its format where it is defined (``json`` in
``_json.py``...); an outside package registers its own with
``register_report_format`` (found through the ``jurybox`` entry points) and
``jurybox run --format NAME`` / ``jurybox report --format NAME`` then write it
under the same naming rule as the built-ins.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from jurybox.core import KIND_REPORT, PluginError, PluginRegistry

if TYPE_CHECKING:
    from jurybox.report._model import RunReport

BUILT_IN = ("console", "json", "junit", "markdown", "html")
"""jurybox's own formats, in the order they are produced (an installed package's come after)."""


@dataclass(frozen=True)
class ReportFormat:
    """A report format: how a run becomes a file.

    Attributes:
        extension: The file's suffix under the directory naming rule (``.csv`` -> ``<suite>.csv``);
            ``""`` for ``console``, which prints and is never a file.
        render: The file's text, in pieces (so a run of any size is written without holding it
            whole), from the run's ``RunReport``; None for ``console``.
    """

    extension: str
    render: Callable[[RunReport], Iterable[str]] | None = None

    @property
    def writes_file(self) -> bool:
        """False for ``console`` only."""
        return self.render is not None


def register_report_format(
    name: str,
    target: ReportFormat | str,
    *,
    summary: str = "",
    extra: str | None = None,
    requires: tuple[str, ...] = (),
    aliases: tuple[str, ...] = (),
    registry: PluginRegistry | None = None,
) -> None:
    """Register a report format, so ``--format name`` writes it.

    Args:
        name: The ``--format`` value.
        target: A ``ReportFormat`` with a ``render`` function and an ``extension``, or
            ``"package.module:FORMAT"`` to import only when asked for.
        summary: One line for ``jurybox plugins``.
        extra: The extra that installs its dependency, for the install hint.
        requires: The import names of that dependency.
        aliases: Other names it answers to.
        registry: Where to register it (default: the process-wide registry).

    Raises:
        ValueError: a ``ReportFormat`` without ``render`` or whose extension does not start with a dot.
    """
    if isinstance(target, ReportFormat) and (target.render is None or not target.extension.startswith(".")):
        raise ValueError(f"report format {name!r}: give render and an extension such as '.csv', got {target!r}")
    (registry or PluginRegistry.default()).register(
        KIND_REPORT, name, target, aliases=aliases, summary=summary, extra=extra, requires=requires
    )


def report_formats() -> list[str]:
    """Every format name: jurybox's own in the order they are produced, then the installed plug-ins' by name."""
    names = PluginRegistry.default().names(KIND_REPORT)
    return [name for name in BUILT_IN if name in names] + [name for name in names if name not in BUILT_IN]


def canonical_format(name: str) -> str | None:
    """The registered name ``name`` stands for (itself, or the format it is an alias of); None when unknown."""
    registry = PluginRegistry.default()
    plugin = registry.get(KIND_REPORT, name)
    if plugin is None and not registry.discovered:
        registry.discover()
        plugin = registry.get(KIND_REPORT, name)
    return None if plugin is None else plugin.name


def report_format(name: str) -> ReportFormat:
    """The format ``name`` (imported on first use).

    Raises:
        ValueError: an unknown format (with the closest name), or one that cannot be loaded here.
    """
    try:
        loaded = PluginRegistry.default().load(KIND_REPORT, name)
    except PluginError as error:
        raise ValueError(str(error)) from None
    if not isinstance(loaded, ReportFormat):
        raise ValueError(f"report format {name!r} is registered as {loaded!r}, not a ReportFormat")
    return loaded


def unknown_formats(names: Iterable[str]) -> str:
    """``'jsn' (did you mean 'json'?)``, one per unknown name, for the "unknown report format(s)" message."""
    registry = PluginRegistry.default()
    described = []
    for name in names:
        close = registry.closest(KIND_REPORT, name)
        described.append(f"{name!r} (did you mean {close!r}?)" if close else repr(name))
    return ", ".join(described)
