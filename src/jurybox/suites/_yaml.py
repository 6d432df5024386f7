"""YAML that remembers where every value came from, so errors can name the line."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jurybox.core import MAX_INPUT_BYTES, MAX_INPUT_NODES
from jurybox.inputs import InputError, Lines, read_yaml
from jurybox.suites._errors import SuiteError

PathKey = tuple[str | int, ...]


@dataclass(frozen=True)
class Located:
    """A parsed YAML document and the 1-based line of every value in it, by path.

    ``lines`` is the document's line index, or a mapping of path to line (a case read from a
    line of a cases file has every field on that line: ``{(): line}``).
    """

    data: Any
    lines: Lines | Mapping[PathKey, int]
    file: str
    line_offset: int = 0
    prefix: PathKey = field(default=())

    def line_of(self, path: Sequence[str | int]) -> int | None:
        """The line of the value at ``path``, or of its closest parent that has one."""
        key = (*self.prefix, *path) if self.prefix else tuple(path)
        if isinstance(self.lines, Lines):
            line = self.lines.nearest(key)
            return None if line is None else line + self.line_offset
        while True:
            if key in self.lines:
                return self.lines[key] + self.line_offset
            if not key:
                return None
            key = key[:-1]

    def sub(self, path: Sequence[str | int]) -> Located:
        """The value at ``path`` as its own document, keeping line numbers."""
        value = self.data
        for part in path:
            value = value[part]
        return Located(value, self.lines, self.file, self.line_offset, (*self.prefix, *path))


def format_path(path: Sequence[str | int]) -> str:
    """``("cases", 3, "judges", 0)`` as ``cases[3].judges[0]``."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


def load_yaml(text: str, file: str | Path, *, line_offset: int = 0) -> Located:
    """Parse one YAML document, recording the line of each value.

    Duplicate keys are an error (PyYAML would silently keep the last one, so a
    copy-pasted case would vanish). The text is refused before anything is built
    when it is too big, holds too many values, is nested too deep, or its aliases
    would expand it too far (a "billion laughs"); see ``jurybox.inputs.read_yaml``.

    Raises:
        SuiteError: on a syntax error, a duplicate key or a broken limit, naming file and line.
    """
    name = str(file)
    try:
        document = read_yaml(text, name, duplicate_keys=False, max_bytes=MAX_INPUT_BYTES, max_nodes=MAX_INPUT_NODES)
    except InputError as exc:
        line = exc.line + line_offset if exc.line is not None else None
        problem = f"invalid YAML: {exc.problem}" if exc.syntax else exc.problem
        raise SuiteError.at(name, line, format_path(exc.path), problem) from None
    return Located(document.data, document.lines, name, line_offset)
