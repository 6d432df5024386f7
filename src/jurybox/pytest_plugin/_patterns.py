"""What secrets look like in free text: the shapes jurybox reads itself, beside detect-secrets' vendor formats.

Record-time redaction and ``jurybox lint-cassettes`` both read these through
``RuleSet`` (``_secrets.py``), so the lint can never miss a kind redaction knows.
Kept here: shapes that are not one vendor's (PEM private keys, bearer and Basic
credentials, JWTs, e-mail addresses, ``name=value`` pairs and XML elements whose
name means a credential) and the keys of the LLM providers jurybox talks to,
which detect-secrets does not know (Anthropic, OpenAI's ``sk-proj-`` keys,
Google, Hugging Face) or knows more narrowly (Stripe test keys, Slack). Every
other vendor's format comes from detect-secrets (``_vendors.py``).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from dataclasses import dataclass

from jurybox.pytest_plugin._pii import luhn_valid

__all__ = ["EMAIL", "NAMED_PAIR", "PATTERNS", "XML_ELEMENT", "SecretPattern", "luhn_valid", "named_secret"]


@dataclass(frozen=True)
class SecretPattern:
    """A named regular expression for one kind of secret.

    Attributes:
        name: The kind, as lint reports it and ``--ignore`` names it.
        regex: What it looks like.
        group: The group holding the secret itself (0: the whole match); the rest is context kept.
        check: A further test of the secret's text (a base64 ``user:password``), or None.
    """

    name: str
    regex: re.Pattern[str]
    group: int = 0
    check: Callable[[str], bool] | None = None


# A value ends at a quote, separator or space; it never starts with "<", so "<REDACTED>" is not found again.
# JSON's null/true/false are no secret (and replacing them would break the JSON).
_VALUE = r"""(?!(?:null|true|false)\b)([^\s&"'\\,;}<>#]+)"""


def named_secret(name: str, names: frozenset[str]) -> SecretPattern:
    """A pattern for ``NAME=value`` / ``"NAME": "value"`` with exactly these names (the user's ``redact_fields``)."""
    spellings = {spelling for n in names for spelling in (n, n.replace("_", "-"))}
    alternatives = "|".join(re.escape(n) for n in sorted(spellings, key=len, reverse=True))
    return SecretPattern(
        name, re.compile(rf"(?i)(?<![A-Za-z0-9_\-])(?:{alternatives})[\\\"']*\s*[=:]\s*[\\\"']*{_VALUE}"), 1
    )


def _basic_credentials(token: str) -> bool:
    try:
        decoded = base64.b64decode(token, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return False
    return ":" in decoded and decoded.isprintable()


#: ``name = value``, ``name: value``, ``"name": "value"``, ``NAME=value`` in free text (a prompt, a
#: config file pasted in a reply, an env line). The name is the identifier before the separator
#: ("DB_PASSWORD="; the reader adds up to two words before it: "API key:"); whether it means a
#: credential is ``_names``' call.
NAMED_PAIR = re.compile(
    r"(?P<name>(?<![\w\-.$])[A-Za-z_][\w.\-]{0,80})"
    r"\\?[\"']?[ \t]*(?::=|=>|[=:])[ \t]*"
    r"(?:(?P<quote>\\?[\"'])(?P<quoted>[^\"'\n\\<]{1,200})(?P=quote)"
    # An auth scheme ("Authorization: Bearer ...") is context: the credential is what follows it.
    r"|(?:(?i:bearer|basic|token|digest)[ \t]+)?"
    r"(?P<bare>(?!<)(?!(?i:null|true|false|none|bearer|basic|token|digest)\b)[^\s\"'\\,;}<>()\[\]`]{1,4096}))"
)
#: ``<SessionToken>value</SessionToken>``: an XML element (AWS STS, SOAP) whose tag may name a credential.
XML_ELEMENT = re.compile(r"<(?P<tag>[A-Za-z][\w.\-:]{0,80})(?:\s[^<>]{0,200})?>(?P<value>[^<]{1,4096})</(?P=tag)>")

# Order matters: the first pattern that matches a span names it (sk-ant- before sk-).
PATTERNS: tuple[SecretPattern, ...] = (
    SecretPattern(
        "private-key",
        re.compile(r"-----BEGIN[A-Z ]*PRIVATE KEY-----(?:.*?-----END[A-Z ]*PRIVATE KEY-----|.*)", re.DOTALL),
    ),
    SecretPattern("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{16,}")),
    SecretPattern("stripe-key", re.compile(r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}")),
    SecretPattern("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{16,}")),
    SecretPattern(
        "aws-secret-key",
        re.compile(r"(?i)aws_?secret_?access_?key[\"'\s:=]+([A-Za-z0-9/+]{40})\b"),
        1,
    ),
    SecretPattern("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b")),
    SecretPattern("slack-token", re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}")),
    SecretPattern("huggingface-token", re.compile(r"\b(?:hf|api_org)_[A-Za-z0-9]{30,}")),
    SecretPattern("jwt", re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")),
    SecretPattern("bearer-token", re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=\-]{8,}")),
    SecretPattern("basic-credentials", re.compile(r"(?i)\bbasic\s+([A-Za-z0-9+/]{6,}={0,2})"), 1, _basic_credentials),
)
#: E-mail addresses: personal data, but redacted whether or not PII redaction is on.
EMAIL = SecretPattern("email", re.compile(r"\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}\b"))
