"""Does a string look machine-made at random (a key, a token, an id) rather than written by a person?

Vendors keep inventing key formats; what they share is a long run of random
characters. ``looks_random`` reads that without knowing the vendor:

- long enough: 16 to 512 letters and digits (a shorter string has too little to
  judge; a longer one is a payload such as an image or an embedding, not a key);
- made of random pieces, not words: the string is cut at separators and each
  piece into morphemes (``Chat``, ``GPT``, ``2024``); a piece of three morphemes
  or fewer (``gpt``, ``4o``, ``sonnet``, ``PaLM2``), or one mostly made of
  pronounceable words (``MaxPooling2D``, ``findHighestPeak``), reads as words, and
  at least two fifths of the characters must sit in pieces that do not; or, from 20
  characters, the morphemes average 2.8 characters or less and fewer than half
  of the characters are in words (base64url, whose ``-`` and ``_`` cut it into
  short pieces);
- not repetitive: the Shannon entropy of its characters is at least 60% of the
  most its length and alphabet allow;
- host names (two dots or more, ending in a lower-case top-level domain) never count;
- hexadecimal strings (one case) count from 32 digits (UUIDs, 128-bit keys and
  hashes), since shorter ones are mostly short hashes and ray ids; such a run after
  a prefix (``HRKU-<uuid>``, ``shpat_<hex>``) counts too.

A random 20-character string of mixed-case letters and digits passes 99.4% of
the time, of lower-case letters and digits 98%, of base64url 97%; from 32
characters every alphabet passes above 99.8% (benchmarks/secret_detection.py
measures it per alphabet and length). Strings of one letter case and no digits
never pass: such a key is caught only by its name or a vendor format.
"""

from __future__ import annotations

import math
import re
from collections import Counter

MIN_CHARACTERS = 16
MAX_CHARACTERS = 512
#: Hexadecimal strings count from this many digits (a UUID, a 128-bit key).
MIN_HEX_CHARACTERS = 32
_VOWELS = frozenset("aeiouy")
_CONSONANT_RUN = re.compile(r"[^aeiouy]{5}")

#: A candidate token in free text: 16+ letters, digits and the separators keys are written with.
TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9+/_\-.~]{14,}[A-Za-z0-9](?:={1,2}(?![\w%]))?")
_PIECE_SEPARATORS = re.compile(r"[-_.~:/+=]+")
_MORPHEME = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
# A host name ("e82b8f89...b70.cloudfront.net"): an address, however random its labels.
_HOST_NAME = re.compile(r"(?:[a-z0-9\-]+\.){2,}[a-z]{2,6}")
_HEX_RUN = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32,}|[0-9A-F]{32,}")
_HEX_LOWER = re.compile(r"[0-9a-f]+")
_HEX_UPPER = re.compile(r"[0-9A-F]+")


def _entropy(characters: str) -> float:
    counts = Counter(characters)
    size = len(characters)
    return -sum(count / size * math.log2(count / size) for count in counts.values())


def _alphabet_size(characters: str) -> int:
    size = 0
    size += 10 if any(c.isdigit() for c in characters) else 0
    size += 26 if any(c.islower() for c in characters) else 0
    size += 26 if any(c.isupper() for c in characters) else 0
    return size


def _is_hex_key(characters: str) -> bool:
    if not (_HEX_LOWER.fullmatch(characters) or _HEX_UPPER.fullmatch(characters)):
        return False
    has_both = any(c.isdigit() for c in characters) and any(c.isalpha() for c in characters)
    return len(characters) >= MIN_HEX_CHARACTERS and has_both and _entropy(characters) >= 2.5


def is_hex(characters: str) -> bool:
    """True for letters and digits that are all hexadecimal in one case."""
    return bool(_HEX_LOWER.fullmatch(characters) or _HEX_UPPER.fullmatch(characters))


def _is_word(morpheme: str) -> bool:
    """A pronounceable run of letters: a vowel (y counts), never five consonants in a row."""
    lowered = morpheme.lower()
    return any(c in _VOWELS for c in lowered) and _CONSONANT_RUN.search(lowered) is None


def _reads_as_name(morphemes: list[str]) -> bool:
    """True when every morpheme is what a programmer writes: words, acronyms, numbers (``MaxPooling2D``)."""
    if not any(len(m) >= 3 and m[1:].islower() for m in morphemes) or not any(m[0].isupper() for m in morphemes):
        # Acronyms and numbers only ("K7XQ2M9PL4"), or lower case cut by digits four times and more
        # ("k3jx9ab2mq7"): a code, not a camelCase name.
        return False
    acronyms = abbreviations = 0
    for index, morpheme in enumerate(morphemes):
        last_after_digits = index == len(morphemes) - 1 and index > 0 and morphemes[index - 1].isdigit()
        if morpheme.isdigit() or (len(morpheme) == 1 and morpheme.isupper() and last_after_digits):
            continue
        if morpheme.isupper() and len(morpheme) > 1:
            acronyms += 1  # HTTP, JSON, XML: two at most in one name (getHTMLElementByID)
            if len(morpheme) > 5 or acronyms > 2:
                return False
        elif index > 0 and (len(morpheme) == 1 or (len(morpheme) == 2 and not morpheme[0].isupper())):
            return False  # a stray letter; two letters only as By, Id, Of, or first (isValid, xAcme)
        elif not _is_word(morpheme):
            abbreviations += 1  # Http, Str, Msg: one per name
            if abbreviations > 1 or len(morpheme) > 4:
                return False
    return True


def _random_piece(morphemes: list[str]) -> bool:
    # More than three morphemes that are not a programmer's name: "j60LWi6MpN", not "findHighestPeak".
    return len(morphemes) > 3 and not _reads_as_name(morphemes)


def looks_random(token: str) -> bool:
    """True when ``token`` (one run without spaces) reads as random characters (see the module docstring)."""
    characters = "".join(c for c in token if c.isascii() and c.isalnum())
    if not MIN_CHARACTERS <= len(characters) <= MAX_CHARACTERS or _HOST_NAME.fullmatch(token):
        return False
    if is_hex(characters):
        return _is_hex_key(characters)
    # A UUID or a 32+ digit hex run after a vendor prefix ("HRKU-<uuid>", "shpat_<hex>") is a key too.
    for run in _HEX_RUN.finditer(token):
        if _is_hex_key(run.group().replace("-", "")):
            return True
    ceiling = math.log2(min(len(characters), _alphabet_size(characters)))
    entropy = _entropy(characters)
    pieces = [_MORPHEME.findall(piece) for piece in _PIECE_SEPARATORS.split(token)]
    in_random_pieces = sum(sum(map(len, morphemes)) for morphemes in pieces if _random_piece(morphemes))
    if in_random_pieces * 5 >= len(characters) * 2 and entropy >= 0.6 * ceiling:
        return True
    # Separators every few characters (base64url) cut a random string into short pieces that each
    # read as a word; the string as a whole still changes letter case or class every two characters.
    morphemes = [m for piece in pieces for m in piece]
    in_words = sum(len(m) for m in morphemes if len(m) >= 3 and m.isalpha() and _is_word(m))
    short = len(characters) <= 2.8 * len(morphemes) and in_words * 2 < len(characters)
    return len(characters) >= 20 and short and entropy >= 0.7 * ceiling


def looks_like_credential(value: str) -> bool:
    """True for a value that could be a password or key: no spaces, 8+ characters, letters with digits or random.

    Used where a name only may hold a credential (a bare ``key``): ``color`` or ``en-US`` is kept,
    ``k-83hf83hf`` and ``hunter2!x`` are not.
    """
    value = value.strip()
    if len(value) < 8 or any(c.isspace() for c in value):
        return False
    has_letter = any(c.isalpha() for c in value)
    has_digit = any(c.isdigit() for c in value)
    return (has_letter and has_digit) or looks_random(value)
