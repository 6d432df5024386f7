"""What a secret looks like: sensitive header names and key-shaped patterns, shared by redaction and the lint."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

#: What a redacted value is replaced with. ``<`` and ``>`` keep it from matching any pattern below.
PLACEHOLDER = "<REDACTED>"

#: Headers that always carry credentials or session state.
SENSITIVE_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "cookie",
        "set-cookie",
        "openai-organization",
        "openai-project",
        "x-goog-api-key",
    }
)

#: Header values that are visibly placeholders (ours, and other projects' conventions such as
#: ``FILTERED``, ``<API_KEY>``, ``X-GOOG-API-KEY-XXX``, ``Bearer ***``).
PLACEHOLDER_VALUE = re.compile(r"(?i)^\s*$|redacted|filtered|dummy|placeholder|xxx|\*{3}|^(?:bearer\s+)?<[^>]*>$")


def is_placeholder(value: str) -> bool:
    """True when a header value is already redacted."""
    return PLACEHOLDER_VALUE.search(value) is not None


@dataclass(frozen=True)
class SecretPattern:
    """A named regular expression for one kind of secret."""

    name: str
    regex: re.Pattern[str]


# Order matters: the first pattern that matches a span names it (sk-ant- before sk-).
PATTERNS: tuple[SecretPattern, ...] = (
    SecretPattern("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{16,}")),
    SecretPattern("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{16,}")),
    SecretPattern("aws-access-key", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b")),
    SecretPattern(
        "aws-secret-key",
        re.compile(r"(?i)aws_?secret_?access_?key[\"'\s:=]+[A-Za-z0-9/+]{40}\b"),
    ),
    SecretPattern("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})")),
    SecretPattern("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b")),
    SecretPattern("bearer-token", re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=\-]{8,}")),
    SecretPattern("email", re.compile(r"\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}\b")),
)


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


def find_secrets(text: str) -> Iterator[Finding]:
    """Every non-overlapping secret in ``text``, in order."""
    taken: list[tuple[int, int]] = []
    found: list[Finding] = []
    for pattern in PATTERNS:
        for match in pattern.regex.finditer(text):
            span = match.span()
            if any(span[0] < end and start < span[1] for start, end in taken):
                continue
            taken.append(span)
            found.append(Finding(pattern.name, span[0], span[1], mask(match.group())))
    yield from sorted(found, key=lambda finding: finding.start)


def scrub_text(text: str) -> str:
    """``text`` with every key-shaped secret and e-mail address replaced by the placeholder."""
    findings = list(find_secrets(text))
    for finding in reversed(findings):
        replacement = PLACEHOLDER
        if finding.pattern == "bearer-token":
            # Keep the scheme so a reader of the cassette still sees what kind of header it was.
            replacement = f"Bearer {PLACEHOLDER}"
        text = text[: finding.start] + replacement + text[finding.end :]
    return text
