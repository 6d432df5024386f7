"""What secrets and personal data look like: names that hold credentials and value-shaped patterns.

Record-time redaction and ``jurybox lint-cassettes`` both read these through
``RuleSet`` (``_secrets.py``), so the lint can never miss a kind redaction knows.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from dataclasses import dataclass

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
        "x-auth-token",
        "x-amz-security-token",
        "x-csrf-token",
    }
)

#: Field and parameter names (lower case, ``-`` read as ``_``) whose value is a credential wherever
#: it appears: a header, a query parameter, a JSON field at any depth, a form field.
SECRET_NAMES = frozenset(
    {
        "password",
        "passwd",
        "pwd",
        "secret",
        "client_secret",
        "api_key",
        "apikey",
        "access_token",
        "refresh_token",
        "id_token",
        "session_token",
        "auth_token",
        "private_key",
        "secret_key",
        "aws_secret_access_key",
        "x_amz_security_token",
        "x_amz_signature",
        "x_amz_credential",
        "sig",
        "signature",
        "accountkey",
        "account_key",
        "sharedaccesssignature",
    }
)
#: Names that are credentials only in a URL query (``?key=`` of Gemini): in a JSON body, ``token``
#: is a logprob's token and ``key`` an ordinary field.
QUERY_ONLY_NAMES = frozenset({"key", "token", "code"})


def normal_name(name: str) -> str:
    """A field or header name as the name sets spell it: lower case, ``-`` as ``_``."""
    return name.strip().lower().replace("-", "_")


@dataclass(frozen=True)
class SecretPattern:
    """A named regular expression for one kind of secret or personal data.

    Attributes:
        name: The kind, as lint reports it and ``--ignore`` names it.
        regex: What it looks like.
        group: The group holding the secret itself (0: the whole match); the rest is context kept.
        check: A further test of the secret's text (a Luhn sum), or None.
        pii: Personal data, replaced only when PII redaction is on (lint always reports it).
    """

    name: str
    regex: re.Pattern[str]
    group: int = 0
    check: Callable[[str], bool] | None = None
    pii: bool = False


def named_secret(name: str, names: frozenset[str]) -> SecretPattern:
    """A pattern for ``NAME=value`` / ``"NAME": "value"`` in any text (a URL, a form, JSON, YAML-escaped JSON)."""
    return SecretPattern(
        name,
        re.compile(rf"(?i)(?<![A-Za-z0-9_\-])(?:{_named(names)})[\\\"']*\s*[=:]\s*[\\\"']*{_VALUE}"),
        1,
    )


def _named(names: frozenset[str]) -> str:
    # Both spellings of each name ("api_key", "api-key"), longest first so a prefix never wins.
    spellings = {spelling for name in names for spelling in (name, name.replace("_", "-"))}
    return "|".join(re.escape(n) for n in sorted(spellings, key=len, reverse=True))


def _basic_credentials(token: str) -> bool:
    try:
        decoded = base64.b64decode(token, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return False
    return ":" in decoded and decoded.isprintable()


def luhn_valid(number: str) -> bool:
    """True for a card-length digit string (separators allowed) whose Luhn checksum holds."""
    digits = [int(char) for char in number if char.isdigit()]
    if not 13 <= len(digits) <= 19:
        return False
    total = 0
    for index, digit in enumerate(reversed(digits)):
        doubled = digit * 2 if index % 2 else digit
        total += doubled - 9 if doubled > 9 else doubled
    return total % 10 == 0


# A value ends at a quote, separator or space; it never starts with "<", so "<REDACTED>" is not found again.
# JSON's null/true/false are no secret (and replacing them would break the JSON).
_VALUE = r"""(?!(?:null|true|false)\b)([^\s&"'\\,;}<>#]+)"""

# Order matters: the first pattern that matches a span names it (sk-ant- before sk-).
PATTERNS: tuple[SecretPattern, ...] = (
    SecretPattern(
        "private-key",
        re.compile(r"-----BEGIN[A-Z ]*PRIVATE KEY-----(?:.*?-----END[A-Z ]*PRIVATE KEY-----|.*)", re.DOTALL),
    ),
    SecretPattern("url-userinfo", re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://([^\s/:@\"'<>]+:[^\s/@\"'<>]+)@"), 1),
    SecretPattern("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{16,}")),
    SecretPattern("stripe-key", re.compile(r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}")),
    SecretPattern("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{16,}")),
    SecretPattern("aws-access-key", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b")),
    SecretPattern(
        "aws-secret-key",
        re.compile(r"(?i)aws_?secret_?access_?key[\"'\s:=]+[A-Za-z0-9/+]{40}\b"),
    ),
    SecretPattern("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})")),
    SecretPattern("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b")),
    SecretPattern("slack-token", re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}")),
    SecretPattern("huggingface-token", re.compile(r"\bhf_[A-Za-z0-9]{30,}")),
    SecretPattern("jwt", re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")),
    SecretPattern("bearer-token", re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=\-]{8,}")),
    SecretPattern("basic-credentials", re.compile(r"(?i)\bbasic\s+([A-Za-z0-9+/]{6,}={0,2})"), 1, _basic_credentials),
    named_secret("named-secret", SECRET_NAMES),
    SecretPattern("query-secret", re.compile(rf"(?im)(?:^|[?&;])(?:{_named(QUERY_ONLY_NAMES)})={_VALUE}"), 1),
    SecretPattern("email", re.compile(r"\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}\b")),
    SecretPattern(
        "card-number", re.compile(r"(?<![\d.])[3-6]\d{3}(?:[ \-]?\d{4}){2}[ \-]?\d{1,7}(?![\d.])"), 0, luhn_valid, True
    ),
    SecretPattern("us-ssn", re.compile(r"\b(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}\b"), pii=True),
    SecretPattern(
        "phone-number",
        re.compile(r"(?<![\w+])(?:\+\d{1,3}[ .\-]?)?\(?\d{3}\)?[ .\-]\d{3}[ .\-]\d{4}(?![\w])"),
        pii=True,
    ),
)
