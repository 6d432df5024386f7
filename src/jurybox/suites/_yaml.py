"""YAML that remembers where every value came from, so errors can name the line."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from jurybox.core import MAX_INPUT_BYTES, MAX_INPUT_DEPTH, Breach, tree_limit_breach, yaml_children
from jurybox.suites._errors import SuiteError

PathKey = tuple[str | int, ...]
# libyaml's parser when it is built in (10x faster on big suites); its nodes carry the same marks.
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class Located:
    """A parsed YAML document and the 1-based line of every value in it, by path."""

    data: Any
    lines: dict[PathKey, int]
    file: str
    line_offset: int = 0

    def line_of(self, path: Sequence[str | int]) -> int | None:
        """The line of the value at ``path``, or of its closest parent that has one."""
        key = tuple(path)
        while True:
            if key in self.lines:
                return self.lines[key] + self.line_offset
            if not key:
                return None
            key = key[:-1]

    def sub(self, path: Sequence[str | int]) -> Located:
        """The value at ``path`` as its own document, keeping line numbers."""
        prefix = tuple(path)
        value = self.data
        for part in prefix:
            value = value[part]
        lines = {k[len(prefix) :]: v for k, v in self.lines.items() if k[: len(prefix)] == prefix}
        return Located(value, lines, self.file, self.line_offset)


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
    when it is too big, nested too deep, or its aliases would expand it too far
    (a "billion laughs"); see ``jurybox.core.tree_limit_breach``.

    Raises:
        SuiteError: on a syntax error, a duplicate key or a broken limit, naming file and line.
    """
    name = str(file)
    if len(text) > MAX_INPUT_BYTES:
        raise SuiteError.at(name, None, "", f"the file is over the {MAX_INPUT_BYTES // 2**20} MB input limit; split it")
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return Located(None, {}, name, line_offset)
        # Without an anchor (&) nothing can alias, so no node is shared: only depth can be broken, and
        # _walk checks it on its way. The full check costs as much as the walk again, per case of a big suite.
        if "&" in text:
            _refuse(tree_limit_breach(node, yaml_children), name, line_offset)
        lines: dict[PathKey, int] = {}
        _walk(node, (), lines, name, line_offset)
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 + line_offset if mark is not None else None
        problem = exc.problem or exc.context or str(exc)
        if exc.context and exc.problem:
            started = exc.context_mark.line + 1 + line_offset if exc.context_mark is not None else None
            problem += f" ({exc.context}" + (f" that starts at line {started})" if started != line else ")")
        raise SuiteError.at(name, line, "", f"invalid YAML: {problem}") from exc
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1 + line_offset
        raise SuiteError.at(name, line, "", f"invalid YAML: {exc.reason} (character {exc.character!r})") from exc
    except yaml.YAMLError as exc:
        raise SuiteError.at(name, None, "", f"invalid YAML: {str(exc).splitlines()[0]}") from exc
    finally:
        loader.dispose()
    return Located(data, lines, name, line_offset)


def _refuse(breach: Breach[Any] | None, file: str, offset: int) -> None:
    if breach is not None:
        line = breach.node.start_mark.line + 1 + offset
        raise SuiteError.at(file, line, "", f"refused: {breach.reason} (limits on input size, depth and aliases)")


def _walk(node: yaml.Node, path: PathKey, lines: dict[PathKey, int], file: str, offset: int) -> None:
    lines.setdefault(path, node.start_mark.line + 1)
    if len(path) >= MAX_INPUT_DEPTH:
        _refuse(Breach(f"nested deeper than {MAX_INPUT_DEPTH} levels", node), file, offset)
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                # A key that is itself a collection: skipped by the walk, but still built, so measured here.
                _refuse(tree_limit_breach(key_node, yaml_children, max_depth=MAX_INPUT_DEPTH - len(path)), file, offset)
                continue
            if key_node.tag == "tag:yaml.org,2002:merge":
                _walk(value_node, path, lines, file, offset)
                continue
            key = str(key_node.value)
            line = key_node.start_mark.line + 1
            if key in seen:
                raise SuiteError.at(
                    file,
                    line + offset,
                    format_path((*path, key)),
                    f"duplicate key {key!r} (first at line {seen[key] + offset})",
                )
            seen[key] = line
            # The key's line is where a reader looks, even when the value starts on the next one.
            lines[(*path, key)] = line
            _walk(value_node, (*path, key), lines, file, offset)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk(item, (*path, index), lines, file, offset)
