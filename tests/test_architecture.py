"""The layer table in docs/architecture.md is the law: every import under src/jurybox obeys it.

Each package may import only the packages its row lists (or any, for a row that
says "everything"), and never another package's private module (``_name``):
a package's ``__init__`` re-exports what others may use. Imports inside
functions and under ``TYPE_CHECKING`` count too.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "src" / "jurybox"
DOC = ROOT / "docs" / "architecture.md"
ROOT_PACKAGE = "jurybox"
"""The row of ``jurybox/__init__.py`` (the top-level re-exports)."""
CLI_MODULES = {"cli", "_cli", "__main__"}
"""Modules and packages that make up the ``cli`` row."""
EVERYTHING = "everything"


def layer_table() -> dict[str, set[str] | None]:
    """Package -> the packages it may import (None: everything), from the doc's layer table."""
    rows: dict[str, set[str] | None] = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`"):
            continue
        package = cells[0].strip("`")
        allowed = cells[2]
        rows[package] = None if allowed.startswith(EVERYTHING) else set(re.findall(r"`([a-z_]+)`", allowed))
    return rows


def package_of(path: Path) -> str:
    """The row a source file belongs to."""
    parts = path.relative_to(SOURCE).with_suffix("").parts
    if parts[0] in CLI_MODULES:
        return "cli"
    if parts == ("__init__",):
        return ROOT_PACKAGE
    return parts[0]


def subpackages() -> set[str]:
    return {p.name for p in SOURCE.iterdir() if p.is_dir() and (p / "__init__.py").exists()} | {
        p.stem for p in SOURCE.glob("*.py")
    }


def imported(path: Path) -> Iterator[tuple[int, tuple[str, ...]]]:
    """(line, dotted path below ``jurybox``) for every import of jurybox code in a file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    module_parts = path.relative_to(SOURCE.parent).with_suffix("").parts
    names = subpackages()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = tuple(alias.name.split("."))
                if parts[0] == ROOT_PACKAGE:
                    yield node.lineno, parts[1:]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module_parts[: len(module_parts) - node.level]
                if path.name == "__init__.py":
                    base = module_parts[: len(module_parts) - node.level + 1]
                parts = (*base, *(node.module.split(".") if node.module else ()))
            else:
                parts = tuple((node.module or "").split("."))
            if parts[0] != ROOT_PACKAGE:
                continue
            if len(parts) == 1:  # from jurybox import judges, __version__
                for alias in node.names:
                    yield node.lineno, (alias.name,) if alias.name in names else ()
            else:
                yield node.lineno, parts[1:]


def target_of(parts: tuple[str, ...]) -> str:
    if not parts:
        return ROOT_PACKAGE
    return "cli" if parts[0] in CLI_MODULES else parts[0]


def violations() -> Iterator[str]:
    table = layer_table()
    for path in sorted(SOURCE.rglob("*.py")):
        package = package_of(path)
        rel = path.relative_to(ROOT)
        if package not in table:
            yield f"{rel}: package {package!r} has no row in docs/architecture.md"
            continue
        allowed = table[package]
        for line, parts in imported(path):
            target = target_of(parts)
            if target == package:
                continue
            if allowed is not None and target not in allowed:
                allows = ", ".join(sorted(allowed)) or "none"
                yield f"{rel}:{line}: {package} imports {target} (its row allows: {allows})"
            private = [p for p in parts[1:] if p.startswith("_")]
            if private and target != "cli":
                yield f"{rel}:{line}: {package} imports the private module jurybox.{'.'.join(parts)}"


def test_the_layer_table_is_parsed() -> None:
    table = layer_table()
    assert table["core"] == set()
    assert table["cli"] is None
    assert {"core", "store"} <= (table["report"] or set())


def test_every_import_follows_the_layer_table() -> None:
    found = list(violations())
    assert not found, "imports the layer table does not allow:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from jurybox.store import Store\n", "suites imports store"),
        ("from jurybox.core._judgment import Status\n", "private module jurybox.core._judgment"),
        ("def f():\n    from jurybox import report\n", "suites imports report"),
    ],
)
def test_the_walk_catches_a_bad_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str, expected: str
) -> None:
    """The check itself is checked: a planted import in a copy of the tree is reported."""
    fake = tmp_path / "src" / "jurybox"
    for package in ("core", "suites", "store", "report"):
        (fake / package).mkdir(parents=True)
        (fake / package / "__init__.py").write_text("")
    (fake / "suites" / "_planted.py").write_text(source)
    monkeypatch.setattr(sys.modules[__name__], "SOURCE", fake)
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert any(expected in problem for problem in violations())


# -- what stays inside one package ------------------------------------------------------------------

STORAGE_LIBRARIES = ("sqlalchemy", "alembic")
STORAGE_OUTSIDE_THE_STORE = {
    "judges/_database.py": "SQL checks query the agent's own databases (SqlDatabases), never the store",
}
"""Modules outside ``jurybox.store`` that may import SQLAlchemy, and why."""


def third_party_imports(path: Path) -> Iterator[tuple[int, str]]:
    """(line, dotted module) of every absolute import in a file, inside functions and TYPE_CHECKING too."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.lineno, node.module


def storage_imports_outside_the_store() -> Iterator[str]:
    for path in sorted(SOURCE.rglob("*.py")):
        relative = path.relative_to(SOURCE).as_posix()
        if relative.startswith("store/") or relative in STORAGE_OUTSIDE_THE_STORE:
            continue
        for line, module in third_party_imports(path):
            if module.split(".")[0] in STORAGE_LIBRARIES:
                yield f"{path.relative_to(ROOT)}:{line}: imports {module} (only jurybox.store may)"


def test_only_the_store_imports_sqlalchemy_and_alembic() -> None:
    """The web and the CLI get the store's own errors and helpers (``StoreAccessError``, ``store_file``...)."""
    found = list(storage_imports_outside_the_store())
    assert not found, "storage libraries imported outside jurybox.store:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("planted", "source", "expected"),
    [
        ("web/_planted.py", "from sqlalchemy.exc import OperationalError\n", "imports sqlalchemy.exc"),
        ("_cli/_planted.py", "def f():\n    import alembic.command\n", "imports alembic.command"),
        ("_cli/_planted.py", "from jurybox._cli.history import _console\n", "the private name _console"),
    ],
)
def test_the_storage_and_private_name_checks_catch_a_planted_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, planted: str, source: str, expected: str
) -> None:
    fake = tmp_path / "src" / "jurybox"
    for package in ("_cli", "store", "web", "judges"):
        (fake / package).mkdir(parents=True)
        (fake / package / "__init__.py").write_text("")
    (fake / "store" / "_engine.py").write_text("from sqlalchemy import create_engine\n")  # the store may
    (fake / planted).write_text(source)
    monkeypatch.setattr(sys.modules[__name__], "SOURCE", fake)
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    found = [*storage_imports_outside_the_store(), *private_name_imports(fake)]
    assert len(found) == 1 and expected in found[0], found


def private_name_imports(root: Path) -> Iterator[str]:
    """``from module import _name`` where ``_name`` is another module's private function, class or value.

    A private *module* of the importer's own package (``from jurybox.web import _format``) is
    the package's business and is allowed; a package's ``__init__`` may gather its private
    modules' names. Everything else that starts with an underscore stays in its module.
    """
    for path in sorted(root.rglob("*.py")):
        if path.name == "__init__.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        module_parts = path.relative_to(root.parent).with_suffix("").parts
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or (not node.module and not node.level):
                continue
            if node.level:
                base = module_parts[: len(module_parts) - node.level]
                parts = (*base, *(node.module.split(".") if node.module else ()))
            else:
                parts = tuple((node.module or "").split("."))
            if parts[0] != ROOT_PACKAGE:
                continue
            folder = root.parent.joinpath(*parts)
            for alias in node.names:
                name = alias.name
                if not name.startswith("_") or name.startswith("__"):
                    continue
                if (folder / f"{name}.py").exists() or (folder / name / "__init__.py").exists():
                    continue  # a private module of that package, not a private name
                rel = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
                yield f"{rel}:{node.lineno}: imports the private name {name} from {'.'.join(parts)}"


def test_no_private_name_is_imported_from_another_module() -> None:
    found = list(private_name_imports(SOURCE))
    assert not found, "private names imported across modules:\n" + "\n".join(found)


def test_the_private_name_walk_catches_a_planted_import(tmp_path: Path) -> None:
    fake = tmp_path / "jurybox"
    (fake / "web").mkdir(parents=True)
    (fake / "web" / "__init__.py").write_text("")
    (fake / "web" / "_format.py").write_text("def _money(x): return x\n")
    (fake / "web" / "_page.py").write_text("from jurybox.web import _format\nfrom jurybox.web._format import _money\n")
    found = list(private_name_imports(fake))
    assert len(found) == 1 and "_money" in found[0]
