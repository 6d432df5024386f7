"""One detector for secrets and personal data, shared by record-time redaction and the cassette lint.

``RuleSet`` answers two questions, and both redaction and the lint ask only it:

- ``judge(name, value, place)``: is this value a credential because of the name it
  sits under (a header, a query parameter, a JSON or form field, a cookie, an XML
  tag, a ``name: value`` line in prose)? See ``_names.py``.
- ``find(text)``: where are secrets in this free text, whatever surrounds them?
  URLs (``_urls.py``), the shapes in ``_patterns.py``, detect-secrets' vendor
  formats (``_vendors.py``), ``name=value`` pairs and XML elements, e-mail
  addresses, personal data (``_pii.py``) and random-looking tokens (``_randomness.py``).

Structured bodies (JSON, forms, streams) are walked by ``_structure.py``, which
asks ``judge`` for every field and ``find`` for every string.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from urllib.parse import quote, quote_plus, unquote_plus

from jurybox.pytest_plugin._names import (
    QUERY_ONLY_NAMES,
    Strength,
    header_strength,
    is_identifier_name,
    name_strength,
    name_words,
)
from jurybox.pytest_plugin._patterns import EMAIL, NAMED_PAIR, PATTERNS, XML_ELEMENT, SecretPattern, named_secret
from jurybox.pytest_plugin._pii import PII_KINDS, find_pii
from jurybox.pytest_plugin._randomness import TOKEN, looks_like_credential, looks_random
from jurybox.pytest_plugin._urls import URL, url_spans
from jurybox.pytest_plugin._vendors import may_hold_vendor_key, vendor_formats

#: What a redacted value is replaced with. ``<`` and ``>`` keep it from matching any pattern.
PLACEHOLDER = "<REDACTED>"

#: Values that are visibly placeholders (ours, and other projects' conventions such as
#: ``FILTERED``, ``<API_KEY>``, ``X-GOOG-API-KEY-XXX``, ``Bearer ***``).
PLACEHOLDER_VALUE = re.compile(r"(?i)^\s*$|redacted|filtered|dummy|placeholder|xxx|\*{3}|^(?:bearer\s+)?<[^>]*>$")

NAMED = "named-secret"
QUERY = "query-secret"
RANDOM = "random-token"
_STRUCTURE_KINDS = ("url-userinfo", "url-token", QUERY, NAMED)
# Nothing in free text shorter than this is reported (an e-mail address "a@b.co" is six characters).
_SHORTEST_SECRET = 6
_WORD_BEFORE = re.compile(r"[A-Za-z][\w.\-]*")
# Words that are a value's type, not a secret (``access-control-allow-credentials: true``).
_LITERALS = frozenset({"true", "false", "null", "none", "undefined"})


def is_placeholder(value: str) -> bool:
    """True when a value is already redacted (or visibly a stand-in, like ``FILTERED``)."""
    return PLACEHOLDER_VALUE.search(value) is not None


@dataclass(frozen=True)
class Finding:
    """One secret found in a text: which kind, where, and a masked excerpt."""

    pattern: str
    start: int
    end: int
    excerpt: str


def mask(secret: str) -> str:
    """Show just enough of a secret to find it, never the whole thing."""
    if len(secret) <= 8:
        return secret[:2] + "…"
    return f"{secret[:6]}…{secret[-2:]}"


def _plausible_in_prose(value: str) -> bool:
    """Whether a value after "password:" in prose is one: "hunter2" is, "Open the menu" and "ssh-keygen" are not.

    Structured places (fields, headers, parameters) need no such test: there the name alone decides.
    """
    if len(value) < 6 or (any(c.isspace() for c in value) and not any(c.isdigit() for c in value)):
        return False
    has_digit = any(c.isdigit() for c in value)
    inner_upper = any(c.isupper() for c in value[1:])
    symbol = any(not c.isalnum() and c not in "-'" for c in value)
    return has_digit or inner_upper or symbol or len(value) >= 16


@dataclass(frozen=True)
class RuleSet:
    """What counts as a secret: built-in rules plus the user's, with personal data on or off.

    Args:
        headers: Extra header names to treat as credentials (case-insensitive).
        fields: Extra JSON/form field names whose values are replaced at any depth.
        patterns: Extra regular expressions (the user's ``redact_patterns``); a match is a secret.
        pii: Phone numbers, card numbers, IBANs and US social security numbers count too.
    """

    headers: frozenset[str] = frozenset()
    fields: frozenset[str] = frozenset()
    patterns: tuple[str, ...] = ()
    pii: bool = False
    _custom: tuple[SecretPattern, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "headers", frozenset(name.strip().lower() for name in self.headers))
        object.__setattr__(self, "fields", frozenset(self.fields))
        custom = tuple(SecretPattern("custom", re.compile(pattern)) for pattern in self.patterns)
        if self.fields:
            custom += (named_secret("custom-field", self.fields),)
        object.__setattr__(self, "_custom", custom)

    @classmethod
    def build(
        cls, headers: Iterable[str] = (), fields: Iterable[str] = (), patterns: Iterable[str] = (), *, pii: bool
    ) -> RuleSet:
        """A rule set from any iterables (the settings hold tuples)."""
        return cls(frozenset(headers), frozenset(fields), tuple(patterns), pii)

    @property
    def names(self) -> tuple[str, ...]:
        """Every kind this rule set reports (what ``--ignore`` accepts), ``header`` included."""
        kinds = [p.name for p in self._custom]
        kinds += [p.name for p in PATTERNS] + list(_STRUCTURE_KINDS)
        kinds += [vendor.kind for vendor in vendor_formats()] + [EMAIL.name]
        kinds += list(PII_KINDS) if self.pii else []
        return (*dict.fromkeys(kinds), RANDOM, "header")

    # -- names -----------------------------------------------------------------
    def header_is_secret(self, name: str) -> bool:
        """True when a header with this name carries a credential, whatever its value looks like."""
        return header_strength(name, self.headers) is Strength.STRONG

    def field_is_secret(self, name: str) -> bool:
        """True when a JSON or form field with this name holds a credential, whatever its value looks like."""
        return name in self.fields or name_strength(name) is Strength.STRONG

    def query_is_secret(self, name: str) -> bool:
        """True when a URL query parameter with this name holds a credential."""
        return name in self.fields or name_strength(name, query=True) is Strength.STRONG

    def judge(self, name: str, value: str, place: str = "field", siblings: Iterable[str] = ()) -> str | None:
        """The kind of secret ``value`` is because of the name it sits under, or None.

        Args:
            name: The field, header, parameter, cookie or tag name.
            value: Its value, as text.
            place: ``field`` (JSON, YAML or form), ``query`` (a bare ``key``/``token``/``code`` is a
                credential there), ``header`` (adds the always-sensitive headers and ``redact_headers``)
                or ``text`` (a ``name: value`` line in prose: only the last words count, and the value
                must look like a credential).
            siblings: The other field names of the same JSON object.
        """
        if not value.strip() or is_placeholder(value) or value.strip().lower() in _LITERALS:
            return None
        if name in self.fields:
            return "custom-field"
        kind = NAMED
        if place == "header":
            strength, kind = header_strength(name, self.headers), "header"
        elif place == "query":
            strength = name_strength(name, query=True)
            kind = QUERY if name_words(name) and name_words(name)[-1] in QUERY_ONLY_NAMES else NAMED
        else:
            strength = name_strength(name, siblings=tuple(siblings), head_only=place == "text")
        if strength is Strength.STRONG and (place != "text" or _plausible_in_prose(value)):
            return kind
        if strength is Strength.WEAK and looks_like_credential(value):
            return kind
        return None

    def _judge_parameter(self, name: str, value: str) -> str | None:
        kind = self.judge(name, value, "query")
        if kind is None and looks_random(value) and not is_identifier_name(name):
            kind = "url-token"
        return kind

    # -- free text ---------------------------------------------------------------
    def find(self, text: str, *, random_tokens: bool = True) -> Iterator[Finding]:
        """Every non-overlapping secret in ``text``, in order.

        Args:
            text: Any text: a prompt, a reply, a header value, a URL.
            random_tokens: Report random-looking tokens that nothing else names (off for values
                known to be ids or hashes).
        """
        yield from self._find(text, random_tokens)

    def scrub(self, text: str, *, random_tokens: bool = True) -> str:
        """``text`` with every secret replaced by the placeholder (context such as ``password=`` kept)."""
        return self.redact(text, random_tokens=random_tokens)[0]

    def redact(self, text: str, *, random_tokens: bool = True) -> tuple[str, list[Finding]]:
        """``scrub`` and ``find`` at once: the scrubbed text and every secret replaced in it."""
        found = self._find(text, random_tokens)
        for finding in reversed(found):
            replacement = PLACEHOLDER
            if finding.pattern == "bearer-token" and text[finding.start : finding.start + 6].lower() == "bearer":
                # Keep the scheme so a reader of the cassette still sees what kind of header it was.
                replacement = f"Bearer {PLACEHOLDER}"
            text = text[: finding.start] + replacement + text[finding.end :]
        return text, found

    def _find(self, text: str, random_tokens: bool) -> list[Finding]:
        """Every secret, as written or URL-encoded, overlapping claims merged: nothing any rule claims survives.

        The first rule to claim a stretch names it (``_spans`` yields the most specific first). A
        form body echoed inside JSON or a query copied into a log keeps its secrets URL-encoded
        (``%2B``, ``+``): those are found in the decoded text and claimed where their encoded
        spelling stands.
        """
        claims = [
            (start, end, order, kind) for order, (kind, start, end) in enumerate(self._spans(text, random_tokens))
        ]
        if "%" in text or "+" in text:
            claims += self._encoded_claims(text, random_tokens, len(claims))
        found: list[Finding] = []
        group: list[tuple[int, int, int, str]] = []
        for claim in sorted(c for c in claims if c[0] < c[1]):
            if group and claim[0] >= max(c[1] for c in group):
                found.append(_merged(text, group))
                group = []
            group.append(claim)
        if group:
            found.append(_merged(text, group))
        return found

    def _encoded_claims(self, text: str, random_tokens: bool, order: int) -> list[tuple[int, int, int, str]]:
        decoded = unquote_plus(text)
        if decoded == text:
            return []
        claims = []
        for kind, start, end in self._spans(decoded, random_tokens):
            secret = decoded[start:end]
            for spelling in {quote_plus(secret), quote(secret, safe=""), quote(secret)} - {secret}:
                flags = re.IGNORECASE if "%" in spelling else 0  # %2f and %2F
                for match in re.finditer(re.escape(spelling), text, flags):
                    claims.append((match.start(), match.end(), order, kind))
                    order += 1
        return claims

    def _spans(self, text: str, random_tokens: bool) -> Iterator[tuple[str, int, int]]:
        """Candidate ``(kind, start, end)`` spans, most specific first (the first to claim a span names it)."""
        if len(text) < _SHORTEST_SECRET:
            return
        for pattern in (*self._custom, PATTERNS[0]):
            yield from _pattern_spans(pattern, text)
        urls: list[tuple[int, int]] = []  # URLs with a claim inside: read part by part, not as one token
        every_url: list[tuple[int, int]] = []
        for url in URL.finditer(text):
            every_url.append(url.span())
            for kind, start, end in url_spans(url.group(), self._judge_parameter):
                urls.append(url.span())
                yield kind, url.start() + start, url.start() + end
        for pattern in PATTERNS[1:]:
            yield from _pattern_spans(pattern, text)
        for vendor in vendor_formats() if may_hold_vendor_key(text) else ():
            for start, end in vendor.spans(text):
                # A format that is a whole URL (a Slack webhook): its secret parts are claimed above, and the
                # rest of the URL (host, path) stays readable and matchable.
                if not any(start <= url_start and url_end <= end for url_start, url_end in urls):
                    yield vendor.kind, start, end
        yield from self._named_spans(text)
        yield from _pattern_spans(EMAIL, text)
        if self.pii:
            yield from find_pii(text)
        if random_tokens:
            for token in TOKEN.finditer(text):
                inside_url = any(start <= token.start() < end for start, end in every_url)
                if not inside_url and looks_random(token.group()):
                    yield RANDOM, token.start(), token.end()

    def _named_spans(self, text: str) -> Iterator[tuple[str, int, int]]:
        """``name: value`` pairs and XML elements whose name means a credential."""
        position = 0
        while ("=" in text or ":" in text) and (pair := NAMED_PAIR.search(text, position)) is not None:
            group = "quoted" if pair.group("quoted") is not None else "bare"
            value = pair.group(group).rstrip(".,!?:)")
            name = _with_words_before(text, pair.start("name"), pair.group("name"))
            position = pair.end()
            if "=" in value and name_words(name)[-1:] in (["cookie"], ["cookies"]):
                # "Cookie: theme=dark; sid=...": each pair is judged by its own name.
                position = pair.start(group)
                continue
            kind = self.judge(name, value, "text")
            if kind is not None:
                yield kind, pair.start(group), pair.start(group) + len(value)
        if "</" in text:
            for element in XML_ELEMENT.finditer(text):
                kind = self.judge(element.group("tag"), element.group("value"), "field")
                if kind is not None:
                    yield kind, element.start("value"), element.end("value")


def _merged(text: str, claims: list[tuple[int, int, int, str]]) -> Finding:
    start, end = claims[0][0], max(claim[1] for claim in claims)
    kind = min(claims, key=lambda claim: claim[2])[3]
    return Finding(kind, start, end, mask(text[start:end]))


def _with_words_before(text: str, start: int, name: str) -> str:
    """``name`` with up to two words before it on its line ("API key", "Your secret access key")."""
    before = text[max(0, start - 60) : start]
    if not before.endswith((" ", "\t")):
        return name
    words = _WORD_BEFORE.findall(before.splitlines()[-1] if before.strip() else "")
    return " ".join([*words[-2:], name])


def _pattern_spans(pattern: SecretPattern, text: str) -> Iterator[tuple[str, int, int]]:
    for match in pattern.regex.finditer(text):
        secret = match.group(pattern.group)
        if secret and (pattern.check is None or pattern.check(secret)):
            yield pattern.name, match.start(pattern.group), match.end(pattern.group)


#: The built-in rules without PII: what ``find_secrets`` and ``scrub_text`` apply.
DEFAULT_RULES = RuleSet()
#: Every built-in rule, PII included: what the lint checks by default and recording applies unless told not to.
ALL_RULES = RuleSet(pii=True)


def find_secrets(text: str) -> Iterator[Finding]:
    """Every non-overlapping secret in ``text`` under the built-in rules (PII excluded), in order."""
    return DEFAULT_RULES.find(text)


def scrub_text(text: str) -> str:
    """``text`` with every secret and e-mail address replaced by the placeholder (PII excluded)."""
    return DEFAULT_RULES.scrub(text)
