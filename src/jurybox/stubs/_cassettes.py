"""Recorded responses from vcrpy cassettes, served byte for byte by a replaying stub."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jurybox.inputs import CassetteError, InputError, read_cassette, read_text

# The body is re-framed by the stub's own HTTP server, so these recorded framing headers must not be replayed.
_HOP_BY_HOP = {"content-length", "transfer-encoding", "connection", "keep-alive"}


@dataclass(frozen=True)
class RecordedResponse:
    """One recorded HTTP response: status, headers (framing headers removed) and body bytes as recorded."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes
    method: str = "POST"
    uri: str = ""


def load_cassette(path: str | Path) -> list[RecordedResponse]:
    """Read every interaction of a vcrpy YAML cassette.

    Bodies stay exactly as recorded, so a gzip body is served gzip-encoded with its
    ``Content-Encoding`` header and an SSE or NDJSON body keeps its framing.

    Raises:
        CassetteError: the file is not a cassette jurybox can replay: too big, not YAML, or a field
            missing or of the wrong kind (a ValueError whose message names the file, line and field).
    """
    source = str(path)
    try:
        text = read_text(path)
    except InputError as exc:
        raise CassetteError(exc.source, exc.line, exc.problem) from None
    data = read_cassette(text, source)
    return [_recorded(interaction) for interaction in data["interactions"]]


def _recorded(interaction: dict[str, Any]) -> RecordedResponse:
    request, response = interaction["request"], interaction["response"]
    body = response["body"]["string"]
    headers = tuple(
        (name, value)
        for name, values in response["headers"].items()
        if name.lower() not in _HOP_BY_HOP
        for value in values
    )
    return RecordedResponse(
        response["status"]["code"],
        headers,
        body.encode("utf-8") if isinstance(body, str) else body,
        method=request["method"],
        uri=request["uri"],
    )
