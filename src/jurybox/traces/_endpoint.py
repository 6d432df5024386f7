"""Where judgments go: the OTLP/HTTP traces URL, from an option or the standard OpenTelemetry variables."""

from __future__ import annotations

import os
from urllib.parse import urlsplit

ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
TRACES_PATH = "/v1/traces"


def traces_endpoint(endpoint: str | None = None) -> str | None:
    """The OTLP/HTTP traces URL: ``endpoint``, else the standard variables; ``/v1/traces`` added to a bare base.

    ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` is used as given (it names the full URL, per the
    OpenTelemetry specification); ``OTEL_EXPORTER_OTLP_ENDPOINT`` and an explicit base get the path.
    """
    if endpoint:
        return _with_path(endpoint)
    traces = os.environ.get(ENDPOINT_VARIABLES[0])
    if traces:
        return traces
    base = os.environ.get(ENDPOINT_VARIABLES[1])
    return _with_path(base) if base else None


def _with_path(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"an OTLP/HTTP endpoint is an http(s) URL, got {url!r}")
    return url if parts.path not in ("", "/") else url.rstrip("/") + TRACES_PATH
