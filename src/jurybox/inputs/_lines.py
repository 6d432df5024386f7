"""The line of every value of a parsed document, kept in a few bytes a value.

A dictionary from each value's path to its line costs a tuple and an entry per
value (about 150 bytes), more than the value itself for a list of numbers. Here
each list or mapping keeps one array of its children's lines (4 bytes each)
and, for a mapping, the keys in the order written; only lists and mappings
have a path entry.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence

PathKey = tuple[str | int, ...]

#: A mapping with more keys than this gets an index from key to position on its first lookup.
_SCAN_LIMIT = 16


class Block:
    """One list or mapping: its own line, its children's lines and, for a mapping, its keys as written."""

    __slots__ = ("_index", "keys", "line", "lines")

    def __init__(self, line: int, keys: list[str] | None, lines: array[int]) -> None:
        self.line = line
        self.keys = keys
        self.lines = lines
        self._index: dict[str, int] | None = None

    def child(self, part: str | int) -> int | None:
        """The line of the child ``part`` (an index of a list, a key of a mapping), or None."""
        if self.keys is None:
            if isinstance(part, int) and not isinstance(part, bool) and 0 <= part < len(self.lines):
                return self.lines[part]
            return None
        key = part if isinstance(part, str) else str(part)
        if len(self.keys) <= _SCAN_LIMIT:
            for position in range(len(self.keys) - 1, -1, -1):  # a key written twice: the last one holds
                if self.keys[position] == key:
                    return self.lines[position]
            return None
        if self._index is None:
            self._index = {name: position for position, name in enumerate(self.keys)}
        found = self._index.get(key)
        return None if found is None else self.lines[found]


class Lines:
    """The 1-based line of each value of one document, by path (``("cases", 3, "prompt")``).

    A mapping's value is on its key's line; a list's item on the line where it starts.
    """

    __slots__ = ("_blocks", "_root")

    def __init__(self, root: int | None = None, blocks: dict[PathKey, Block] | None = None) -> None:
        self._root = root
        self._blocks: dict[PathKey, Block] = blocks if blocks is not None else {}

    def exact(self, path: Sequence[str | int]) -> int | None:
        """The line of the value at ``path``, or None when the document has no such value."""
        key = tuple(path)
        if not key:
            return self._root
        parent = self._blocks.get(key[:-1])
        if parent is None:
            return None
        return parent.child(key[-1])

    def nearest(self, path: Sequence[str | int]) -> int | None:
        """The line of the value at ``path``, or of its closest parent that has one."""
        key = path if type(path) is tuple else tuple(path)
        blocks = self._blocks
        while key:
            # exact(), inlined: a suite of 10,000 cases asks for two lines a case.
            parent = blocks.get(key[:-1])
            if parent is not None:
                line = parent.child(key[-1])
                if line is not None:
                    return line
            key = key[:-1]
        return self._root
