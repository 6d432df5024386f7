"""The trace a production judgment came from: its id, checked, and a link to it.

A case judged from a trace (``jurybox serve --otlp``, ``jurybox judge-traces --suite``)
keeps the trace and span ids in its metadata. They came from a sender, so they are
hostile input: shown and linked only when they are the hex ids OpenTelemetry makes
(32 and 16 lowercase hex digits, not all zero); anything else is reported as invalid
and never put in a link. The page escapes them like every other value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from jurybox.web import _urls as urls

TRACE_ID = re.compile(r"[0-9a-f]{32}")
SPAN_ID = re.compile(r"[0-9a-f]{16}")
PLACEHOLDERS = ("{trace_id}", "{span_id}")


def valid_trace_url(template: str) -> str:
    """``template`` when it is an http(s) URL naming ``{trace_id}``.

    Raises:
        ValueError: it is not.
    """
    if not template.startswith(("http://", "https://")) or "{trace_id}" not in template:
        raise ValueError(
            f"a trace URL is http(s)://... with {{trace_id}} (and maybe {{span_id}}) in it, got {template!r}"
        )
    return template


def _checked(value: Any, pattern: re.Pattern[str]) -> str | None:
    if isinstance(value, str) and pattern.fullmatch(value) and value.strip("0"):
        return value
    return None


def trace_data(run_id: str, metadata: Mapping[str, Any], template: str | None) -> dict[str, Any] | None:
    """The case page's ``trace`` block, or None for a case that did not come from a trace.

    Args:
        run_id: The run the case is in (the link to the trace's other agent runs stays in it).
        metadata: The case record's metadata.
        template: ``jurybox serve --trace-url``: where a trace viewer shows a trace, or None.
    """
    if metadata.get("source") != "trace" and "trace_id" not in metadata:
        return None
    trace_id = _checked(metadata.get("trace_id"), TRACE_ID)
    span_id = _checked(metadata.get("span_id"), SPAN_ID)
    if trace_id is None:
        return {"trace_id": None, "span_id": None, "valid": False, "viewer": None, "in_run": None}
    viewer = None
    if template is not None:
        viewer = template.replace("{trace_id}", trace_id).replace("{span_id}", span_id or "")
    return {
        "trace_id": trace_id,
        "span_id": span_id,
        "valid": True,
        "viewer": viewer,
        "in_run": urls.run(run_id, q=trace_id),  # case names hold the trace id: its every agent run
    }
