"""No module under src/jurybox is over 1,000 lines, and no class over 400: a backstop, not a target.

Modules are split by job, not by size: a module may be long when it does one
thing and its name says which. These limits only catch a file that has
clearly grown several jobs (a newcomer would read it end to end to find the one
they need). Lines are physical lines (blank lines, comments and docstrings
count); a class is measured from its first decorator to its last line.
"""

from __future__ import annotations

import ast
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1] / "src" / "jurybox"
MAX_MODULE_LINES = 1000
MAX_CLASS_LINES = 400


def _modules() -> list[Path]:
    return sorted(SOURCE.rglob("*.py"))


def _name(path: Path) -> str:
    return path.relative_to(SOURCE.parent).as_posix()


def test_no_module_is_over_the_line_limit() -> None:
    offenders = []
    for path in _modules():
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_MODULE_LINES:
            offenders.append(f"{_name(path)}: {lines} lines")
    assert not offenders, f"modules over {MAX_MODULE_LINES} lines (split them by job):\n" + "\n".join(offenders)


def test_no_class_is_over_the_line_limit() -> None:
    offenders = []
    for path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef) or node.end_lineno is None:
                continue
            first = min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
            lines = node.end_lineno - first + 1
            if lines > MAX_CLASS_LINES:
                offenders.append(f"{_name(path)}:{node.lineno} class {node.name}: {lines} lines")
    assert not offenders, f"classes over {MAX_CLASS_LINES} lines (split them by job):\n" + "\n".join(offenders)
