"""Redaction at record time: vcrpy ``before_record_request``/``before_record_response`` hooks.

Redaction is the contract, not a courtesy: whatever the test sends or the
provider answers, the cassette file gets credentials replaced before it is
written. Compressed bodies are decompressed first (otherwise a secret would
hide in gzip bytes), so a recorded cassette is always plain text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from jurybox.core import read_json
from jurybox.pytest_plugin._secrets import PLACEHOLDER, RuleSet

# An application/x-www-form-urlencoded body: name=value pairs joined by "&".
_FORM = re.compile(r"[^\s=&]+=[^\s&]*(?:&[^\s=&]+=[^\s&]*)*")


class Redactor:
    """Replaces credentials (and, with PII on, personal data) in recorded requests and responses.

    Args:
        headers: Extra header names to replace (case-insensitive), on top of
            Authorization, x-api-key, api-key, cookies and the other built-ins.
        fields: JSON/form field names whose values are replaced wherever they
            appear (at any depth), e.g. ``user_id``; ``password``, ``client_secret``,
            ``access_token`` and the other built-in names always are.
        patterns: Extra regular expressions whose matches are replaced.
        pii: Replace card numbers, US social security numbers and phone numbers too.
    """

    def __init__(
        self,
        headers: Iterable[str] = (),
        fields: Iterable[str] = (),
        *,
        patterns: Iterable[str] = (),
        pii: bool = False,
    ) -> None:
        self.rules = RuleSet.build(headers, fields, patterns, pii=pii)

    # vcrpy hooks -----------------------------------------------------------
    def before_record_request(self, request: Any) -> Any:
        """Redact a ``vcr.request.Request`` (vcrpy hands us a deep copy)."""
        for name in list(request.headers):
            if self.rules.header_is_secret(name):
                request.headers[name] = PLACEHOLDER
            else:
                request.headers[name] = self.rules.scrub(str(request.headers[name]))
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
            name: [
                PLACEHOLDER if self.rules.header_is_secret(name) else self.rules.scrub(str(value)) for value in values
            ]
            for name, values in headers.items()
        }
        body = response.get("body", {}).get("string")
        if body:
            response["body"]["string"] = self.redact_body(body)
            self._fix_length(response)
        return response

    # pieces ----------------------------------------------------------------
    def redact_uri(self, uri: str) -> str:
        """The URL with credential query parameters, userinfo and key-shaped secrets replaced."""
        parts = urlsplit(uri)
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        # Rebuilt only when a key is in it, so an ordinary query keeps its exact encoding.
        if any(self.rules.query_is_secret(key) for key, _ in pairs):
            pairs = [(key, PLACEHOLDER if self.rules.query_is_secret(key) else value) for key, value in pairs]
            parts = parts._replace(query=urlencode(pairs, safe="<>"))
        return self.rules.scrub(urlunsplit(parts))

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
        return self.rules.scrub(self._redact_fields(text))

    def _redact_fields(self, text: str) -> str:
        """Secret fields replaced by structure: a JSON document, an SSE/NDJSON stream, or a form."""
        try:
            # Bounded: a body nested deeper than the input limit is redacted as text (json.loads would recurse).
            data = read_json(text, max_nodes=None)
        except ValueError:
            if _FORM.fullmatch(text):
                return self._redact_form(text)
            # Streams (SSE, NDJSON) carry one JSON document per line; redact each.
            return "\n".join(self._redact_line(line) for line in text.split("\n"))
        return self._dump(data, text)

    def _redact_line(self, line: str) -> str:
        prefix = "data: " if line.startswith("data: ") else ""
        try:
            data = read_json(line[len(prefix) :], max_nodes=None)
        except ValueError:
            return line
        return prefix + self._dump(data, line[len(prefix) :])

    def _redact_form(self, text: str) -> str:
        # Values are decoded first: "%40" and "+" would otherwise hide an address or a card number.
        pairs = parse_qsl(text, keep_blank_values=True)
        redacted = [(k, PLACEHOLDER if self.rules.field_is_secret(k) else self.rules.scrub(v)) for k, v in pairs]
        return text if redacted == pairs else urlencode(redacted, safe="<>")

    def _dump(self, data: Any, original: str) -> str:
        redacted, changed = self._walk(data)
        # Untouched documents keep their exact bytes (and so their exact match on replay).
        return json.dumps(redacted, ensure_ascii=False, separators=(",", ":")) if changed else original

    def _walk(self, value: Any) -> tuple[Any, bool]:
        if isinstance(value, dict):
            changed = False
            out: dict[Any, Any] = {}
            for key, item in value.items():
                if self.rules.field_is_secret(str(key)) and item is not None and not isinstance(item, bool):
                    out[key], changed = PLACEHOLDER, True
                else:
                    out[key], inner = self._walk(item)
                    changed = changed or inner
            return out, changed
        if isinstance(value, list):
            items = [self._walk(item) for item in value]
            return [item for item, _ in items], any(inner for _, inner in items)
        return value, False

    @staticmethod
    def _fix_length(response: dict[str, Any]) -> None:
        body = response["body"]["string"]
        size = len(body.encode("utf-8") if isinstance(body, str) else body)
        for name in response["headers"]:
            if name.lower() == "content-length":
                response["headers"][name] = [str(size)]
