"""Input files read whole, refused by their size before anything is read."""

from __future__ import annotations

import os
from pathlib import Path

from jurybox.core import MAX_INPUT_BYTES
from jurybox.inputs._errors import InputError


def size_text(limit: int) -> str:
    """``50 MB`` or ``65,536 bytes``: a limit as the errors say it."""
    return f"{limit / 2**20:g} MB" if limit >= 2**20 else f"{limit:,} bytes"


def read_text(path: str | Path, *, max_bytes: int = MAX_INPUT_BYTES, encoding: str = "utf-8") -> str:
    """A file's text, refused by its size before a byte of it is read.

    Raises:
        InputError: the file is missing or unreadable, over ``max_bytes``, or not text in ``encoding``.
    """
    source = str(path)
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > max_bytes:
                problem = f"refused: the file is {size} bytes; the limit is {max_bytes} ({size_text(max_bytes)})"
                raise InputError(source, None, problem)
            raw = handle.read(max_bytes + 1)
    except OSError as exc:
        raise InputError(source, None, f"cannot read the file: {exc.strerror or exc}") from None
    if len(raw) > max_bytes:  # it grew while being read
        raise InputError(source, None, f"refused: over the {size_text(max_bytes)} input limit")
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise InputError(source, line, f"not {encoding} text (byte {exc.start})") from None
