"""One rule set for secrets and personal data, shared by record-time redaction and the cassette lint."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from urllib.parse import quote, quote_plus, unquote_plus

from jurybox.pytest_plugin._patterns import (
    PATTERNS,
    QUERY_ONLY_NAMES,
    SECRET_NAMES,
    SENSITIVE_HEADERS,
    SecretPattern,
    named_secret,
    normal_name,
)

#: What a redacted value is replaced with. ``<`` and ``>`` keep it from matching any pattern.
PLACEHOLDER = "<REDACTED>"

#: Header values that are visibly placeholders (ours, and other projects' conventions such as
#: ``FILTERED``, ``<API_KEY>``, ``X-GOOG-API-KEY-XXX``, ``Bearer ***``).
PLACEHOLDER_VALUE = re.compile(r"(?i)^\s*$|redacted|filtered|dummy|placeholder|xxx|\*{3}|^(?:bearer\s+)?<[^>]*>$")


def is_placeholder(value: str) -> bool:
    """True when a header value is already redacted."""
    return PLACEHOLDER_VALUE.search(value) is not None


@dataclass(frozen=True)
class Finding:
    """One secret found in a text: which pattern, where, and a masked excerpt."""

    pattern: str
    start: int
    end: int
    excerpt: str


def mask(secret: str) -> str:
    """Show just enough of a secret to find it, never the whole thing."""
    if len(secret) <= 8:
        return secret[:2] + "…"
    return f"{secret[:6]}…{secret[-2:]}"


@dataclass(frozen=True)
class RuleSet:
    """What counts as a secret: built-in names and patterns plus the user's, with PII on or off.

    Args:
        headers: Extra header names to treat as credentials (case-insensitive).
        fields: Extra JSON/form field names whose values are replaced at any depth.
        patterns: Extra regular expressions (the user's ``redact_patterns``); a match is a secret.
        pii: Card numbers (Luhn-checked), US social security numbers and phone numbers count too.
    """

    headers: frozenset[str] = frozenset()
    fields: frozenset[str] = frozenset()
    patterns: tuple[str, ...] = ()
    pii: bool = False
    _compiled: tuple[SecretPattern, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "headers", SENSITIVE_HEADERS | {name.lower() for name in self.headers})
        object.__setattr__(self, "fields", frozenset(self.fields))
        custom = tuple(SecretPattern("custom", re.compile(pattern)) for pattern in self.patterns)
        if self.fields:
            custom += (named_secret("custom-field", self.fields),)
        object.__setattr__(self, "_compiled", tuple(p for p in PATTERNS if self.pii or not p.pii) + custom)

    @classmethod
    def build(
        cls, headers: Iterable[str] = (), fields: Iterable[str] = (), patterns: Iterable[str] = (), *, pii: bool
    ) -> RuleSet:
        """A rule set from any iterables (the settings hold tuples)."""
        return cls(frozenset(headers), frozenset(fields), tuple(patterns), pii)

    @property
    def names(self) -> tuple[str, ...]:
        """Every pattern name this rule set reports (what ``--ignore`` accepts), plus ``header``."""
        return (*dict.fromkeys(p.name for p in self._compiled), "header")

    def header_is_secret(self, name: str) -> bool:
        """True when a header with this name carries a credential."""
        return name.lower() in self.headers or normal_name(name) in SECRET_NAMES

    def field_is_secret(self, name: str) -> bool:
        """True when a JSON or form field with this name holds a credential."""
        return name in self.fields or normal_name(name) in SECRET_NAMES

    def query_is_secret(self, name: str) -> bool:
        """True when a URL query parameter with this name holds a credential."""
        return self.field_is_secret(name) or normal_name(name) in QUERY_ONLY_NAMES

    def find(self, text: str) -> Iterator[Finding]:
        """Every non-overlapping secret in ``text``, in order."""
        yield from self._find(text)

    def scrub(self, text: str) -> str:
        """``text`` with every secret replaced by the placeholder (context such as ``password=`` kept)."""
        for finding in reversed(self._find(text)):
            replacement = PLACEHOLDER
            if finding.pattern == "bearer-token":
                # Keep the scheme so a reader of the cassette still sees what kind of header it was.
                replacement = f"Bearer {PLACEHOLDER}"
            text = text[: finding.start] + replacement + text[finding.end :]
        if "%" in text or "+" in text:
            text = self._scrub_encoded(text)
        return text

    def _scrub_encoded(self, text: str) -> str:
        """Secrets that sit URL-encoded in the text (a form body echoed inside JSON, a query in a URL)."""
        decoded = unquote_plus(text)
        for finding in self._find(decoded):
            secret = decoded[finding.start : finding.end]
            for spelling in {quote_plus(secret), quote(secret, safe=""), quote(secret)}:
                text = text.replace(spelling, PLACEHOLDER)
        return text

    def _find(self, text: str) -> list[Finding]:
        taken: list[tuple[int, int]] = []
        found: list[Finding] = []
        for pattern in self._compiled:
            for match in pattern.regex.finditer(text):
                start, end = match.span(pattern.group)
                secret = match.group(pattern.group)
                if pattern.check is not None and not pattern.check(secret):
                    continue
                if any(start < stop and begin < end for begin, stop in taken):
                    continue
                taken.append((start, end))
                found.append(Finding(pattern.name, start, end, mask(secret)))
        return sorted(found, key=lambda finding: finding.start)


#: The built-in rules without PII: what ``find_secrets`` and ``scrub_text`` apply.
DEFAULT_RULES = RuleSet()
#: Every built-in rule, PII included: what the lint checks by default.
ALL_RULES = RuleSet(pii=True)


def find_secrets(text: str) -> Iterator[Finding]:
    """Every non-overlapping secret in ``text`` under the built-in rules (PII excluded), in order."""
    return DEFAULT_RULES.find(text)


def scrub_text(text: str) -> str:
    """``text`` with every key-shaped secret and e-mail address replaced by the placeholder."""
    return DEFAULT_RULES.scrub(text)
