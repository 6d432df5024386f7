"""Redaction at record time: vcrpy ``before_record_request``/``before_record_response`` hooks.

Redaction is the contract, not a courtesy: whatever the test sends or the
provider answers, the cassette file gets credentials replaced before it is
written. Compressed bodies are decompressed first (otherwise a secret would
hide in gzip bytes), so a recorded cassette is always plain text.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from jurybox.pytest_plugin._secrets import PLACEHOLDER, SENSITIVE_HEADERS, scrub_text

#: Query parameters that carry keys (Gemini's ``?key=``, signed URLs...).
SENSITIVE_QUERY = frozenset({"key", "api_key", "apikey", "api-key", "access_token", "token", "signature"})


class Redactor:
    """Replaces credentials in recorded requests and responses.

    Args:
        headers: Extra header names to replace (case-insensitive), on top of
            Authorization, x-api-key, api-key, cookies and the other built-ins.
        fields: JSON body field names whose values are replaced wherever they
            appear (at any depth), e.g. ``user_id``.
    """

    def __init__(self, headers: Iterable[str] = (), fields: Iterable[str] = ()) -> None:
        self.headers = SENSITIVE_HEADERS | {name.lower() for name in headers}
        self.fields = frozenset(fields)

    # vcrpy hooks -----------------------------------------------------------
    def before_record_request(self, request: Any) -> Any:
        """Redact a ``vcr.request.Request`` (vcrpy hands us a deep copy)."""
        for name in list(request.headers):
            if name.lower() in self.headers:
                request.headers[name] = PLACEHOLDER
            else:
                request.headers[name] = scrub_text(str(request.headers[name]))
        request.uri = self.redact_uri(request.uri)
        if request.body:
            request.body = self.redact_body(request.body)
        return request

    def before_record_response(self, response: dict[str, Any]) -> dict[str, Any]:
        """Redact a vcrpy response dict (a deep copy of what the client receives)."""
        from vcr.filters import decode_response

        response = decode_response(response)
        headers: Mapping[str, list[str]] = response.get("headers", {})
        response["headers"] = {
            name: [PLACEHOLDER if name.lower() in self.headers else scrub_text(str(value)) for value in values]
            for name, values in headers.items()
        }
        body = response.get("body", {}).get("string")
        if body:
            response["body"]["string"] = self.redact_body(body)
            self._fix_length(response)
        return response

    # pieces ----------------------------------------------------------------
    def redact_uri(self, uri: str) -> str:
        parts = urlsplit(uri)
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        # Rebuilt only when a key is in it, so an ordinary query keeps its exact encoding.
        if any(key.lower() in SENSITIVE_QUERY for key, _ in pairs):
            pairs = [(key, PLACEHOLDER if key.lower() in SENSITIVE_QUERY else value) for key, value in pairs]
            parts = parts._replace(query=urlencode(pairs, safe="<>"))
        return scrub_text(urlunsplit(parts))

    def redact_body(self, body: str | bytes) -> str | bytes:
        """Redact configured JSON fields and key-shaped secrets; bytes stay bytes."""
        if isinstance(body, bytes):
            try:
                text = body.decode("utf-8")
            except UnicodeDecodeError:
                # Binary payloads (images, audio) are left alone: there is no text to leak.
                return body
            return self._redact_text(text).encode("utf-8")
        return self._redact_text(body)

    def _redact_text(self, text: str) -> str:
        if self.fields:
            text = self._redact_fields(text)
        return scrub_text(text)

    def _redact_fields(self, text: str) -> str:
        try:
            data = json.loads(text)
        except ValueError:
            # Streams (SSE, NDJSON) carry one JSON document per line; redact each.
            return "\n".join(self._redact_line(line) for line in text.split("\n"))
        return json.dumps(self._walk(data), ensure_ascii=False, separators=(",", ":"))

    def _redact_line(self, line: str) -> str:
        prefix = "data: " if line.startswith("data: ") else ""
        try:
            data = json.loads(line[len(prefix) :])
        except ValueError:
            return line
        return prefix + json.dumps(self._walk(data), ensure_ascii=False, separators=(",", ":"))

    def _walk(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {key: PLACEHOLDER if key in self.fields else self._walk(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self._walk(item) for item in value]
        return value

    @staticmethod
    def _fix_length(response: dict[str, Any]) -> None:
        body = response["body"]["string"]
        size = len(body.encode("utf-8") if isinstance(body, str) else body)
        for name in response["headers"]:
            if name.lower() == "content-length":
                response["headers"][name] = [str(size)]
