"""Find secrets left in cassette files: the logic behind ``jurybox lint-cassettes``.

The lint reads a cassette as data, the way replay does: the YAML is parsed by
jurybox's bounded reader (``jurybox.inputs.read_yaml``: size, depth and alias
limits, the line of every value), and every string is read by the same
``Walker`` redaction uses (JSON bodies and JSON inside strings, streams,
URL-encoded forms, base64 and gzip bodies, URLs, free text), every value judged
by the name it sits under. So vcrpy's folding of a long string across lines
cannot split a secret from its name, and the lint reports exactly what
redaction would have removed. A finding names the line where the value starts.
Every line is read as text too, for what the data leaves out (a comment, an
earlier value of a key written twice): a secret there is on disk all the same.
"""

from __future__ import annotations

import base64
import zlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jurybox.core import MAX_INPUT_BYTES
from jurybox.inputs import CASSETTE_TAGS, InputError, PathKey, YamlDocument, read_yaml
from jurybox.pytest_plugin._secrets import ALL_RULES, RuleSet
from jurybox.pytest_plugin._structure import Hit, Walker

CASSETTE_SUFFIXES = (".yaml", ".yml")
MAX_INFLATED_BYTES = 16 * 1024 * 1024
"""A compressed body is read up to this many bytes (a small gzip bomb must not fill the memory)."""


@dataclass(frozen=True, order=True)
class LintFinding:
    """A secret at a file and line (1-based)."""

    path: Path
    line: int
    pattern: str
    excerpt: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.pattern}: {self.excerpt}"


def cassette_files(paths: Iterable[Path]) -> Iterator[Path]:
    """Every cassette file named or under a named folder, sorted per folder.

    Raises:
        FileNotFoundError: for a path that does not exist.
    """
    for path in paths:
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.suffix in CASSETTE_SUFFIXES and p.is_file())
        elif path.is_file():
            yield path
        else:
            raise FileNotFoundError(f"{path}: no such file or folder")


def _decompress(data: bytes) -> bytes:
    for wbits in (31, 15):  # gzip, then zlib
        inflater = zlib.decompressobj(wbits)
        try:
            return inflater.decompress(data, MAX_INFLATED_BYTES)
        except zlib.error:
            continue
    return data


def _value_hits(value: Any, name: str, siblings: Sequence[str], place: str, rules: RuleSet) -> list[Hit]:
    walker = Walker(rules)
    if isinstance(value, bytes):  # a !!binary body, often gzip: where no line scan can see
        walker.body(_decompress(value).decode("utf-8", errors="replace"))
        return [Hit(f"{hit.kind} (in binary body)", hit.excerpt) for hit in walker.hits]
    if isinstance(value, int | float) and not isinstance(value, bool):
        kind = rules.judge(name, str(value), place if place != "uri" else "field", siblings)
        return [] if kind is None else [Hit(kind, "…")]
    if not isinstance(value, str):
        return []  # null, true/false: no secret
    if place == "header":
        walker.header(name, value)
    elif place == "uri":
        walker.text(value)
    else:
        walker.string(value, name, siblings)
    return walker.hits


def _key_hits(key: str, rules: RuleSet) -> list[Hit]:
    """A secret written as a mapping key (a token used as a name) is still a secret."""
    walker = Walker(rules)
    walker.text(key)
    return walker.hits


def _document_hits(document: YamlDocument, rules: RuleSet) -> Iterator[tuple[int, Hit]]:
    """``(line, hit)`` for every secret in the document, each value judged by the name it sits under."""
    # (path, value, name it sits under, its siblings' names, place); iterative, though depth is bounded anyway.
    stack: list[tuple[PathKey, Any, str, Sequence[str], str]] = [((), document.data, "", (), "field")]
    while stack:
        path, value, name, siblings, place = stack.pop()
        if isinstance(value, dict):
            keys = [str(key) for key in value]
            key_hits = [hit for key in keys for hit in _key_hits(key, rules)]
            if key_hits:
                line = document.lines.nearest(path) or 1
                yield from ((line, hit) for hit in key_hits)
            for key, item in reversed(list(zip(keys, value.values(), strict=True))):
                if place == "headers":
                    stack.append(((*path, key), item, key, keys, "header"))
                elif key == "headers" and isinstance(item, dict):
                    stack.append(((*path, key), item, key, keys, "headers"))
                else:
                    stack.append(((*path, key), item, key, keys, "uri" if key == "uri" else "field"))
        elif isinstance(value, list | tuple):
            for index, item in reversed(list(enumerate(value))):
                stack.append(((*path, index), item, name, siblings, place))
        else:
            hits = _value_hits(value, name, siblings, place, rules)
            if hits:
                line = document.lines.nearest(path) or 1
                yield from ((line, hit) for hit in hits)


def _text_lines(text: str) -> Iterator[tuple[int, str]]:
    """(number, line) of every line, one at a time (a list of a big file's lines would cost ten times it)."""
    start, number = 0, 1
    while start < len(text):
        stop = text.find("\n", start)
        stop = len(text) if stop < 0 else stop
        yield number, text[start:stop].rstrip("\r")
        start, number = stop + 1, number + 1


_ESCAPED = frozenset('\n\t\r\\"')


class _Held:
    """Every key and scalar the parsed document holds, searchable as one text."""

    def __init__(self, data: Any) -> None:
        parts: list[str] = []
        stack = [data]
        while stack:
            value = stack.pop()
            if isinstance(value, dict):
                parts.extend(str(key) for key in value)
                stack.extend(value.values())
            elif isinstance(value, list | tuple):
                stack.extend(value)
            elif isinstance(value, bytes):
                # On disk as base64 (judged decoded, by the walk): a line of it is part of this.
                parts.append(base64.b64encode(value).decode("ascii"))
            elif value is not None:
                parts.append(str(value))
                if isinstance(value, str) and any(c in value for c in _ESCAPED):
                    # As a double-quoted scalar writes it on disk ("\\n" for a line break).
                    parts.append(value.encode("unicode_escape").decode("ascii"))
        self._text = "\0".join(parts)
        self._seen: dict[str, bool] = {}

    def contains(self, fragment: str) -> bool:
        if fragment not in self._seen:
            self._seen[fragment] = fragment in self._text
        return self._seen[fragment]


def lint_file(path: Path, ignore: frozenset[str] = frozenset(), rules: RuleSet = ALL_RULES) -> list[LintFinding]:
    """Every secret in one cassette file, read as data (see the module docstring).

    ``rules`` is the rule set record-time redaction applies (PII included by default), so the
    lint reports every kind redaction knows, and the user's own patterns and fields.

    Raises:
        ValueError: when the file is not valid YAML, or too big, deep or alias-expanding to read
            (the message names file and line).
    """
    if path.stat().st_size > MAX_INPUT_BYTES:
        raise ValueError(f"{path}: over the {MAX_INPUT_BYTES // 2**20} MB input limit")
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        document = read_yaml(text, str(path), tags=CASSETTE_TAGS)
    except InputError as exc:
        where = f"{path}:{exc.line}" if exc.line is not None else str(path)
        raise ValueError(f"{where}: {'not valid YAML: ' if exc.syntax else ''}{exc.problem}") from None
    findings: set[LintFinding] = {
        LintFinding(path, line, hit.kind, hit.excerpt) for line, hit in _document_hits(document, rules)
    }
    # Every line is read as text too, for what the data leaves out (a comment, a key written
    # twice of which YAML keeps the last). A match the data still holds was already judged by
    # the name it sits under (a timestamp under "created" is not a phone number), so it is
    # left to that verdict.
    held = _Held(document.data)
    for number, line in _text_lines(text):
        findings.update(
            LintFinding(path, number, f.pattern, f.excerpt)
            for f in rules.find(line)
            if not held.contains(line[f.start : f.end])
        )
    return sorted(f for f in findings if f.pattern.split(" ")[0] not in ignore)
