"""``jurybox check``: judge recorded executions (JSONL) with a judge from a Python module."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    return None
