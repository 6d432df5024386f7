"""An entry point that names a function: it is called with the registry to fill."""

from __future__ import annotations

from jurybox.core import KIND_REPORT, PluginRegistry
from jurybox.report import ReportFormat


def register(registry: PluginRegistry) -> None:
    """Register the ``lines`` report format in ``registry``."""
    registry.register(
        KIND_REPORT,
        "lines",
        ReportFormat(".txt", lambda report: (f"{case.name}\n" for case in report.cases)),
        summary="one line per case",
    )
