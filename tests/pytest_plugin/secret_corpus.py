"""Generated secrets and personal data for the redaction and lint tests (issue 32).

Every fake is built from a seeded ``random.Random`` in its kind's published shape
(prefix, alphabet, length): nothing here is a real credential, and no value is
written out by hand, so the detector is checked against shapes, not samples.
Hypothesis draws the seed, the kind, the name the value sits under (in every
naming style) and the place it is planted in.
"""

from __future__ import annotations

import random
import re
import string
import uuid
from collections.abc import Callable
from dataclasses import dataclass

import phonenumbers
from hypothesis import strategies as st

B62 = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
B64URL = B62 + "-_"
B64 = B62 + "+/"
UPPER36 = string.ascii_uppercase + string.digits


@dataclass(frozen=True)
class Fake:
    """One planted value.

    Attributes:
        kind: What it is (``groq-key``, ``phone-e164``...).
        value: What is planted.
        core: The part that must not reach disk in any piece of 12 characters (the random part of a
            key; the digits of a phone or card number).
    """

    kind: str
    value: str
    core: str


def _pick(rng: random.Random, alphabet: str, size: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(size))


def _keyed(prefix: str, alphabet: str, size: int, suffix: str = "") -> Callable[[random.Random], tuple[str, str]]:
    def make(rng: random.Random) -> tuple[str, str]:
        core = _pick(rng, alphabet, size)
        return f"{prefix}{core}{suffix}", core

    return make


def _uuid(prefix: str = "") -> Callable[[random.Random], tuple[str, str]]:
    def make(rng: random.Random) -> tuple[str, str]:
        core = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        return prefix + core, core

    return make


def _sentry_dsn(rng: random.Random) -> tuple[str, str]:
    key = _pick(rng, HEX, 32)
    return f"https://{key}@o{rng.randint(10**5, 10**6)}.ingest.sentry.io/{rng.randint(10**6, 10**7)}", key


def _slack_webhook(rng: random.Random) -> tuple[str, str]:
    secret = _pick(rng, B62, 24)
    team, bot = "T" + _pick(rng, UPPER36, 10), "B" + _pick(rng, UPPER36, 10)
    return f"https://hooks.slack.com/services/{team}/{bot}/{secret}", secret


def _discord_webhook(rng: random.Random) -> tuple[str, str]:
    token = _pick(rng, B64URL, 68)
    return f"https://discord.com/api/webhooks/{rng.randint(10**17, 10**18)}/{token}", token


def _sendgrid(rng: random.Random) -> tuple[str, str]:
    core = _pick(rng, B64URL, 43)
    return f"SG.{_pick(rng, B64URL, 22)}.{core}", core


def _airtable(rng: random.Random) -> tuple[str, str]:
    core = _pick(rng, HEX, 64)
    return f"pat{_pick(rng, B62, 14)}.{core}", core


def _pem(rng: random.Random) -> tuple[str, str]:
    body = _pick(rng, B64, 64 * 4)
    lines = "\n".join(body[i : i + 64] for i in range(0, len(body), 64))
    kind = rng.choice(("RSA ", "EC ", "OPENSSH ", ""))
    return f"-----BEGIN {kind}PRIVATE KEY-----\n{lines}\n-----END {kind}PRIVATE KEY-----", body[:64]


def _jwt(rng: random.Random) -> tuple[str, str]:
    from base64 import urlsafe_b64encode
    from json import dumps

    def part(data: object) -> str:
        return urlsafe_b64encode(dumps(data).encode()).decode().rstrip("=")

    signature = _pick(rng, B64URL, 43)
    payload = {"sub": str(rng.randint(1, 10**9)), "iat": rng.randint(1_600_000_000, 1_800_000_000)}
    return f"{part({'alg': 'HS256', 'typ': 'JWT'})}.{part(payload)}.{signature}", signature


#: The vendor kinds of issue 32 (and more), each as ``seed -> (value, core)``.
VENDOR_KINDS: dict[str, Callable[[random.Random], tuple[str, str]]] = {
    "aws-access-key-id": _keyed("AKIA", UPPER36, 16),
    "aws-secret-access-key": _keyed("", B64, 40),
    "aws-session-token": _keyed("FwoGZXIvYXdzE", B64, 180),
    "gcs-hmac-access-id": _keyed("GOOG1E", UPPER36, 55),
    "gcs-hmac-secret": _keyed("", B64, 40),
    "azure-storage-key": _keyed("", B64, 86, "=="),
    "twilio-api-key": _keyed("SK", HEX, 32),
    "twilio-auth-token": _keyed("", HEX, 32),
    "sendgrid-key": _sendgrid,
    "mailgun-key": _keyed("key-", HEX, 32),
    "npm-token": _keyed("npm_", B62, 36),
    "pypi-token": _keyed("pypi-AgEIcHlwaS5vcmc", B64URL, 140),
    "docker-pat": _keyed("dckr_pat_", B64URL, 27),
    "huggingface-org-token": _keyed("api_org_", B62, 34),
    "cohere-key": _keyed("", B62, 40),
    "groq-key": _keyed("gsk_", B62, 52),
    "mistral-key": _keyed("", B62, 32),
    "replicate-token": _keyed("r8_", B62, 37),
    "datadog-api-key": _keyed("", HEX, 32),
    "datadog-app-key": _keyed("", HEX, 40),
    "shopify-token": _keyed("shpat_", HEX, 32),
    "square-token": _keyed("EAAA", B64URL, 60),
    "square-oauth-secret": _keyed("sq0csp-", B64URL, 43),
    "digitalocean-token": _keyed("dop_v1_", HEX, 64),
    "heroku-key": _uuid(),
    "heroku-token": _uuid("HRKU-"),
    "okta-token": _keyed("00", B62, 40),
    "vault-token": _keyed("hvs.", B62, 90),
    "sentry-dsn": _sentry_dsn,
    "slack-webhook": _slack_webhook,
    "discord-webhook": _discord_webhook,
    "stripe-webhook-secret": _keyed("whsec_", B62, 32),
    "svix-webhook-secret": _keyed("whsec_", B64, 32),
    "linear-key": _keyed("lin_api_", B62, 40),
    "notion-secret": _keyed("secret_", B62, 43),
    "airtable-pat": _airtable,
    "cloudflare-token": _keyed("", B64URL, 40),
    "gitlab-token": _keyed("glpat-", B64URL, 20),
    "google-oauth-secret": _keyed("GOCSPX-", B64URL, 28),
    "openai-key": _keyed("sk-proj-", B64URL, 48),
    "anthropic-key": _keyed("sk-ant-api03-", B64URL, 93, "AA"),
    "pem-private-key": _pem,
    "jwt": _jwt,
}

# -- passwords and other values a credential name holds ---------------------------

_WORDS = ("hunter", "dragon", "monkey", "shadow", "sunshine", "orange", "purple", "winter")


def password(rng: random.Random) -> tuple[str, str]:
    """A password as people write them: word and digits, with symbols, random, or a long PIN."""
    shape = rng.randrange(4)
    if shape == 0:
        value = f"{rng.choice(_WORDS)}{rng.randint(10, 9999)}"
    elif shape == 1:
        value = f"{rng.choice(_WORDS).capitalize()}{rng.choice('!@#$%&*')}{rng.randint(10, 99)}{_pick(rng, B62, 4)}"
    elif shape == 2:
        value = _pick(rng, B62 + "!@#%^*", 16)
    else:
        value = str(rng.randint(10**7, 10**9))
    return value, value


# -- names --------------------------------------------------------------------------

#: Credential words, as word lists; every naming style of each is a credential name.
CREDENTIAL_NAMES: tuple[tuple[str, ...], ...] = (
    ("password",), ("passwd",), ("pwd",), ("passphrase",), ("secret",), ("client", "secret"), ("api", "key"),
    ("access", "token"), ("refresh", "token"), ("auth", "token"), ("session", "token"), ("session", "id"),
    ("session",), ("sid",), ("signature",), ("sig",), ("credentials",), ("credential",), ("private", "key"),
    ("secret", "access", "key"), ("account", "key"), ("signing", "secret"), ("webhook", "secret"),
    ("webhook", "url"), ("dsn",), ("auth",), ("authorization",), ("token",), ("bearer", "token"),
    ("csrf", "token"), ("cookie",), ("access", "key"), ("master", "key"), ("subscription", "key"),
)  # fmt: skip
PREFIXES: tuple[tuple[str, ...], ...] = (
    (), ("db",), ("new",), ("old",), ("x",), ("my",), ("aws",), ("stripe",), ("twilio",), ("sentry",),
    ("slack",), ("app",), ("user",), ("admin",), ("x", "acme"), ("service",), ("prod",),
)  # fmt: skip


def styled(words: tuple[str, ...], style: str) -> str:
    """``words`` in one naming style: snake, SCREAMING, camel, Pascal, kebab, Title-Kebab, dotted, run-together."""
    if style == "snake":
        return "_".join(words)
    if style == "screaming":
        return "_".join(words).upper()
    if style == "camel":
        return words[0] + "".join(w.capitalize() for w in words[1:])
    if style == "pascal":
        return "".join(w.capitalize() for w in words)
    if style == "kebab":
        return "-".join(words)
    if style == "title-kebab":
        return "-".join(w.capitalize() for w in words)
    if style == "dotted":
        return ".".join(words)
    return "".join(words)  # run together: apikey, newpassword, sessiontoken


STYLES = ("snake", "screaming", "camel", "pascal", "kebab", "title-kebab", "dotted", "together")

credential_names = st.builds(
    lambda prefix, words, style: styled(prefix + words, style),
    st.sampled_from(PREFIXES),
    st.sampled_from(CREDENTIAL_NAMES),
    st.sampled_from(STYLES),
)

# -- personal data ---------------------------------------------------------------

_PHONE_REGIONS = ("US", "GB", "FR", "DE", "IN", "ES", "IT", "NL", "AU", "BR", "JP", "SE", "PL", "CH", "IE", "MX")


def phone(rng: random.Random) -> tuple[str, str]:
    """A valid phone number of a random region in E.164, international or national format."""
    while True:
        region = rng.choice(_PHONE_REGIONS)
        kind = rng.choice((phonenumbers.PhoneNumberType.MOBILE, phonenumbers.PhoneNumberType.FIXED_LINE))
        example = phonenumbers.example_number_for_type(region, kind)
        if example is None:
            continue
        national = str(example.national_number)
        # Vary the last digits; keep the number only if the numbering plan says it is valid.
        number = national[:-3] + str(rng.randint(0, 999)).zfill(3)
        parsed = phonenumbers.parse(f"+{example.country_code}{number}")
        if not phonenumbers.is_valid_number(parsed):
            continue
        style = rng.choice(("E164", "INTERNATIONAL", "NATIONAL"))
        formatted = phonenumbers.format_number(parsed, getattr(phonenumbers.PhoneNumberFormat, style))
        return formatted, "".join(c for c in formatted if c.isdigit())


def _luhn_complete(digits: str) -> str:
    total = 0
    for index, char in enumerate(reversed(digits + "0")):
        digit = int(char) * (2 if index % 2 else 1)
        total += digit - 9 if digit > 9 else digit
    return digits + str((10 - total % 10) % 10)


def card(rng: random.Random) -> tuple[str, str]:
    """A Luhn-valid card number (Visa, Mastercard or Amex) with spaces, dashes, dots or nothing between groups."""
    separator = rng.choice(("", " ", "-", "."))
    if rng.random() < 0.25:
        digits = _luhn_complete("3" + rng.choice("47") + _pick(rng, string.digits, 12))
        groups = (digits[:4], digits[4:10], digits[10:])
    else:
        digits = _luhn_complete(rng.choice("45") + _pick(rng, string.digits, 14))
        groups = (digits[:4], digits[4:8], digits[8:12], digits[12:])
    return separator.join(groups), digits


_IBAN_LAYOUTS = {
    "DE": "n18",
    "FR": "n10a11n2",
    "ES": "n20",
    "IT": "a1n10a12",
    "NL": "a4n10",
    "GB": "a4n14",
    "BE": "n12",
}


def iban(rng: random.Random) -> tuple[str, str]:
    """A valid IBAN (mod-97 check digits computed), compact or in groups of four."""
    country = rng.choice(sorted(_IBAN_LAYOUTS))
    layout = _IBAN_LAYOUTS[country]
    bban = ""
    for kind, size in re.findall(r"([na])(\d+)", layout):
        bban += _pick(rng, string.digits if kind == "n" else string.ascii_uppercase, int(size))
    rearranged = bban + country + "00"
    check = 98 - int("".join(str(int(c, 36)) for c in rearranged)) % 97
    compact = f"{country}{check:02d}{bban}"
    if rng.random() < 0.5:
        return " ".join(compact[i : i + 4] for i in range(0, len(compact), 4)), compact
    return compact, compact


def email(rng: random.Random) -> tuple[str, str]:
    user = f"{rng.choice(_WORDS)}.{_pick(rng, string.ascii_lowercase, 6)}{rng.randint(1, 99)}"
    value = f"{user}@{_pick(rng, string.ascii_lowercase, 8)}.{rng.choice(('com', 'org', 'io', 'co.uk'))}"
    return value, value


def ssn(rng: random.Random) -> tuple[str, str]:
    value = f"{rng.randint(100, 665)}-{rng.randint(10, 99)}-{rng.randint(1000, 9999)}"
    return value, value


PII_KINDS: dict[str, Callable[[random.Random], tuple[str, str]]] = {
    "phone": phone,
    "card": card,
    "iban": iban,
    "email": email,
    "us-ssn": ssn,
}


def fake(kind: str, seed: int) -> Fake:
    """The fake of ``kind`` for ``seed``."""
    maker = VENDOR_KINDS.get(kind) or PII_KINDS.get(kind) or password
    value, core = maker(random.Random(seed))
    return Fake(kind, value, core)


seeds = st.integers(min_value=0, max_value=2**32 - 1)
vendor_fakes = st.builds(fake, st.sampled_from(sorted(VENDOR_KINDS)), seeds)
pii_fakes = st.builds(fake, st.sampled_from(sorted(PII_KINDS)), seeds)
password_fakes = st.builds(fake, st.just("password"), seeds)

# -- prose that carries a value -----------------------------------------------------

PROSE = (
    "Here is the value you asked for: {value} - keep it safe.",
    "I tried {value} but the call still fails with 401, any idea?",
    "Config dump follows.\n{value}\nEnd of dump.",
    "Use {value} when calling the API from the staging box.",
    "The customer wrote: please reach me via {value} tomorrow.",
    "({value})",
)
NAMED_PROSE = (
    "My {name}: {value} (do not share).",
    "export {name}={value}",
    '{name} = "{value}"',
    "set {name} to {value} in the settings page",  # no separator: read by shape, not by name
    "<{name}>{value}</{name}>",
    "Cookie: theme=dark; {name}={value}; lang=en",
)


def leaked(fake_value: Fake, text: str) -> list[str]:
    """The pieces of ``fake_value`` found in ``text``: the value, or any 12 characters of its core, in any spelling."""
    from json import dumps
    from urllib.parse import quote, quote_plus

    found = []
    spellings = {fake_value.value, dumps(fake_value.value)[1:-1], quote_plus(fake_value.value), quote(fake_value.value)}
    found += [s for s in spellings if s and s in text]
    core = fake_value.core
    if fake_value.kind in PII_KINDS and fake_value.kind not in ("email", "us-ssn"):
        digits = "".join(c for c in text if c.isdigit() or c == "\n")
        return found + ([core] if core in digits else [])
    for start in range(0, max(1, len(core) - 11)):
        piece = core[start : start + 12]
        if len(piece) == 12 and any(s in text for s in {piece, quote_plus(piece), dumps(piece)[1:-1]}):
            found.append(piece)
            break
    return found
