"""``--otel-endpoint``: the option and the exporter it turns on, without importing ``jurybox.traces``.

``jurybox run`` takes the option on every run but exports on few: the trace readers and
the OTLP encoders load only when an endpoint is given or configured.
"""

from __future__ import annotations

import os
from typing import Annotated, Any

import typer
from rich.console import Console

from jurybox._cli.common import error_console, fail
from jurybox.core import KIND_EXPORTER, PluginError, PluginRegistry

ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
"""``jurybox.traces.ENDPOINT_VARIABLES``, named here so the check imports nothing (a test keeps them equal)."""

OtelEndpointOption = Annotated[
    str | None,
    typer.Option(
        "--otel-endpoint",
        help="Send cases and judgments as OTLP spans to this URL (default: $OTEL_EXPORTER_OTLP_ENDPOINT). "
        "Needs jurybox\\[otel].",
        show_default=False,
    ),
]
"""``--otel-endpoint`` of ``jurybox run`` and ``jurybox judge-traces``."""


def otel_exporter(endpoint: str | None, *, errors: Console | None = None) -> Any:
    """The ``otlp`` exporter plug-in when an endpoint is given or configured, else None (off by default).

    A missing extra or a bad URL is a usage error (exit 2) before anything runs.
    """
    if endpoint is None and not any(os.environ.get(name) for name in ENDPOINT_VARIABLES):
        return None
    try:
        exporter_class = PluginRegistry.default().load(KIND_EXPORTER, "otlp")
        return exporter_class(endpoint)
    except (PluginError, ImportError, ValueError) as exc:
        fail(f"--otel-endpoint: {exc}", to=errors or error_console())
