"""The models package's modules share only public names: no module imports another's private (underscore) name."""

from __future__ import annotations

import ast
from pathlib import Path

import jurybox.models

MODELS = Path(jurybox.models.__file__).parent


def private_imports(source: str) -> list[str]:
    """``module: name`` for each underscore name imported from another jurybox module."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("jurybox"):
            found += [f"{node.module}: {alias.name}" for alias in node.names if alias.name.startswith("_")]
    return found


def test_no_models_module_imports_a_private_name_of_another() -> None:
    offenders = {
        path.name: names
        for path in sorted(MODELS.glob("*.py"))
        if path.name != "__init__.py" and (names := private_imports(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}


def test_the_check_sees_a_private_import() -> None:
    assert private_imports("from jurybox.models._openai_wire import _from_chunks, from_completion\n") == [
        "jurybox.models._openai_wire: _from_chunks"
    ]
    assert private_imports("from jurybox.models._openai_wire import from_completion\nimport json\n") == []
