"""Walk what a request or response holds, as data: JSON at any depth, JSON inside strings, forms, streams.

``Walker`` is the one reader both redaction and the lint use. Every field is
judged by its name (``RuleSet.judge``) and every string that is not a
credential as a whole is read for what it holds: a JSON document (a tool call's
``arguments``, a body), a server-sent-event or NDJSON stream, a URL-encoded form,
or free text (``RuleSet.find``). It returns the value with secrets replaced and
keeps, in ``hits``, what it replaced, so the lint reports exactly what
redaction would remove.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode

from jurybox.core import read_json
from jurybox.pytest_plugin._names import is_identifier_name
from jurybox.pytest_plugin._secrets import NAMED, PLACEHOLDER, QUERY, RANDOM, RuleSet, is_placeholder, mask

# An application/x-www-form-urlencoded body: name=value pairs joined by "&".
# Names are field names ("user", "items[0]", "a%5Bb%5D"): base64 ending in "==" is not a form.
_FORM = re.compile(r"[A-Za-z_][\w.\-\[\]%]*=[^\s&]*(?:&[A-Za-z_][\w.\-\[\]%]*=[^\s&]*)*")
_SSE_DATA = "data:"
# Kinds that say only "a credential sits here": under a credential name, the name says more.
_UNNAMED_KINDS = frozenset({NAMED, QUERY, RANDOM, "url-token"})
#: Strings longer than this are not parsed as JSON or forms (a payload, not a document).
MAX_DOCUMENT = 32 * 2**20


@dataclass(frozen=True)
class Hit:
    """One secret the walker found: its kind and a masked excerpt."""

    kind: str
    excerpt: str


@dataclass
class Walker:
    """Reads (and redacts) values with one rule set; ``hits`` collects what was found.

    Args:
        rules: What counts as a secret.
    """

    rules: RuleSet
    hits: list[Hit] = field(default_factory=list)

    # -- named values ------------------------------------------------------------
    def header(self, name: str, value: str) -> str:
        """A header value: the placeholder when the header carries a credential, else read as text."""
        kind = self.rules.judge(name, value, "header")
        if kind is not None:
            # Reported as the header, and as what the value is when that has a name of its own (a bearer
            # token; a cookie's "sid=..." pairs are the header's finding already).
            self.hits.append(Hit(f"header {name.lower()}", mask(value)))
            self.hits.extend(self._known(value))
            return PLACEHOLDER
        return self.text(value, name)

    def data(self, value: Any, name: str = "", siblings: Collection[str] = (), *, secret: bool = False) -> Any:
        """A decoded JSON/YAML value with every secret replaced; ``secret``: it sits under a credential name."""
        if isinstance(value, dict):
            keys = [str(key) for key in value]
            return {key: self.data(item, str(key), keys, secret=secret) for key, item in value.items()}
        if isinstance(value, list):
            return [self.data(item, name, siblings, secret=secret) for item in value]
        if isinstance(value, bool) or value is None:
            return value
        if isinstance(value, int | float):
            if secret or self.rules.judge(name, str(value), "field", siblings) is not None:
                return self._replace(self._field_kind(name, str(value), siblings), str(value))
            return value
        if isinstance(value, str):
            return self.string(value, name, siblings, secret=secret)
        return value

    def string(self, value: str, name: str = "", siblings: Collection[str] = (), *, secret: bool = False) -> str:
        """A string under ``name``: replaced whole when the name says credential, else read for what it holds."""
        if secret and value.strip() and not is_placeholder(value):
            return self._replace(self._field_kind(name, value, siblings), value)
        kind = self.rules.judge(name, value, "field", siblings) if name else None
        if kind is not None:
            if not _is_container(value):
                return self._replace(kind, value)
            # A document under a credential name (``"credentials": "{...}"``): every value in it is one.
            return self.body(value, name, secret=True)
        return self.body(value, name)

    def _field_kind(self, name: str, value: str, siblings: Collection[str]) -> str:
        return self.rules.judge(name, value, "field", siblings) or "named-secret"

    def _replace(self, kind: str, value: str) -> str:
        # A value that is also a known kind (an AWS key under "token") is reported as that kind.
        self.hits.extend(self._known(value) or [Hit(kind, mask(value))])
        return PLACEHOLDER

    def _known(self, value: str) -> list[Hit]:
        """What ``value`` is when that has a name of its own (a bearer token, an AWS key, a card)."""
        return [Hit(f.pattern, f.excerpt) for f in self.rules.find(value) if f.pattern not in _UNNAMED_KINDS]

    # -- documents -----------------------------------------------------------------
    def body(self, text: str, name: str = "", *, secret: bool = False) -> str:
        """A body or any string: a JSON document, a stream of them, a form, or free text."""
        if len(text) <= MAX_DOCUMENT:
            stripped = text.strip()
            if stripped[:1] in ("{", "[") and (document := _json(stripped)) is not None:
                return self._dump(document, text, name, secret=secret)
            if "\n" in text or stripped.startswith(_SSE_DATA):
                lines = text.split("\n")
                if any(_json_line(line) is not None for line in lines):
                    return "\n".join(self._line(line, name) for line in lines)
            if "=" in stripped and "://" not in stripped and _FORM.fullmatch(stripped):
                return self._form(text)
        return self.text(text, name)

    def text(self, text: str, name: str = "", *, random_tokens: bool = True) -> str:
        """Free text: every secret ``RuleSet.find`` sees replaced (random tokens kept under id-like names)."""
        random_tokens = random_tokens and not is_identifier_name(name)
        scrubbed, found = self.rules.redact(text, random_tokens=random_tokens)
        self.hits.extend(Hit(finding.pattern, finding.excerpt) for finding in found)
        return scrubbed

    def _line(self, line: str, name: str) -> str:
        parsed = _json_line(line)
        if parsed is None:
            return self.text(line, name)
        prefix, document = parsed
        return prefix + self._dump(document, line[len(prefix) :], name)

    def _dump(self, document: Any, original: str, name: str, *, secret: bool = False) -> str:
        hits = len(self.hits)
        try:
            redacted = self.data(document, name, secret=secret)
        except RecursionError:
            # Nested deeper than Python's stack: read it as text (its "name": "value" pairs still count).
            del self.hits[hits:]
            return self.text(original, name)
        # Untouched documents keep their exact bytes (and so their exact match on replay).
        if redacted == document:
            return original
        return json.dumps(redacted, ensure_ascii=False, separators=(",", ":"))

    def _form(self, text: str) -> str:
        # Values are decoded first: "%40" and "+" would otherwise hide an address or a card number.
        pairs = parse_qsl(text.strip(), keep_blank_values=True)
        if not pairs:
            return self.text(text)
        names = [key for key, _ in pairs]
        redacted = [(key, self.string(value, key, names)) for key, value in pairs]
        return text if redacted == pairs else urlencode(redacted, safe="<>")


def _is_container(value: str) -> bool:
    stripped = value.strip()
    return stripped[:1] in ("{", "[") and _json(stripped) is not None


def _json(text: str) -> Any:
    try:
        # Bounded: a body nested past the input limit is read as text (json.loads would recurse).
        document = read_json(text, max_nodes=None)
    except ValueError:
        return None
    return document if isinstance(document, dict | list) else None


def _json_line(line: str) -> tuple[str, Any] | None:
    """``(prefix, document)`` for an SSE ``data:`` line or an NDJSON line holding a JSON document."""
    stripped = line.strip()
    prefix = ""
    if stripped.startswith(_SSE_DATA):
        prefix = line[: line.index(_SSE_DATA) + len(_SSE_DATA)]
        if line[len(prefix) : len(prefix) + 1] == " ":
            prefix += " "
        stripped = line[len(prefix) :].strip()
    if stripped[:1] not in ("{", "["):
        return None
    document = _json(stripped)
    return None if document is None else (prefix, document)
