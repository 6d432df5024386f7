"""JSON and TOML read within the input limits, checked on the text before the standard library builds anything.

``json.loads`` and ``tomllib.loads`` recurse once per level of nesting, so
10,000 levels end in a RecursionError, and they build every value before a
caller can count them. Here the text is measured first, at C speed where it
can be: its brackets outside strings give its depth, its commas and brackets
an upper bound on its values. Only a text that passes is parsed.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from jurybox.core._limits import MAX_INPUT_DEPTH, MAX_INPUT_NODES

#: tomllib reads about 1 MB a second, and a table costs it a kilobyte: a config file is far smaller.
MAX_TOML_BYTES = 1024 * 1024

# A text of unclosed strings must cost one pass, not one pass per quote: the JSON patterns are tried only
# where a string is known to start and close; the TOML one lets an unclosed string run to the line's end.
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
# Up to 4,096 stretches of text between strings, each with the closed string after it.
_JSON_RUN = re.compile(r'(?:[^"]*"[^"\\]*(?:\\.[^"\\]*)*"){1,4096}', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
# TOML's strings (multi-line first) and comments: where brackets are not structure.
_TOML_SKIPPED = re.compile(
    r'"""(?:[^"\\]|\\.|"(?!""))*(?:"""|\\?\Z)|\'\'\'.*?(?:\'\'\'|\Z)'
    r'|"[^"\\\n]*(?:\\.[^"\\\n]*)*"?|\'[^\'\n]*\'?|#[^\n]*',
    re.DOTALL,
)


class InputLimitError(ValueError):
    """A text over an input limit (size, depth or number of values); the message says which, without a file."""


def json_limit_breach(
    text: str, *, max_depth: int = MAX_INPUT_DEPTH, max_nodes: int | None = MAX_INPUT_NODES
) -> str | None:
    """Which limit a JSON text breaks (nesting deeper than ``max_depth``, more than ``max_nodes`` values), or None.

    Values are counted from above (containers, commas), so a text near the limit may be refused
    though it holds a few fewer; ``max_nodes=None`` counts none (a file jurybox wrote, such as a report,
    may be as big as the run). Text that is not JSON is measured all the same; parsing says why it is not.
    """
    opens = text.count("[") + text.count("{")
    few = max_nodes is None or opens + text.count(",") < max_nodes
    if opens <= max_depth and few:
        return None  # too few brackets to nest that deep, too few separators to hold that much
    if not few:
        assert max_nodes is not None
        opens = values = 0
        for bare in _outside_strings(text):
            opens += bare.count("[") + bare.count("{")
            values += bare.count("[") + bare.count("{") + bare.count(",")
            if values >= max_nodes:
                return f"more than {max_nodes:,} values"
    if opens > max_depth:
        depth = deepest = 0
        for bare in _outside_strings(text):
            depth, deepest = _bracket_depth(bare, max_depth, depth)
            if deepest > max_depth:
                return f"nested deeper than {max_depth} levels"
    return None


def _outside_strings(text: str) -> Iterator[str]:
    """The text in pieces, every JSON string's content taken out (``"..."`` becomes ``""``).

    A piece ends after a closed string, a few thousand strings at most, so no piece costs more
    than a few MB however many strings the text holds (``re.sub`` on the whole text would build
    a list of every string and every gap between two, about 100 bytes each).
    """
    position = 0
    while position < len(text):
        found = _JSON_RUN.match(text, position)
        if found is None:  # no closed string ahead: plain text, then perhaps one unclosed string
            rest = text[position:]
            quote = rest.find('"')
            yield rest if quote < 0 else rest[:quote]
            return
        yield _JSON_STRING.sub('""', found.group())
        position = found.end()


def read_json(
    text: str | bytes,
    *,
    max_depth: int = MAX_INPUT_DEPTH,
    max_nodes: int | None = MAX_INPUT_NODES,
    source: str | None = None,
) -> Any:
    """``json.loads`` for text nobody here wrote: refused first when too deep or too big to build.

    Args:
        text: The JSON text.
        max_depth: Deepest nesting of arrays and objects.
        max_nodes: Most values (None: any number, for files as big as what wrote them).
        source: A file name to start the limit error's message with.

    Raises:
        InputLimitError: a limit is broken.
        json.JSONDecodeError: the text is not JSON.
    """
    if isinstance(text, bytes | bytearray):
        text = text.decode(json.detect_encoding(text), "surrogatepass")  # as json.loads decodes bytes
    breach = json_limit_breach(text, max_depth=max_depth, max_nodes=max_nodes)
    if breach is not None:
        raise InputLimitError(f"{source}: refused: {breach}" if source else f"refused: {breach}")
    return json.loads(text)


def read_toml(text: str, *, max_bytes: int = MAX_TOML_BYTES, max_depth: int = MAX_INPUT_DEPTH) -> dict[str, Any]:
    """``tomllib.loads`` within limits: the size first, brackets before parsing, dotted keys after.

    Raises:
        InputLimitError: a limit is broken.
        tomllib.TOMLDecodeError: the text is not TOML.
    """
    if len(text) > max_bytes:
        raise InputLimitError(f"refused: over the {max_bytes // 1024:,} KB limit for a TOML file")
    deep = text.count("[") + text.count("{") > max_depth
    if deep and _bracket_depth(_TOML_SKIPPED.sub("", text), max_depth)[1] > max_depth:
        raise InputLimitError(f"refused: nested deeper than {max_depth} levels")
    data = tomllib.loads(text)
    # `a.b.c... = 1` and `[a.b.c...]` nest without brackets; the text is small, so measure what was built.
    if _value_depth(data, max_depth) > max_depth:
        raise InputLimitError(f"refused: nested deeper than {max_depth} levels")
    return data


def read_toml_file(path: Path, *, max_bytes: int = MAX_TOML_BYTES, max_depth: int = MAX_INPUT_DEPTH) -> dict[str, Any]:
    """``read_toml`` of a file, refused by its size before it is read.

    Raises:
        InputLimitError: a limit is broken.
        tomllib.TOMLDecodeError: the text is not TOML (or not UTF-8).
        OSError: the file cannot be read.
    """
    with path.open("rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > max_bytes:
            raise InputLimitError(f"refused: the file is {size:,} bytes, over the {max_bytes // 1024:,} KB TOML limit")
        raw = handle.read(max_bytes + 1)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise tomllib.TOMLDecodeError(f"not UTF-8 text (byte {exc.start})") from None
    return read_toml(text, max_bytes=max_bytes, max_depth=max_depth)


def _bracket_depth(text: str, stop: int, depth: int = 0) -> tuple[int, int]:
    """``(depth after text, deepest reached)`` for brackets nesting from ``depth``; stops once past ``stop``."""
    deepest = depth
    for char in _NOT_BRACKET.sub("", text):
        if char in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > stop:
                    break
        elif depth:
            depth -= 1
    return depth, deepest


def _value_depth(value: Any, stop: int) -> int:
    """How deep lists and mappings nest in ``value`` (``stop + 1`` once deeper than ``stop``); iterative."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        depth += 1
        if depth > stop:
            return depth
        deepest = max(deepest, depth)
        stack.extend((child, depth) for child in children)
    return deepest
