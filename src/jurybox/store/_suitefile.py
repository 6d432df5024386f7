"""Suite files <-> the store: cases travel as opaque mappings in the suite-file shape.

A suite file is YAML (or JSON, which YAML reads) of the form
``{name, agent, defaults, cases: [...]}``; each case is a mapping with a
``name`` (or ``id``). The store does not interpret cases: it versions them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

from jurybox.inputs import InputError, read_text, read_yaml
from jurybox.store._store import Store


class SuiteFileError(ValueError):
    """A suite file that cannot be imported; the message names the file, line and field."""


def read_suite_file(
    path: Path,
) -> tuple[str, dict[str, Any] | None, dict[str, Any] | None, list[tuple[str, dict[str, Any]]], dict[str, Any]]:
    """Parse a suite file into (name, agent, defaults, [(case name, case mapping)], other top-level keys).

    Raises:
        SuiteFileError: unreadable YAML, or a missing/ill-typed field (file:line: field: problem).
    """
    try:
        document = read_yaml(read_text(path), str(path))
    except InputError as exc:
        where = f"{path}:{exc.line}" if exc.line is not None else str(path)
        raise SuiteFileError(f"{where}: {'not valid YAML: ' if exc.syntax else ''}{exc.problem}") from None
    raw, lines = document.data, document.lines
    if not isinstance(raw, dict):
        raise SuiteFileError(f"{path}:1: a suite file is a mapping with name and cases, got {type(raw).__name__}")
    top = lines.nearest(()) or 1
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        raise SuiteFileError(f"{path}:{lines.nearest(('name',)) or top}: name: the suite needs a non-empty string name")
    sections: dict[str, dict[str, Any] | None] = {}
    for key in ("agent", "defaults"):
        value = raw.get(key)
        if value is not None and not isinstance(value, dict):
            raise SuiteFileError(f"{path}:{top}: {key}: must be a mapping, got {type(value).__name__}")
        sections[key] = value
    if "cases_file" in raw:
        raise SuiteFileError(
            f"{path}:{top}: cases_file: a suite whose cases are in a JSON Lines file runs from its files "
            "(jurybox run FILE); the store takes cases written in the suite file"
        )
    cases_raw = raw.get("cases")
    if not isinstance(cases_raw, list):
        raise SuiteFileError(f"{path}:{top}: cases: must be a list of case mappings")
    cases: list[tuple[str, dict[str, Any]]] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(cases_raw):
        if not isinstance(item, dict):
            raise SuiteFileError(f"{path}:{top}: cases[{index}]: must be a mapping, got {type(item).__name__}")
        line = lines.nearest(("cases", index)) or top
        case_name = item.get("name", item.get("id"))
        if not isinstance(case_name, str) or not case_name.strip():
            raise SuiteFileError(f"{path}:{line}: cases[{index}].name: every case needs a non-empty string name")
        if case_name in seen:
            raise SuiteFileError(
                f"{path}:{line}: cases[{index}].name: duplicate case name {case_name!r} "
                f"(first at line {seen[case_name]})"
            )
        seen[case_name] = line
        cases.append((case_name, item))
    settings = {str(key): value for key, value in raw.items() if key not in ("name", "agent", "defaults", "cases")}
    return name, sections["agent"], sections["defaults"], cases, settings


def import_suite_file(
    store: Store, path: Path, *, normalize: Callable[[Mapping[str, Any]], dict[str, Any]] | None = None
) -> tuple[str, dict[str, int]]:
    """Import a suite file into the store; returns the suite name and the counts of ``store.suites.save``.

    ``normalize`` turns each case into the form a run stores (``jurybox.suites.stored_case``:
    our key names, checked values), so a file imported after a run of it changes nothing.

    Every top-level key is kept (``database``, ``seeds``, ``judge_model``...), so the stored suite
    runs as the file does (``jurybox run --suite``, the dashboard).
    """
    name, agent, defaults, cases, settings = read_suite_file(path)
    if normalize is not None:
        cases = [(case_name, normalize(case)) for case_name, case in cases]
    return name, store.suites.save(name, cases, agent=agent, defaults=defaults, settings=settings)


def dump_suite(data: Mapping[str, Any]) -> str:
    """A suite mapping as YAML in file order (name, settings, agent, defaults, cases)."""
    return yaml.safe_dump(dict(data), sort_keys=False, allow_unicode=True, width=100)


def export_suite_file(store: Store, suite: str, path: Path) -> int:
    """Write the suite's current cases to ``path`` as YAML; returns how many cases were written."""
    data = store.suites.export(suite)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dump_suite(data), encoding="utf-8")
    return len(data["cases"])
