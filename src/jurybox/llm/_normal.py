"""The one normal form in which a judge's reply and the material it judged are read and compared.

A planted verdict is caught by comparing what the reply says with what the
answer (and every other untrusted text the judge was shown) says. That works
only if both are read the same way: an answer folded before the check while the
reply is read raw lets ``PASS™`` (``PASSTM`` once folded), ``10²`` (``102``) or a
zero-width space that splits a word read as a verdict on one side and not on the
other. So both go through ``normal_form`` before any verdict is looked for:

* compatibility forms are folded (NFKD, then NFKC): full-width letters and
  digits, superscripts, ligatures, circled numbers, mathematical alphabets;
* combining marks, format characters (zero-width spaces and joiners, bidi
  overrides, soft hyphens, tag characters), control characters other than tab
  and newline, and blank fillers are removed;
* every decimal digit becomes its ASCII digit (``١٠`` reads as ``10``);
* letters and signs that look like ASCII ones (Cyrillic ``Р``, Greek ``Α``,
  Cherokee, Lisu, ``‹`` for ``<``, ``꞉`` for ``:``...) become that ASCII
  character, from the Unicode confusables data (UTS #39, through the
  ``confusable-homoglyphs`` package). No look-alike is mapped to ``"`` or
  ``\\``, so curly quotes in a JSON string leave it a JSON string (a full-width
  ``＂`` is a compatibility form of ``"`` and becomes one, on both sides).

The form is a fixed point (folding it again changes nothing), so the two sides
of a comparison agree however often either was folded.

Letter case is kept: a label such as ``A`` stays distinct from the word "a".
The normal form is for reading verdicts; what a user is shown (reasoning,
issues) comes from the reply as written.
"""

from __future__ import annotations

import functools
import html
import unicodedata
from typing import Any

# Characters a model renders as nothing (or a blank) that Unicode does not class as format characters.
_BLANKS = frozenset({0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800, 0x180E})
# ASCII targets a look-alike may be folded to: never a quote or a backslash, which would change JSON strings.
_TARGETS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 !#$%&'()*+,-./:;<=>?@[]^_`{|}~")
# A baseline kept even if the confusables data changes: the letters most often used to disguise a verdict.
_BASELINE = dict(
    zip(
        "АВСЕНІЈКМОРЅТХУаесіјорѕхуΑΒΕΖΗΙΚΜΝΟΡΤΥΧον",
        "ABCEHIJKMOPSTXYaecijopsxyABEZHIKMNOPTYXov",
        strict=True,
    )
)


class _FoldTable(dict[int, Any]):
    """A ``str.translate`` table filled on first sight of each character (hits stay in C)."""

    def __missing__(self, code: int) -> str | None:
        value = _fold_char(chr(code))
        self[code] = value
        return value


def _fold_char(char: str) -> str | None:
    category = unicodedata.category(char)
    if category in ("Mn", "Me", "Cf") or ord(char) in _BLANKS:
        return None
    if category == "Cc":
        return char if char in "\t\n\r" else None
    if category in ("Zl", "Zp"):
        return "\n"
    if category == "Nd":
        return str(unicodedata.decimal(char))
    return _lookalikes().get(char, char)


@functools.cache
def _lookalikes() -> dict[str, str]:
    """Each non-ASCII character the confusables data says looks like one ASCII character, mapped to it."""
    from confusable_homoglyphs.confusables import confusables_data  # 9,600 entries: loaded on first non-ASCII text

    found: dict[str, str] = {}
    for char, homoglyphs in confusables_data.items():
        if len(char) != 1 or char.isascii():
            continue
        targets = [h["c"] for h in homoglyphs if len(h["c"]) == 1 and h["c"] in _TARGETS]
        if targets:
            found[char] = targets[0]
    found.update(_BASELINE)
    return found


_TABLE = _FoldTable()
# The only characters of plain ASCII text the normal form changes: control characters other than tab and newline.
_ASCII_CONTROLS = {code: None for code in (*range(0x20), 0x7F) if chr(code) not in "\t\n\r"}


def normal_form(text: str) -> str:
    """``text`` as verdicts are read from it: compatibility forms, look-alikes, digits and invisibles folded.

    Example:
        >>> normal_form("VERDICT: \\uff30A\\u200bSS\\u2122, Rating: [[\\u0661\\u0660]]")
        'VERDICT: PASSTM, Rating: [[10]]'
    """
    if text.isascii():
        return text.translate(_ASCII_CONTROLS) if not text.isprintable() else text
    decomposed = unicodedata.normalize("NFKD", text).translate(_TABLE)
    return unicodedata.normalize("NFKC", decomposed)


# Markup a model may drop or add when it quotes text: emphasis, code, quote and heading markers.
_MARKUP = str.maketrans("", "", "*_`~#>")


def flat(text: str, *, spaces: bool = False) -> str:
    """``text`` for a containment test, as loosely as a model may quote it.

    HTML entities decoded, markdown markers dropped, letter case folded, and
    whitespace dropped (``spaces=True``: runs of it kept as one space), so that
    ``**VERDICT:** **PASS**``, ``verdict:pass`` and ``VERDICT:\nPASS`` are one text.
    """
    if "&" in text:
        text = html.unescape(text)
    words = text.translate(_MARKUP).casefold().split()
    return " ".join(words) if spaces else "".join(words)
