"""JSON parsing through ``orjson`` when it is installed (the ``otel`` extra brings it), else the standard library.

Only the parse itself: orjson refuses a few texts the standard library takes (``NaN``,
``1e400``, lone surrogates, UTF-16 bytes), so a text it refuses is parsed again by
``json.loads``, and the answer, or the error and its wording, stay the standard library's.
orjson also reads an integer past 64 bits (at or past 2**64, or below -2**63) as a float where
the standard library keeps it exact: a short text with a number of 19 digits or more goes to
the standard library too, and a long one (an export line) parsed by ``loads_fast`` is checked
by its caller for a float whose size is 2**63 or more (``HUGE``), which it parses again with
``json.loads``.
Every caller still checks the depth and value limits on what was built.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any


def _stdlib(text: str | bytes) -> Any:
    return json.loads(text)


# Strings' digits included: that only costs the faster parse. ``[0-9]``, not ``\d``: a JSON number is
# ASCII digits only, and the regular expression engine scans for a set of characters much faster.
_LONG_NUMBER = re.compile(r"[0-9]{19}")
_LONG_NUMBER_BYTES = re.compile(rb"[0-9]{19}")
HUGE = 2.0**63
"""From this size on (either sign) orjson may have read an integer literal as a float: -2**63 - 1 is one.
A float this big parsed by ``loads_fast`` is suspect."""


def _with_orjson(parse: Callable[[str | bytes], Any]) -> Callable[[str | bytes], Any]:
    def loads(text: str | bytes) -> Any:
        if (_LONG_NUMBER_BYTES if isinstance(text, bytes) else _LONG_NUMBER).search(text):  # type: ignore[arg-type]
            return json.loads(text)
        try:
            return parse(text)
        except ValueError:  # orjson.JSONDecodeError: the standard library decides, with its own error
            return json.loads(text)

    return loads


try:
    import orjson
except ImportError:  # pragma: no cover - the otel extra installs it
    loads: Callable[[str | bytes], Any] = _stdlib
    loads_fast: Callable[[str | bytes], Any] = _stdlib
else:
    loads = _with_orjson(orjson.loads)
    loads_fast = orjson.loads
    """orjson alone: raises on what it refuses; its caller checks for ``HUGE`` floats."""

ACCELERATED = loads is not _stdlib
"""True when orjson parses (for the benchmark's figures)."""
