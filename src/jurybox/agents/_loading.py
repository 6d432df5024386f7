"""Import ``module:attribute`` references from a suite, with errors that name the field."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import re
import sys
from pathlib import Path
from typing import Any

from jurybox.agents._errors import TargetConfigError


def _prepend(path: Path) -> None:
    text = str(path.resolve())
    if text not in sys.path:
        sys.path.insert(0, text)


def add_import_path(base_dir: Path | None, module_name: str | None = None) -> None:
    """Make a suite's agent module importable, the way ``python -m`` would from the project folder.

    Puts on ``sys.path``: the current directory, the suite's folder, and the
    nearest ancestor of the suite's folder holding the module's top-level
    package (so ``examples.property_agent.agent`` imports from a suite in
    ``examples/property_agent/`` wherever jurybox is started). Later entries
    go first, so the suite's own modules win over installed ones.
    """
    _prepend(Path.cwd())
    if base_dir is None:
        return
    folder = Path(base_dir).resolve()
    if module_name and "." in module_name:
        top = module_name.split(".")[0]
        for ancestor in folder.parents:
            if (ancestor / top / "__init__.py").is_file():
                _prepend(ancestor)
                break
    _prepend(folder)


def load_reference(reference: Any, *, field: str, base_dir: Path | None = None) -> Any:
    """Return the object ``reference`` names.

    Args:
        reference: ``"package.module:attribute"`` (the attribute may be dotted)
            or ``"path/to/file.py:attribute"`` (relative to ``base_dir``).
        field: The spec field the reference came from, for error messages.
        base_dir: The suite's folder; added to ``sys.path``.

    Raises:
        TargetConfigError: malformed reference, import failure or missing attribute.
    """
    if not isinstance(reference, str) or reference.count(":") != 1:
        raise TargetConfigError(f"{field}: expected 'module:attribute' (e.g. 'my_agent:respond'), got {reference!r}")
    module_name, _, attribute = reference.partition(":")
    if not module_name or not attribute:
        raise TargetConfigError(f"{field}: expected 'module:attribute' (e.g. 'my_agent:respond'), got {reference!r}")
    add_import_path(base_dir, None if module_name.endswith(".py") else module_name)
    try:
        if module_name.endswith(".py"):
            module = _import_file(module_name, base_dir)
        else:
            module = importlib.import_module(module_name)
    except TargetConfigError:
        raise
    except ModuleNotFoundError as exc:
        missing = _missing_package(module_name, exc, base_dir)
        if missing:
            raise TargetConfigError(f"{field}: {missing}") from None
        raise TargetConfigError(f"{field}: cannot import {module_name!r}: {type(exc).__name__}: {exc}") from exc
    except Exception as exc:
        raise TargetConfigError(f"{field}: cannot import {module_name!r}: {type(exc).__name__}: {exc}") from exc
    value: Any = module
    for part in attribute.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            public = sorted(name for name in dir(value) if not name.startswith("_"))
            raise TargetConfigError(
                f"{field}: {module_name!r} has no attribute {attribute!r}; it defines: {', '.join(public[:30])}"
            ) from None
    return value


def _missing_package(module_name: str, error: ModuleNotFoundError, base_dir: Path | None) -> str | None:
    """One line saying what to copy when the suite's own package is not there (a suite copied alone).

    None when the missing module is not one of ``module_name``'s own packages (a dependency the
    agent imports is missing: the plain error says which).
    """
    parts = module_name.split(".")
    own = {".".join(parts[: index + 1]) for index in range(len(parts))}
    if error.name not in own:
        return None
    top = parts[0]
    where = f"the suite's folder ({Path(base_dir).resolve()}), its parents" if base_dir is not None else "its parents"
    return (
        f"cannot import {module_name!r}: no package {error.name!r} in {where} or the current directory; "
        f"copy the whole {top}/ folder (with its __init__.py files), not the suite file alone, and run from its parent"
    )


def _import_file(path_text: str, base_dir: Path | None) -> Any:
    path = Path(path_text)
    if not path.is_absolute() and base_dir is not None:
        path = Path(base_dir) / path
    if not path.is_file():
        raise TargetConfigError(f"agent.python: no such file {str(path)!r}")
    # Named by the whole resolved path: two projects' agents/echo.py in one process are two modules.
    resolved = path.resolve()
    digest = hashlib.sha256(str(resolved).encode("utf-8", "surrogatepass")).hexdigest()[:16]
    name = f"_jurybox_agent_{re.sub(r'[^0-9A-Za-z_]', '_', resolved.stem)}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise TargetConfigError(f"agent.python: cannot load {str(path)!r} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module
