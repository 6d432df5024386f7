"""The JSON form of everything the store keeps in a JSON column, and the content hash of a case.

One encoder for every writer: a record's rows (``_record_rows``), a run's config, a case
definition, a lesson, a review. ``db_jsonable`` is ``to_jsonable`` for a database column
(NUL replaced: PostgreSQL text cannot hold it); ``json_text`` is the text that column
stores, made by the C encoder without a ``to_jsonable`` copy of plain data.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from typing import Any

from jurybox.core import compact_encoder, to_jsonable


def db_jsonable(value: Any) -> Any:
    """``to_jsonable`` for a database column: NUL characters become U+FFFD (PostgreSQL text cannot hold NUL)."""
    if type(value) is str:
        # Most values a record writes are text (reasonings, prompts, errors): one call each, not two.
        return value.replace("\x00", "\ufffd") if "\x00" in value else value
    return to_jsonable(value, replace_nul=True)


# Values of other types (a read-only mapping, a datetime, a set) are handed to to_jsonable
# one at a time, so the plain data around them is encoded as it is, never copied.
_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"), default=db_jsonable)


_ENCODE = compact_encoder(db_jsonable)  # _ENCODER.encode, its C encoder built once


class RawJson:
    """JSON text already encoded for a JSON column: ``dumps`` passes it through as it is.

    What ``encode_json`` returns, so the runner's writer serializes each value
    once, in one pass, instead of copying it with ``to_jsonable`` and then
    handing the copy to the engine's serializer.
    """

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"RawJson({self.text!r})"


def encode_json(value: Any) -> RawJson:
    """``value`` as JSON column text, equal to what ``dumps(db_jsonable(value))`` gives (see ``json_text``)."""
    return RawJson(json_text(value))


# Most tags, follow-ups and metadata a record holds are empty: their text is known without the encoder.
_EMPTY_TEXT: dict[type, str] = {list: "[]", tuple: "[]", dict: "{}"}


def json_text(value: Any) -> str:
    """``value`` as JSON column text, equal to what ``dumps(db_jsonable(value))`` gives.

    Plain data is encoded directly by the C encoder (``encode_plain``, which also
    says the one difference: bool and None dict keys), which hands values of other
    types to ``to_jsonable``; a value it refuses (NaN) or a string holding NUL sends
    the whole value through ``to_jsonable`` first.
    """
    empty = _EMPTY_TEXT.get(type(value))  # the type first: truth is ambiguous for some values (arrays)
    if empty is not None and not value:
        return empty
    text = encode_plain(_ENCODE, value)
    if "\\u0000" in text:  # a NUL, which PostgreSQL text refuses: let to_jsonable replace it
        return _ENCODE(db_jsonable(value))
    return text


def encode_plain(encode: Callable[[Any], str], value: Any) -> str:
    """``encode(value)``, through ``to_jsonable`` only when the encoder refuses a value.

    Plain data skips the ``to_jsonable`` copy; a datetime, a set or NaN still gets its
    ``to_jsonable`` form (the encoder's ``default`` for the first two). A ``True``,
    ``False`` or ``None`` dict key becomes ``"true"``/``"false"``/``"null"`` (JSON's
    rule), not ``to_jsonable``'s ``"True"``...
    """
    try:
        return encode(value)
    except (TypeError, ValueError):
        return encode(db_jsonable(value))


def dumps(value: Any) -> str:
    """Serialize for a JSON column (the engine's ``json_serializer``); ``RawJson`` is already serialized."""
    if type(value) is RawJson:
        return value.text
    return _ENCODER.encode(value)


def content_hash(definition: Mapping[str, Any]) -> str:
    """A stable SHA-256 of a case definition: equal definitions hash equal whatever their key order."""
    return hashed_definition(definition)[1]


def hashed_definition(definition: Mapping[str, Any]) -> tuple[Any, str]:
    """A case definition as JSON column data, and its ``content_hash``.

    A definition that is plain JSON data already (what the suite loader hands over)
    is hashed from its canonical text without the ``to_jsonable`` copy, which was
    two fifths of planning a run: when that text reads back equal to the definition,
    nothing a copy would change (a set, a ``True`` key, a tuple, NaN, NUL) is in it.
    """
    try:
        canonical = _canonical_text(definition, allow_nan=False)
    except (TypeError, ValueError):  # not JSON as it is: a set, a datetime, mixed key types, NaN
        canonical = None
    if canonical is not None and "\\u0000" not in canonical and json.loads(canonical) == definition:
        return definition, _sha256(canonical)
    data = db_jsonable(definition)
    return data, jsonable_hash(data)


def jsonable_hash(data: Any) -> str:
    """``content_hash`` of data that is ``to_jsonable``'s output already (no second copy)."""
    return _sha256(_canonical_text(data, allow_nan=True))


def _canonical_text(data: Any, *, allow_nan: bool) -> str:
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=allow_nan)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
