"""Find secrets left in cassette files: the logic behind ``jurybox lint-cassettes``."""

from __future__ import annotations

import base64
import binascii
import gzip
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote_plus

import yaml

from jurybox.core import MAX_INPUT_BYTES
from jurybox.pytest_plugin._cassette_yaml import check_yaml_limits
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


def _decompress(data: bytes) -> bytes:
    for opener in (gzip.decompress, zlib.decompress):
        try:
            return opener(data)
        except (OSError, zlib.error, EOFError):
            continue
    return data


def _binary_text(node: yaml.ScalarNode) -> str | None:
    """The text inside a ``!!binary`` body (base64, often gzip), where a line scan cannot see."""
    try:
        raw = base64.b64decode("".join(node.value.split()), validate=True)
    except (binascii.Error, ValueError):
        return None
    return _decompress(raw).decode("utf-8", errors="replace")


def _walk(node: yaml.Node, parent_key: str = "") -> Iterator[tuple[str, yaml.Node]]:
    """Yield ``(key it sits under, node)`` for every node of the document."""
    yield parent_key, node
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            name = key.value if isinstance(key, yaml.ScalarNode) else ""
            yield from _walk(value, str(name))
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            yield from _walk(item, parent_key)


def _header_findings(path: Path, root: yaml.Node, rules: RuleSet) -> Iterator[LintFinding]:
    for key, node in _walk(root):
        if key != "headers" or not isinstance(node, yaml.MappingNode):
            continue
        for name_node, value_node in node.value:
            name = str(getattr(name_node, "value", "")).lower()
            if not rules.header_is_secret(name):
                continue
            values = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
            for value in values:
                text = str(getattr(value, "value", ""))
                if not is_placeholder(text):
                    yield LintFinding(path, value.start_mark.line + 1, f"header {name}", mask(text))


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
    findings: set[LintFinding] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        # A form body or a query keeps its secrets URL-encoded ("%40", "+"): read it decoded as well.
        unquoted = unquote_plus(line) if "%" in line or "+" in line else line
        for variant in {line, unquoted}:
            for secret in rules.find(variant):
                findings.add(LintFinding(path, number, secret.pattern, secret.excerpt))
    try:
        root = check_yaml_limits(text, str(path))
    except yaml.reader.ReaderError as exc:
        at = text.count("\n", 0, exc.position) + 1
        raise ValueError(f"{path}:{at}: not valid YAML: {exc.reason} (character {exc.character!r})") from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ValueError(f"{where}: not valid YAML: {problem}") from exc
    if root is not None:
        findings.update(_header_findings(path, root, rules))
        for _, node in _walk(root):
            if isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:binary":
                decoded = _binary_text(node)
                at = node.start_mark.line + 1
                for secret in rules.find(decoded or ""):
                    findings.add(LintFinding(path, at, f"{secret.pattern} (in binary body)", secret.excerpt))
    return sorted(f for f in findings if f.pattern.split(" ")[0] not in ignore)
