"""``to_jsonable``: any value as plain JSON data, for reports and for the store's JSON columns."""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Mapping
from datetime import date, datetime
from pathlib import PurePath
from typing import Any

NUL_REPLACEMENT = "\ufffd"
"""What a NUL character becomes with ``replace_nul`` (PostgreSQL text cannot hold NUL)."""


def to_jsonable(value: Any, *, replace_nul: bool = False) -> Any:
    """A copy of ``value`` made of JSON types only, that any JSON encoder and JSON column accepts.

    Mappings become dicts with string keys, sequences and sets lists (sets sorted
    by repr, so the output is stable), datetimes ISO strings, paths strings, enums
    their value and dataclasses dicts (their ``to_dict()`` when they have one).
    Non-finite floats become the strings ``"nan"``/``"inf"``/``"-inf"``: JSON has
    no such numbers and PostgreSQL rejects them. Anything else is kept as its
    ``repr``, so a record is never refused for an exotic metadata value.

    Args:
        value: Anything.
        replace_nul: Replace NUL characters in strings with U+FFFD, for a database text
            column (a JSON report keeps them: ``\\u0000`` is valid JSON).
    """
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, str):
        return value.replace("\x00", NUL_REPLACEMENT) if replace_nul and "\x00" in value else value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value, replace_nul=replace_nul)
    if isinstance(value, Mapping):
        return {str(key): to_jsonable(item, replace_nul=replace_nul) for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value, key=repr) if isinstance(value, set | frozenset) else value
        return [to_jsonable(item, replace_nul=replace_nul) for item in items]
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, PurePath):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        to_dict = getattr(value, "to_dict", None)
        data = to_dict() if callable(to_dict) else {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        return to_jsonable(data, replace_nul=replace_nul)
    return repr(value)
