"""Plain-text snapshots of what a person sees in the terminal, compared line by line in a diff.

A snapshot is a ``.txt`` file under ``tests/snapshots/``: the rendered text with
trailing spaces stripped and run ids, dates and clock times normalised to
placeholders of the same length (so the wrapping in the file is the wrapping a
user gets). Use the ``snapshot`` fixture (tests/conftest.py)::

    def test_x(snapshot):
        snapshot("history-80", normalise(text))

Update every snapshot after an intended change of the output::

    JURYBOX_UPDATE_SNAPSHOTS=1 .venv/bin/pytest tests/report tests/store -k width

then read the changed files in ``git diff`` before committing them.
"""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path

SNAPSHOTS = Path(__file__).parent / "snapshots"
UPDATE_ENV = "JURYBOX_UPDATE_SNAPSHOTS"

# A run id as `jurybox run` makes it (32 hex digits) or as the store does (20261124-205812-38be3b).
_RUN_ID = re.compile(r"\b(?:[0-9a-f]{32}|\d{8}-\d{6}-[0-9a-f]{6})\b")
_DATE_TIME = re.compile(r"\b\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2})?\b")
_SECONDS = re.compile(r"\b\d+\.\d{2}s\b")


def normalise(text: str, *, seconds: bool = False) -> str:
    """``text`` with run ids as ``RUN1____…``, dates as ``YYYY-MM-DD HH:MM``, (``seconds``) timings as ``9.99s``.

    Each placeholder keeps the length of what it replaces, and one id always gets the same one.
    """
    ids: dict[str, str] = {}

    def run_id(match: re.Match[str]) -> str:
        return ids.setdefault(match.group(), f"RUN{len(ids) + 1}".ljust(len(match.group()), "_"))

    text = _RUN_ID.sub(run_id, text)
    text = _DATE_TIME.sub(lambda m: "YYYY-MM-DD HH:MM:SS"[: len(m.group())], text)
    if seconds:
        text = _SECONDS.sub(lambda m: "9" * (len(m.group()) - 4) + ".99s", text)
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"


def check_snapshot(name: str, text: str, folder: Path = SNAPSHOTS) -> None:
    """Compare ``text`` with ``folder/name.txt``; write it instead when JURYBOX_UPDATE_SNAPSHOTS=1.

    Raises:
        AssertionError: the text differs from the snapshot (with a unified diff), or there is none yet.
    """
    path = folder / f"{name}.txt"
    if os.environ.get(UPDATE_ENV) == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    if not path.exists():
        raise AssertionError(f"no snapshot {path}; create it with {UPDATE_ENV}=1 and read it before committing")
    expected = path.read_text(encoding="utf-8")
    if text != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(keepends=True), text.splitlines(keepends=True), str(path), "rendered now"
            )
        )
        raise AssertionError(f"output differs from snapshot {path} (update with {UPDATE_ENV}=1):\n{diff}")
