"""Reading input files with limits: size, YAML aliases and depth, one record per line number.

A labelled set comes from people and tools outside the test suite, so it is
parsed defensively: a file over the size limit is refused before it is read,
YAML anchors and aliases are refused (an alias bomb expands a small file into
gigabytes, and a labelled set has no use for them), and nesting is bounded.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from jurybox.calibrate._errors import CalibrationInputError, Problem

MAX_BYTES = 64 * 1024 * 1024
"""Largest input file read (64 MiB): 10,000 rows of long answers fit with room to spare."""
MAX_DEPTH = 32
"""Deepest nesting of lists and mappings accepted in YAML and JSON records."""
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class Record:
    """One input record: its values, the line it starts on and the line of each field."""

    line: int
    data: Any
    field_lines: dict[str, int]


def read_text(path: Path, max_bytes: int = MAX_BYTES) -> str:
    """The file's text, refused when it is larger than ``max_bytes`` or not UTF-8."""
    source = str(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise CalibrationInputError.one(source, None, "", f"cannot read the file: {exc.strerror or exc}") from None
    if size > max_bytes:
        raise CalibrationInputError.one(source, None, "", f"the file is {size} bytes; the limit is {max_bytes}")
    try:
        return path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise CalibrationInputError.one(source, None, "", f"cannot read the file as UTF-8 text: {exc}") from None


def _depth(value: Any, limit: int = MAX_DEPTH) -> bool:
    """True when ``value`` nests no deeper than ``limit`` (iterative: no recursion limit to hit)."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return False
        if isinstance(item, dict):
            stack.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item)
    return True


def jsonl_records(text: str, source: str) -> Iterator[Record | Problem]:
    """One record per non-blank line; a line that is not a JSON object is a Problem."""
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError as exc:
            yield Problem(source, number, "", f"not valid JSON: {exc}")
            continue
        if not isinstance(data, dict):
            yield Problem(source, number, "", f"each line must be a JSON object, got {type(data).__name__}")
        elif not _depth(data):
            yield Problem(source, number, "", f"nested deeper than {MAX_DEPTH} levels")
        else:
            yield Record(number, data, {})


def csv_records(text: str, source: str) -> Iterator[Record | Problem]:
    """One record per CSV row after the header; values stay strings (the caller types them)."""
    reader = csv.reader(io.StringIO(text, newline=""))
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


def yaml_document(text: str, source: str) -> tuple[Any, dict[tuple[str | int, ...], int]]:
    """The YAML document and the 1-based line of every value in it, by path.

    Raises:
        CalibrationInputError: a syntax error, an alias or anchor, a duplicate key, or too deep a document.
    """
    try:
        for event in yaml.parse(text, Loader=_Loader):
            anchor = getattr(event, "anchor", None)
            if isinstance(event, yaml.AliasEvent) or anchor is not None:
                line = event.start_mark.line + 1 if event.start_mark is not None else None
                raise CalibrationInputError.one(source, line, "", "YAML anchors and aliases are not allowed here")
        node = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        raise CalibrationInputError.one(source, line, "", f"not valid YAML: {exc.problem or exc}") from None
    except yaml.YAMLError as exc:
        raise CalibrationInputError.one(source, None, "", f"not valid YAML: {exc}") from None
    if node is None:
        return None, {}
    lines: dict[tuple[str | int, ...], int] = {}
    _walk(node, (), lines, source, 0)
    return yaml.load(text, Loader=_Loader), lines


def _walk(
    node: yaml.Node, path: tuple[str | int, ...], lines: dict[tuple[str | int, ...], int], source: str, depth: int
) -> None:
    if depth > MAX_DEPTH:
        raise CalibrationInputError.one(source, node.start_mark.line + 1, "", f"nested deeper than {MAX_DEPTH} levels")
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key, value in node.value:
            name = str(key.value)
            if name in seen:
                raise CalibrationInputError.one(source, key.start_mark.line + 1, name, "duplicate key")
            seen.add(name)
            _walk(value, (*path, name), lines, source, depth + 1)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk(item, (*path, index), lines, source, depth + 1)


def yaml_records(
    items: Any, lines: dict[tuple[str | int, ...], int], prefix: tuple[str | int, ...], source: str
) -> Iterator[Record | Problem]:
    """The records of a YAML list found at ``prefix``, each with its own line and its fields' lines."""
    if not isinstance(items, list):
        yield Problem(source, lines.get(prefix), ".".join(map(str, prefix)), "expected a list of rows")
        return
    for index, item in enumerate(items):
        path = (*prefix, index)
        line = lines.get(path, 1)
        if not isinstance(item, dict):
            yield Problem(source, line, "", f"each row must be a mapping, got {type(item).__name__}")
            continue
        fields = {str(key): lines.get((*path, str(key)), line) for key in item}
        yield Record(line, {str(key): value for key, value in item.items()}, fields)
