"""Recorded responses from vcrpy cassettes, served byte for byte by a replaying stub."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vcr import serialize as vcr_serialize
from vcr.serializers import yamlserializer

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
        ValueError: the file is not a vcrpy cassette (the message names the file and interaction).
    """
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    try:
        requests, responses, *_ = vcr_serialize.deserialize(text, yamlserializer)
    except (ValueError, KeyError, TypeError) as error:
        raise ValueError(f"{path}: not a vcrpy cassette ({error})") from error
    return [
        _recorded(path, index, request, response)
        for index, (request, response) in enumerate(zip(requests, responses, strict=True))
    ]


def _recorded(path: Path, index: int, request: Any, response: dict[str, Any]) -> RecordedResponse:
    where = f"{path}: interactions[{index}].response"
    status = response.get("status")
    if isinstance(status, dict) and "code" in status:
        code = int(status["code"])
    elif "status_code" in response:  # the old vcrpy-httpx layout
        code = int(response["status_code"])
    else:
        raise ValueError(f"{where}: no status.code")
    body_field = response.get("body")
    if isinstance(body_field, dict) and "string" in body_field:
        body = body_field["string"]
    elif "content" in response:  # the old vcrpy-httpx layout
        body = response["content"]
    else:
        raise ValueError(f"{where}: no body.string")
    if isinstance(body, str):
        body = body.encode("utf-8")
    if not isinstance(body, bytes):
        raise ValueError(f"{where}: body is {type(body).__name__}, expected text or bytes")
    headers: list[tuple[str, str]] = []
    for name, values in (response.get("headers") or {}).items():
        if name.lower() in _HOP_BY_HOP:
            continue
        for value in values if isinstance(values, list) else [values]:
            headers.append((str(name), str(value)))
    return RecordedResponse(code, tuple(headers), body, method=str(request.method), uri=str(request.uri))
