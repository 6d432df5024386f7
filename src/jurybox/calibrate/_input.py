"""Reading input files with limits: size, YAML aliases and depth, one record per line number.

A labelled set comes from people and tools outside the test suite, so it is
parsed defensively: a file over the size limit is refused before it is read,
YAML anchors and aliases are refused (an alias bomb expands a small file into
gigabytes, and a labelled set has no use for them), and nesting is bounded.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jurybox import inputs
from jurybox.calibrate._errors import CalibrationInputError, Problem
from jurybox.core import InputLimitError, read_json

MAX_BYTES = 64 * 1024 * 1024
"""Largest input file read (64 MiB): 10,000 rows of long answers fit with room to spare."""
MAX_DEPTH = 32
"""Deepest nesting of lists and mappings accepted in YAML and JSON records."""
MAX_ROWS = 100_000
"""Most rows of a labelled set (a set labelled by people is rarely over 10,000)."""
MAX_REPLIES = 400_000
"""Most lines of a recorded-replies file (four replies a row for every row of a full set)."""


@dataclass(frozen=True)
class Record:
    """One input record: its values, the line it starts on and the line of each field."""

    line: int
    data: Any
    field_lines: dict[str, int]


def read_text(path: Path, max_bytes: int = MAX_BYTES) -> str:
    """The file's text, refused when it is larger than ``max_bytes`` (before it is read) or not UTF-8."""
    try:
        return inputs.read_text(path, max_bytes=max_bytes, encoding="utf-8-sig")
    except inputs.InputError as exc:
        raise CalibrationInputError.one(exc.source, exc.line, "", exc.problem) from None


def jsonl_records(text: str, source: str) -> Iterator[Record | Problem]:
    """One record per non-blank line; a line that is not a JSON object is a Problem."""
    for number, line in enumerate(_lines(text, keepends=False), start=1):
        if not line.strip():
            continue
        try:
            data = read_json(line, max_depth=MAX_DEPTH)
        except InputLimitError as exc:
            yield Problem(source, number, "", str(exc))
            continue
        except ValueError as exc:
            yield Problem(source, number, "", f"not valid JSON: {exc}")
            continue
        if not isinstance(data, dict):
            yield Problem(source, number, "", f"each line must be a JSON object, got {type(data).__name__}")
        else:
            yield Record(number, data, {})


def _lines(text: str, *, keepends: bool) -> Iterator[str]:
    """The text's lines one at a time (``splitlines`` would hold a second copy of a big file, line by line)."""
    start, end = 0, len(text)
    while start < end:
        stop = text.find("\n", start)
        if stop < 0:
            stop = end - 1
        line = text[start : stop + 1]
        yield line if keepends else line.rstrip("\r\n")
        start = stop + 1


def refuse_long_jsonl(text: str, source: str, limit: int, noun: str) -> None:
    """Refuse a JSON Lines text of more than ``limit`` records before any is parsed (one per non-blank line).

    Raises:
        CalibrationInputError: naming the line of the first record over the limit.
    """
    if text.count("\n") < limit:
        return
    count = 0
    for number, line in enumerate(_lines(text, keepends=False), start=1):
        if line.strip():
            count += 1
            if count > limit:
                problem = f"refused: more than {limit:,} {noun} (the limit for one file)"
                raise CalibrationInputError.one(source, number, "", problem)


def limited(records: Iterable[Record | Problem], source: str, limit: int, noun: str) -> Iterator[Record | Problem]:
    """``records`` up to ``limit`` of them, then one problem that says the file holds more, and no more."""
    count = 0
    for item in records:
        if isinstance(item, Record):
            count += 1
            if count > limit:
                yield Problem(source, item.line, "", f"refused: more than {limit:,} {noun} (the limit for one file)")
                return
        yield item


def csv_records(text: str, source: str) -> Iterator[Record | Problem]:
    """One record per CSV row after the header; values stay strings (the caller types them)."""
    reader = csv.reader(_lines(text, keepends=True))
    try:
        header = next(reader)
    except StopIteration:
        return
    except csv.Error as exc:
        yield Problem(source, 1, "", f"not valid CSV: {exc}")
        return
    names = [name.strip() for name in header]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        yield Problem(source, 1, ", ".join(duplicates), "duplicate column name")
        return
    line = reader.line_num + 1
    try:
        for row in reader:
            start, line = line, reader.line_num + 1
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != len(names):
                yield Problem(source, start, "", f"{len(row)} cells, but the header names {len(names)} columns")
                continue
            yield Record(start, {name: cell for name, cell in zip(names, row, strict=True) if cell != ""}, {})
    except csv.Error as exc:
        yield Problem(source, line, "", f"not valid CSV: {exc}")


def yaml_document(text: str, source: str) -> tuple[Any, inputs.Lines]:
    """The YAML document and the 1-based line of every value in it, by path.

    Raises:
        CalibrationInputError: a syntax error, an alias or anchor, a duplicate key, or too deep a document.
    """
    try:
        document = inputs.read_yaml(text, source, duplicate_keys=False, anchors=False, max_depth=MAX_DEPTH + 1)
    except inputs.InputError as exc:
        problem = f"not valid YAML: {exc.problem}" if exc.syntax else exc.problem
        raise CalibrationInputError.one(source, exc.line, ".".join(map(str, exc.path)), problem) from None
    return document.data, document.lines


def yaml_records(
    items: Any, lines: inputs.Lines, prefix: tuple[str | int, ...], source: str
) -> Iterator[Record | Problem]:
    """The records of a YAML list found at ``prefix``, each with its own line and its fields' lines."""
    if not isinstance(items, list):
        yield Problem(source, lines.nearest(prefix), ".".join(map(str, prefix)), "expected a list of rows")
        return
    for index, item in enumerate(items):
        path = (*prefix, index)
        line = lines.nearest(path) or 1
        if not isinstance(item, dict):
            yield Problem(source, line, "", f"each row must be a mapping, got {type(item).__name__}")
            continue
        fields = {str(key): lines.exact((*path, str(key))) or line for key in item}
        yield Record(line, {str(key): value for key, value in item.items()}, fields)
