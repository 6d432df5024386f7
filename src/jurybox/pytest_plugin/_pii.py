"""Personal data found by proper checks: phone numbers (phonenumbers), card numbers (Luhn), IBANs (mod 97).

Each finder yields ``(kind, start, end)`` spans. A digit string is reported only when
the check holds, so order numbers, prices, years, dates, versions and timestamps are
left alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from jurybox.core import require

if TYPE_CHECKING:
    import phonenumbers

#: Regions whose national formats (without ``+country``) are read as phone numbers, in order.
#: International numbers (``+44 20 7946 0958``, ``+14155550132``) are read for every country.
PHONE_REGIONS = (
    "US", "GB", "IN", "FR", "DE", "ES", "IT", "NL", "BE", "CH", "AT", "IE", "PT", "SE", "NO", "DK", "FI",
    "PL", "AU", "NZ", "ZA", "BR", "MX", "JP", "KR", "SG",
)  # fmt: skip

Span = tuple[str, int, int]

# A stretch that could hold a phone number: 7 to 15 digits with the separators numbers are written with,
# on one line; a dot before a space ends a sentence, not a group.
_PHONE_CANDIDATE = re.compile(
    r"(?<![\w+.\-/])(?:\+[ \t\u00a0]?)?\(?\d(?:[\d \t\u00a0()\-/]|\.(?![ \t])){5,22}\d(?![\w])"
)
# A card: 13 to 19 digits, first 2-6, in groups of four split by one kind of separator (space, dash,
# dot, or none), or Amex/Diners 4-6-5 / 4-6-4.
_CARD = re.compile(
    r"(?<![\w.\-])(?:[2-6]\d{3}(?P<sep>[ .\-]?)\d{4}(?:(?P=sep)\d{4}){1,2}(?:(?P=sep)\d{1,4})?"
    r"|3\d{3}(?P<sep2>[ .\-]?)\d{6}(?P=sep2)\d{4,5})(?![\w]|[.\-]\d)"
)
# An IBAN: country, check digits, then 11 to 30 letters and digits, in groups of four or not.
_IBAN = re.compile(r"(?<![\w])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?(?![\w])")
# Dates, times, years (ranges, or in a row: "2010 1900") and decimals are digit groups too: never phone numbers.
_DATE = re.compile(
    r"(?<![\d.\-/])(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4})(?![.\-/]?\d)|\d{1,2}:\d{2}"
    r"|(?<![\d.\-/])[12]\d{3}\s?[-/]\s?(?:[12]\d{3}|\d{2})(?![.\-/]?\d)"
    r"|(?<![\d.\-/+])[12]\d{3}(?:[.,]?[ \t]+[12]\d{3})+(?![.\-/]?\d)"
    r"|(?<![\d.\-/])\d+\.\d+(?![.\-/]?\d)"
)
# Five equal digits in a row: a round number or a made-up one ("5000000000"), not a phone.
_REPEATS = re.compile(r"(\d)\1{4}")
_DIGIT = re.compile(r"\d")
_SSN = re.compile(r"(?<![\w\-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\w\-])")


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


def iban_valid(text: str) -> bool:
    """True when ``text`` (spaces allowed) is 15 to 34 characters and its ISO 13616 mod-97 check holds."""
    compact = text.replace(" ", "").upper()
    if not 15 <= len(compact) <= 34 or not compact[:2].isalpha() or not compact[2:4].isdigit():
        return False
    rearranged = compact[4:] + compact[:4]
    return int("".join(str(int(char, 36)) for char in rearranged)) % 97 == 1


def _phones(text: str) -> Iterator[Span]:
    for candidate in _PHONE_CANDIDATE.finditer(text):
        # Dates and times are blanked out (same length, so positions hold); what is left may be a number.
        piece = _DATE.sub(lambda date: "x" * len(date.group()), candidate.group())
        digits = sum(char.isdigit() for char in piece)
        if digits < 7 or (piece.isdigit() and (digits < 10 or _REPEATS.search(piece))):
            continue  # an ungrouped run of 7 to 9 digits is a count or an id far more often than a phone
        for match in _phone_matches(piece):
            yield "phone-number", candidate.start() + match.start, candidate.start() + match.end


def _phone_matches(piece: str) -> list[phonenumbers.PhoneNumberMatch]:
    # 40 ms to import; only text with a phone-shaped run of digits needs it.
    phonenumbers: Any = require("phonenumbers", extra="cassettes", feature="finding phone numbers to redact")

    if piece.lstrip("(").startswith("+"):
        # Written with its country code: valid in that country's plan (any country).
        return list(phonenumbers.PhoneNumberMatcher(piece, None, leniency=phonenumbers.Leniency.VALID))
    # A national number must be valid and grouped as that country writes numbers, so a run of
    # digits that merely has the right length in some country is not taken for one. The region
    # whose reading covers most of the candidate wins ("070-123 44 70" is Swedish, not "070-123").
    best: list[phonenumbers.PhoneNumberMatch] = []
    for region in PHONE_REGIONS:
        found = list(phonenumbers.PhoneNumberMatcher(piece, region, leniency=phonenumbers.Leniency.STRICT_GROUPING))
        if sum(len(m.raw_string) for m in found) > sum(len(m.raw_string) for m in best):
            best = found
            if sum(len(m.raw_string) for m in best) >= len(piece.strip("()")):
                break
    return best


def find_pii(text: str) -> Iterator[Span]:
    """Card numbers, IBANs, US social security numbers and phone numbers in ``text``."""
    for match in _CARD.finditer(text):
        if luhn_valid(match.group()):
            yield "card-number", match.start(), match.end()
    for match in _IBAN.finditer(text):
        if iban_valid(match.group()):
            yield "iban", match.start(), match.end()
    for match in _SSN.finditer(text):
        yield "us-ssn", match.start(), match.end()
    if _DIGIT.search(text):
        yield from _phones(text)


#: Every kind ``find_pii`` reports.
PII_KINDS = ("card-number", "iban", "us-ssn", "phone-number")
