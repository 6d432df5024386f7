"""Stored suites (``RunRequest.stored_suites``): the current version of each, as a file a run can load.

Each suite is exported from the store (as ``jurybox store export`` does) to a
file in a temporary folder and loaded like any suite file, with its relative
paths (the agent's module or file, seeds, plugins) resolved against the folder
of the file it was imported or last run from, which the store keeps: the same
stored suite runs from the terminal, the dashboard and CI, in any folder. The
files live as long as the run: worker processes and Ray actors load the suite
from them again. The run records the version of every case it ran, as any run does.

Importing goes through the suite loader too (``import_suite``), so what is
stored is each case as a run records it, and the first run after an import
finds the versions the import made instead of silently making new ones.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from jurybox.suites import JudgeModelError, Suite, SuiteError, load_suite

if TYPE_CHECKING:
    from jurybox.store import Store

# The store's modules (SQLAlchemy's) are imported where a function needs them, not with this module:
# `jurybox run` imports them while its judge server's check waits for an answer.

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class StoredSuiteFile:
    """A stored suite written to a file for a run.

    Attributes:
        name: The suite's name in the store.
        path: The temporary file it was written to.
        folder: Where its relative paths resolve: the folder of the file it came from, or the
            current directory for a suite stored before the store kept folders.
    """

    name: str
    path: Path
    folder: Path


def export_stored_suites(store: Store, names: Sequence[str], folder: Path) -> list[StoredSuiteFile]:
    """Write each stored suite ``names`` names to a file in ``folder``; the files, in order.

    Raises:
        StoreError: a suite the store does not hold, or one it holds without an agent (the
            message names it and says how to give it one).
        OSError: the folder cannot be written.
    """
    from jurybox.store import StoreError, export_suite_file

    files = []
    for index, name in enumerate(names):
        data = store.suites.export(name)
        if "agent" not in data:
            raise StoreError(
                f"stored suite {name!r} has no agent to run: it was stored by runs of a suite file the store "
                "could not keep whole (one with a cases_file); import a suite file with its agent "
                "(jurybox store import FILE), or run the file itself"
            )
        # The file's name is the suite's: the loader's messages name it (and never a hostile path).
        path = folder / f"{index}-{_UNSAFE.sub('_', name)[:80] or 'suite'}.yaml"
        export_suite_file(store, name, path)
        source = store.suites.folder(name)
        files.append(StoredSuiteFile(name, path, Path(source) if source else Path.cwd()))
    return files


def import_suite(store: Store, path: Path) -> tuple[str, dict[str, int]]:
    """Import a suite file (``jurybox store import``): each case stored as a run records it.

    A suite the loader refuses is still imported as written (it can be fixed in the dashboard);
    its cases are then stored as they are in the file.

    Raises:
        SuiteFileError: the file is not a suite file the store can keep (file, line and field named).
    """
    from jurybox.store import import_suite_file, read_suite_file

    read_suite_file(path)  # what the store cannot keep (a cases_file) is refused before the loader builds it
    try:
        suite = load_suite(path, check_agent=False)
    except (SuiteError, JudgeModelError):
        return import_suite_file(store, path)
    return import_suite_file(store, path, definitions={case.name: case.spec for case in suite.cases})


def remember_suite_source(store: Store, suite: Suite) -> None:
    """Keep a suite file's agent, defaults and settings with its stored suite, after a run of the file.

    A suite first stored by ``jurybox run suite.yaml`` can then run from the store alone. A suite
    whose agent the store keeps from this very folder is left as it is (the file is not read a second
    time on every run; ``jurybox store import`` updates it), and so is one the store cannot keep whole
    (a suite with a ``cases_file``).
    """
    folder = str(suite.base_dir.resolve())
    if store.suites.source(suite.name) == (True, folder):
        return
    written = suite.written
    if written is not None:
        # What load_suite already read: a 100,000-case file is not parsed a second time.
        if "cases_file" in written:
            return
        agent, defaults = written.get("agent"), written.get("defaults")
        if not all(section is None or isinstance(section, dict) for section in (agent, defaults)):
            return
        settings = {str(key): value for key, value in written.items() if key not in ("name", "agent", "defaults")}
    else:
        from jurybox.store import SuiteFileError, read_suite_file

        try:
            _, agent, defaults, _, settings = read_suite_file(suite.path)
        except (SuiteFileError, OSError):
            return
    store.suites.remember_source(suite.name, agent=agent, defaults=defaults, settings=settings, folder=folder)
