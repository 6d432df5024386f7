"""Does a name (a header, a query parameter, a JSON or form field, a cookie, an XML tag) hold a credential?

The name is read as words, whatever its style: ``DB_PASSWORD``, ``newPassword``,
``x-api-key``, ``SessionToken``, ``client.secret`` and ``apikey`` all end in a
word that means "credential". The answer has three grades:

- ``STRONG``: the value is a credential whatever it looks like (``password``,
  ``secret``, ``api_key``, ``session``, ``signature``, ``dsn``, ``webhook``...);
- ``WEAK``: the name may hold a credential or an ordinary value (a bare ``key``,
  a ``sort_key``): the value is one only when it looks like one;
- ``NONE``: not a credential name, or a name *about* a credential whose value is
  not the credential itself (``max_tokens``, ``token_type``, ``password_length``,
  ``key_id``).

This is a reading of meaning, not a list of vendors: a new vendor's
``ACME_SIGNING_SECRET`` or ``X-Acme-Session`` is recognised without being named here.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from enum import IntEnum


class Strength(IntEnum):
    """How sure a name is to hold a credential (see the module docstring)."""

    NONE = 0
    WEAK = 1
    STRONG = 2


# Words that name a credential on their own.
_CREDENTIAL_WORDS = frozenset(
    {
        "password", "passwords", "passwd", "passphrase", "passcode", "pwd",
        "secret", "secrets", "credential", "credentials", "creds",
        "token", "apikey", "auth", "oauth", "authorization", "authorisation",
        "session", "sessionid", "sid", "sessid", "cookie", "cookies",
        "signature", "sig", "dsn", "webhook", "webhooks", "jwt", "bearer", "otp", "csrf", "xsrf",
    }
)  # fmt: skip
# Parts of a run-together name (``newpassword``, ``clientsecret``) that mean a credential anywhere in it...
_CREDENTIAL_STEMS = ("password", "passwd", "passphrase", "secret", "credential", "cookie", "signature", "webhook")
# ..."session" too, but not in "possession" or "obsession"...
_SESSION_IN_WORD = re.compile(r"(?<!pos)(?<!ob)session|sessid")
# ...and endings that mean one (``dbpwd``, ``sentrydsn``, ``xcsrftoken``, ``hotp``).
_CREDENTIAL_ENDINGS = (
    "token", "pwd", "dsn", "sid", "otp", "jwt", "csrf", "xsrf", "auth", "sig", "bearer", "authorization",
    "authorisation", "apikey",
)  # fmt: skip
# Words before ``key`` that make it a credential (``api_key``, ``AccountKey``, ``signing-key``).
_KEY_QUALIFIERS = frozenset(
    {
        "api", "access", "secret", "private", "account", "master", "signing", "sign", "shared", "license",
        "licence", "subscription", "encryption", "client", "auth", "session", "app", "admin", "service",
        "storage", "webhook", "ssh", "deploy", "bot", "integration", "consumer", "root", "write", "hmac",
        "sas", "crypto", "aes", "rsa", "gpg", "pgp", "personal", "project", "org", "organization", "server",
        "live", "restricted", "publishable", "ingest", "ingestion", "dd", "mgmt", "management", "upload",
        "pass",
    }
)  # fmt: skip
# Head words that describe a credential rather than hold it (``token_type``, ``password_min_length``).
_ABOUT_WORDS = frozenset(
    {
        "count", "counts", "length", "len", "size", "limit", "limits", "max", "min", "type", "types", "kind",
        "name", "names", "format", "expires", "expiry", "expiration", "exp", "expire", "expired", "at", "time",
        "timestamp", "ttl", "date", "version", "enabled", "required", "policy", "id", "ids", "hint", "header",
        "headers", "field", "fields", "param", "params", "prompt", "usage", "details", "remaining", "reset",
        "used", "budget", "index", "idx", "position", "offset", "rate", "ratio", "strength", "valid",
        "validity", "present", "set", "mode", "method", "scheme", "scope", "scopes", "provider", "label",
        "description", "error", "errors", "status", "url", "endpoint", "uri", "path", "file", "env", "var",
        "algorithm", "alg", "encoding", "location", "source", "prefix", "suffix",
    }
)  # fmt: skip
# Heads that are about a credential except right after "session" (a session's id is its credential).
_SESSION_HOLDERS = frozenset({"id", "ids", "key", "value"})
# A head that makes the words before it modifiers, yet keeps the name a credential (``webhook_url``).
_CREDENTIAL_LOCATIONS = frozenset({"url", "uri", "endpoint", "value", "string", "data", "b64", "base64", "hex"})
# Words of names whose values are identifiers, hashes, trace ids or host and pod names: random-looking
# but not secret.
_IDENTIFIER_WORDS = frozenset(
    {
        "id", "ids", "uuid", "guid", "fingerprint", "etag", "hash", "digest", "checksum", "sha", "sha1",
        "sha256", "md5", "ray", "trace", "traceparent", "tracestate", "span", "model", "object", "type",
        "role", "version", "encoding", "encrypted", "embedding", "embeddings", "data", "image", "audio",
        "commit", "revision", "rev", "requestid", "traceid", "spanid", "via", "server", "host", "hostname",
        "pod", "node", "instance", "region", "deployment",
    }
)  # fmt: skip
#: Headers that carry credentials or account identity whatever their words say.
SENSITIVE_HEADERS = frozenset(
    {
        "authorization", "proxy-authorization", "x-api-key", "api-key", "cookie", "set-cookie",
        "openai-organization", "openai-project", "x-goog-api-key", "x-auth-token", "x-amz-security-token",
        "x-csrf-token",
    }
)  # fmt: skip
#: Names that are credentials only in a URL query (Gemini's ``?key=``, OAuth's ``?code=``): in a JSON
#: body ``key`` is an ordinary field and ``code`` an error code or a program.
QUERY_ONLY_NAMES = frozenset({"key", "token", "code"})
# Siblings that say a "token" field is a model's text token (logprobs), not a credential.
_LOGPROB_SIBLINGS = re.compile(r"(?i)logprob|^prob|logit")

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEPARATORS = re.compile(r"[^A-Za-z0-9]+")


def name_words(name: str) -> list[str]:
    """A name as lower-case words: ``newPassword`` -> new, password; ``X-Amz-Credential`` -> x, amz, credential."""
    words: list[str] = []
    for part in _SEPARATORS.split(name):
        words.extend(word.lower() for word in _CAMEL.split(part) if word)
    # A trailing number is a version, not a word (``X-Hub-Signature-256``).
    while words and words[-1].isdigit():
        words.pop()
    return words


def _word_strength(word: str, before: str) -> Strength:
    """How much one word (with the word before it) says "credential"."""
    if word in {"key", "keys"}:
        return Strength.STRONG if before in _KEY_QUALIFIERS else Strength.WEAK
    if word in ("tokens", "sessions", "signatures", "sigs"):
        # Counts and lists of model tokens, logs of sessions: a qualifier makes them credentials.
        strong = before in _KEY_QUALIFIERS or before in ("auth", "refresh", "bearer")
        return Strength.STRONG if strong else Strength.NONE
    if word in _CREDENTIAL_WORDS:
        return Strength.STRONG
    # A run-together name (newpassword, phpsessid, dbapikey, sentrydsn, xcsrftoken): read by its parts.
    if any(stem in word for stem in _CREDENTIAL_STEMS) and not word.startswith("secretar"):
        return Strength.STRONG
    if _SESSION_IN_WORD.search(word) or word.endswith(_CREDENTIAL_ENDINGS):
        return Strength.STRONG
    if word.endswith("key") and any(word.endswith(f"{q}key") for q in _KEY_QUALIFIERS):
        return Strength.STRONG
    return Strength.NONE


def name_strength(
    name: str, *, query: bool = False, siblings: Collection[str] = (), head_only: bool = False
) -> Strength:
    """How sure it is that the value under ``name`` is a credential.

    Args:
        name: The header, parameter, field, cookie or tag name, in any spelling.
        query: The name is a URL query parameter (a bare ``key``, ``token`` or ``code`` is then a credential).
        siblings: The other names of the same JSON object (a ``token`` beside a ``logprob`` is model text).
        head_only: Judge by the last words only: in prose, "the secret sauce: butter" is about sauce.
    """
    words = name_words(name)
    if not words:
        return Strength.NONE
    if query and len(words) == 1 and words[0] in QUERY_ONLY_NAMES:
        return Strength.STRONG
    if words == ["token"] and any(_LOGPROB_SIBLINGS.search(str(s)) for s in siblings):
        return Strength.NONE
    head, before = words[-1], words[-2] if len(words) > 1 else ""
    if head in _SESSION_HOLDERS and before in ("session", "sess"):
        return Strength.STRONG
    if head in _ABOUT_WORDS and head not in _CREDENTIAL_LOCATIONS:
        return Strength.NONE
    if head in _CREDENTIAL_LOCATIONS and len(words) > 1:
        # ``webhook_url``, ``api_key_value``: the head is where or how the credential is written.
        head, before = words[-2], words[-3] if len(words) > 2 else ""
    strength = _word_strength(head, before)
    if strength or head_only:
        return strength
    # A credential word earlier in the name, with a head that is not about it: ``password_confirmation``,
    # ``secret_access_key`` (read above), ``sentry_dsn_public``.
    earlier = max((_word_strength(w, "") for w in words[:-1]), default=Strength.NONE)
    return Strength.STRONG if earlier is Strength.STRONG else Strength.NONE


def header_strength(name: str, extra: Collection[str] = ()) -> Strength:
    """``name_strength`` for a header, with the always-sensitive headers and the user's ``redact_headers``."""
    lowered = name.strip().lower()
    if lowered in SENSITIVE_HEADERS or lowered in extra:
        return Strength.STRONG
    return name_strength(name)


def is_identifier_name(name: str) -> bool:
    """True when the values under ``name`` are ids, hashes or encoded data: random-looking, not secret."""
    return any(word in _IDENTIFIER_WORDS for word in name_words(name))
