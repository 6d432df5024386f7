"""Redaction at record time: vcrpy ``before_record_request``/``before_record_response`` hooks.

Redaction is the contract, not a courtesy: whatever the test sends or the
provider answers, the cassette file gets credentials (and, unless turned off,
personal data) replaced before it is written. Compressed bodies are decompressed
first (otherwise a secret would hide in gzip bytes), so a recorded cassette is
always plain text. What counts as a secret is ``RuleSet`` (``_secrets.py``); how a
body is read (JSON at any depth, streams, forms, text) is ``Walker``
(``_structure.py``), the same reader ``jurybox lint-cassettes`` uses.

vcrpy runs ``before_record_request`` on every live request before matching it
against the cassette too, so a redacted recording still matches: both sides
are compared redacted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from jurybox.pytest_plugin._secrets import RuleSet
from jurybox.pytest_plugin._structure import Walker


class Redactor:
    """Replaces credentials and personal data in recorded requests and responses.

    Args:
        headers: Extra header names to replace (case-insensitive), on top of Authorization,
            x-api-key, cookies and every header whose name means a credential.
        fields: JSON/form field names whose values are replaced wherever they appear (at any
            depth), e.g. ``user_id``; fields named like credentials (``password``,
            ``newPassword``, ``DB_PASSWORD``, ``client_secret``, ``SessionToken``...) always are.
        patterns: Extra regular expressions whose matches are replaced.
        pii: Replace phone numbers, card numbers, IBANs and US social security numbers too.
    """

    def __init__(
        self,
        headers: Iterable[str] = (),
        fields: Iterable[str] = (),
        *,
        patterns: Iterable[str] = (),
        pii: bool = True,
    ) -> None:
        self.rules = RuleSet.build(headers, fields, patterns, pii=pii)

    # vcrpy hooks -----------------------------------------------------------
    def before_record_request(self, request: Any) -> Any:
        """Redact a ``vcr.request.Request`` (vcrpy hands us a deep copy)."""
        walker = Walker(self.rules)
        for name in list(request.headers):
            request.headers[name] = walker.header(name, str(request.headers[name]))
        request.uri = walker.text(request.uri)
        if request.body:
            request.body = self.redact_body(request.body)
        return request

    def before_record_response(self, response: dict[str, Any]) -> dict[str, Any]:
        """Redact a vcrpy response dict (a deep copy of what the client receives)."""
        from vcr.filters import decode_response

        response = decode_response(response)
        walker = Walker(self.rules)
        headers: Mapping[str, list[str]] = response.get("headers", {})
        response["headers"] = {
            name: [walker.header(name, str(value)) for value in values] for name, values in headers.items()
        }
        body = response.get("body", {}).get("string")
        if body:
            response["body"]["string"] = self.redact_body(body)
            self._fix_length(response)
        return response

    # pieces ----------------------------------------------------------------
    def redact_uri(self, uri: str) -> str:
        """The URL with userinfo, credential and random-looking query values and token path segments replaced."""
        return Walker(self.rules).text(uri)

    def redact_body(self, body: str | bytes) -> str | bytes:
        """Redact a body (JSON at any depth, a stream, a form or text); bytes stay bytes."""
        if isinstance(body, bytes):
            try:
                text = body.decode("utf-8")
            except UnicodeDecodeError:
                # Binary payloads (images, audio) are left alone: there is no text to leak.
                return body
            return Walker(self.rules).body(text).encode("utf-8")
        return Walker(self.rules).body(body)

    def redact_data(self, data: Any) -> Any:
        """A decoded JSON value with every secret replaced (how request bodies are compared on replay)."""
        return Walker(self.rules).data(data)

    @staticmethod
    def _fix_length(response: dict[str, Any]) -> None:
        body = response["body"]["string"]
        size = len(body.encode("utf-8") if isinstance(body, str) else body)
        for name in response["headers"]:
            if name.lower() == "content-length":
                response["headers"][name] = [str(size)]
