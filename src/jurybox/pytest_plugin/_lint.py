"""Find secrets left in cassette files: the logic behind ``jurybox lint-cassettes``."""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote_plus

from jurybox.core import MAX_INPUT_BYTES
from jurybox.inputs import CASSETTE_TAGS, InputError, PathKey, YamlDocument, read_yaml
from jurybox.pytest_plugin._secrets import ALL_RULES, RuleSet, is_placeholder, mask

CASSETTE_SUFFIXES = (".yaml", ".yml")


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


#: A compressed body is read up to this many bytes (a small gzip bomb must not fill the memory).
MAX_INFLATED_BYTES = 16 * 1024 * 1024


def _decompress(data: bytes) -> bytes:
    for wbits in (31, 15):  # gzip, then zlib
        inflater = zlib.decompressobj(wbits)
        try:
            return inflater.decompress(data, MAX_INFLATED_BYTES)
        except zlib.error:
            continue
    return data


def _binary_text(raw: bytes) -> str:
    """The text inside a ``!!binary`` body (often gzip), where a line scan cannot see."""
    return _decompress(raw).decode("utf-8", errors="replace")


def _walk(root: Any) -> Iterator[tuple[PathKey, str, Any]]:
    """``(path, key it sits under, value)`` for every value of the document (iterative: depth is bounded anyway)."""
    stack: list[tuple[PathKey, str, Any]] = [((), "", root)]
    while stack:
        path, key, value = stack.pop()
        yield path, key, value
        if isinstance(value, dict):
            stack.extend(((*path, str(name)), str(name), item) for name, item in reversed(value.items()))
        elif isinstance(value, list | tuple):
            stack.extend(((*path, index), key, item) for index, item in reversed(list(enumerate(value))))


def _lines(text: str) -> Iterator[str]:
    """The text's lines one at a time (a list of a big file's lines would cost ten times the file)."""
    start = 0
    while start < len(text):
        stop = text.find("\n", start)
        stop = len(text) if stop < 0 else stop
        yield text[start:stop].rstrip("\r")
        start = stop + 1


def _header_findings(path: Path, document: YamlDocument, rules: RuleSet) -> Iterator[LintFinding]:
    for at, key, headers in _walk(document.data):
        if key != "headers" or not isinstance(headers, dict):
            continue
        for raw_name, raw_values in headers.items():
            name = str(raw_name).lower()
            if not rules.header_is_secret(name):
                continue
            listed = isinstance(raw_values, list)
            for index, value in enumerate(raw_values if listed else [raw_values]):
                text = "" if value is None else str(value)
                if not is_placeholder(text):
                    where = (*at, str(raw_name), index) if listed else (*at, str(raw_name))
                    yield LintFinding(path, document.lines.nearest(where) or 1, f"header {name}", mask(text))


def lint_file(path: Path, ignore: frozenset[str] = frozenset(), rules: RuleSet = ALL_RULES) -> list[LintFinding]:
    """Every secret in one cassette file: key-shaped strings, unredacted credential headers, compressed bodies.

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
    findings: set[LintFinding] = set()
    for number, line in enumerate(_lines(text), start=1):
        # A form body or a query keeps its secrets URL-encoded ("%40", "+"): read it decoded as well.
        unquoted = unquote_plus(line) if "%" in line or "+" in line else line
        for variant in {line, unquoted}:
            for secret in rules.find(variant):
                findings.add(LintFinding(path, number, secret.pattern, secret.excerpt))
    findings.update(_header_findings(path, document, rules))
    for at, _, value in _walk(document.data):
        if isinstance(value, bytes):  # a !!binary body
            at_line = document.lines.nearest(at) or 1
            for secret in rules.find(_binary_text(value)):
                findings.add(LintFinding(path, at_line, f"{secret.pattern} (in binary body)", secret.excerpt))
    return sorted(f for f in findings if f.pattern.split(" ")[0] not in ignore)
