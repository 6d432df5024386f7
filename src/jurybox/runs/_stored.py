"""Stored suites (``RunRequest.stored_suites``): the current version of each, as a file a run can load.

Each suite is exported from the store (as ``jurybox store export`` does) to a
file in a temporary folder and loaded like any suite file, except that its
relative paths (the agent's module or file, seeds, plugins) resolve against the
current directory, where ``jurybox store import`` was run from. The files live
as long as the run: worker processes and Ray actors load the suite from them
again. The run records the version of every case it ran, as any run does.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from jurybox.store import Store, export_suite_file

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def export_stored_suites(store: Store, names: Sequence[str], folder: Path) -> list[Path]:
    """Write each stored suite ``names`` names to a file in ``folder``; the files, in order.

    Raises:
        StoreError: a suite the store does not hold (the message names it).
        OSError: the folder cannot be written.
    """
    paths = []
    for index, name in enumerate(names):
        # The file's name is the suite's: the loader's messages name it (and never a hostile path).
        path = folder / f"{index}-{_UNSAFE.sub('_', name)[:80] or 'suite'}.yaml"
        export_suite_file(store, name, path)
        paths.append(path)
    return paths
