"""Checking a case written in the browser with the suite loader, what only an admin may change, and diffs.

A case is checked in its suite: the stored suite (``store.suites.export``) with the
edited case in its place is written to a file in a temporary folder and loaded with
``load_suite`` as ``jurybox run`` would load it, so a problem is found (and worded)
exactly as the CLI finds it. Nothing is built that runs code: a case whose judges
would import or run something on the server, or reach another model or database,
is an admin's to write, and it is refused before the loader sees it.
"""

from __future__ import annotations

import difflib
import json
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from jurybox.suites import JudgeModelError, Suite, SuiteError, load_suite

PRIVILEGED_JUDGES = frozenset({"python", "command", "build", "code_coverage", "file_contains", "file_exists"})
"""Judges that import code, run commands or read files on the server."""
PRIVILEGED_OPTIONS = frozenset({"model", "database", "ref", "cmd", "python"})
"""Options that pick a model, a database or code to run."""
PLACEHOLDER_AGENT = {"python": "jurybox:__name__"}
"""The agent a suite with none stored is checked with (the agent is never built here)."""


def privileged_parts(definition: Mapping[str, Any]) -> str:
    """What of a case only an admin may write, as text to compare: SQL checks, code-running judges, models."""
    found: list[Any] = []

    def walk(value: Any, in_judges: bool) -> None:
        if isinstance(value, Mapping):
            for key, item in value.items():
                if key in PRIVILEGED_JUDGES or key in PRIVILEGED_OPTIONS:
                    found.append({str(key): item})
                else:
                    walk(item, key in ("judges", "tiers"))
        elif isinstance(value, list):
            for item in value:
                if in_judges and isinstance(item, str) and item in PRIVILEGED_JUDGES:
                    found.append(item)
                else:
                    walk(item, in_judges)

    walk({key: definition.get(key) for key in ("judges", "voting", "rounds") if key in definition}, False)
    if "sql_checks" in definition:
        found.append({"sql_checks": definition["sql_checks"]})
    return json.dumps(found, sort_keys=True, default=str)


def check_case(
    suite: Mapping[str, Any], definition: Mapping[str, Any], replaces: str | None
) -> tuple[list[tuple[str, str]], list[str], dict[str, Any] | None]:
    """Load the suite with ``definition`` in place of case ``replaces`` (None: added at the end).

    Returns:
        Problems of this case as (path inside the case, message), problems elsewhere in the suite,
        and, when the case has none, the case as the runner records it (``Case.spec``): saved in that
        form, a run of the stored suite records the very version that was saved.
    """
    data = dict(suite)
    data.setdefault("agent", PLACEHOLDER_AGENT)
    # Seed files are relative to where the suite lives and say nothing about one case: not loaded here.
    data.pop("seeds", None)
    data.pop("seed_schema", None)
    cases = [dict(c) for c in data.get("cases") or []]
    index = next((i for i, c in enumerate(cases) if c.get("name") == replaces), None) if replaces else None
    if index is None:
        index = len(cases)
        cases.append(dict(definition))
    else:
        cases[index] = dict(definition)
    loaded = _load({**data, "cases": cases})
    if isinstance(loaded, JudgeModelError):  # the server's $JURYBOX_JUDGE_MODEL, not this case
        return [], [f"judge model: {loaded}"], None
    if not isinstance(loaded, SuiteError):
        return [], [], _spec(loaded, definition)
    prefix = f"cases[{index}]"
    mine: list[tuple[str, str]] = []
    elsewhere: list[str] = []
    for problem in loaded.problems:
        if problem.field == prefix or problem.field.startswith((prefix + ".", prefix + "[")):
            mine.append((problem.field[len(prefix) :].lstrip("."), problem.message))
        else:
            elsewhere.append(f"{problem.field}: {problem.message}" if problem.field else problem.message)
    if mine:
        return mine, elsewhere, None
    # Another case of the suite is wrong (it is shown, not this case's to fix): this one alone gives its spec.
    alone = _load({**data, "cases": [dict(definition)]})
    return [], elsewhere, _spec(alone, definition) if isinstance(alone, Suite) else None


def check_agent(suite: Mapping[str, Any], agent: Mapping[str, Any], folder: Path | None = None) -> list[str]:
    """What the loader says of the suite's ``agent:`` (built, then dropped, as ``jurybox run --suite`` builds it).

    Only for an admin's change: building a Python agent imports its module on this server. Its
    relative paths resolve in ``folder``, the suite file's (the current directory when not known).
    """
    loaded = _load({**suite, "agent": dict(agent)}, check_agent=True, base_dir=folder or Path.cwd())
    if isinstance(loaded, Suite):
        return []
    if isinstance(loaded, JudgeModelError):
        return []  # the server's judge model is not the agent's problem
    return [
        f"{p.field}: {p.message}" if p.field else p.message
        for p in loaded.problems
        if p.field.split(".")[0].split("[")[0] in ("agent", "seeds")
    ]


def _load(
    data: Mapping[str, Any], *, check_agent: bool = False, base_dir: Path | None = None
) -> Suite | SuiteError | JudgeModelError:
    with tempfile.TemporaryDirectory(prefix="jurybox-case-") as folder:
        path = Path(folder) / "suite.yaml"
        path.write_text(yaml.safe_dump(dict(data), sort_keys=False, allow_unicode=True, width=100), encoding="utf-8")
        try:
            return load_suite(path, check_agent=check_agent, base_dir=base_dir or Path(folder))
        except (SuiteError, JudgeModelError) as exc:
            return exc


def _spec(suite: Suite, definition: Mapping[str, Any]) -> dict[str, Any] | None:
    built = next((case for case in suite.cases if case.name == definition.get("name")), None)
    return dict(built.spec) if built is not None else None


def as_yaml(definition: Mapping[str, Any] | None) -> str:
    if definition is None:
        return "(retired: not in the suite)\n"
    return yaml.safe_dump(dict(definition), sort_keys=False, allow_unicode=True, width=100)


def diff_lines(before: str, after: str, *, before_label: str, after_label: str) -> list[dict[str, str]]:
    """A unified diff as lines with their kind (``add``, ``remove``, ``hunk``, ``same``), for a template to escape."""
    lines = []
    diff = difflib.unified_diff(
        before.splitlines(), after.splitlines(), fromfile=before_label, tofile=after_label, lineterm="", n=3
    )
    for line in diff:
        if line.startswith(("+++", "---")):
            kind = "file"
        elif line.startswith("@@"):
            kind = "hunk"
        elif line.startswith("+"):
            kind = "add"
        elif line.startswith("-"):
            kind = "remove"
        else:
            kind = "same"
        lines.append({"kind": kind, "text": line})
    return lines
