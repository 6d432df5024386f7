"""Fixtures for the suite tests."""

from __future__ import annotations

import shutil
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from suite_helpers import HERE


@pytest.fixture
def toy_suite(tmp_path: Path) -> Callable[[str], Path]:
    """Write a suite file next to a copy of the toy agent; ``{db}`` in the text is the agent's database."""

    def write(text: str, name: str = "suite.yaml") -> Path:
        shutil.copy(HERE / "toy_agent.py", tmp_path / "toy_agent.py")
        path = tmp_path / name
        path.write_text(textwrap.dedent(text).replace("{db}", str(tmp_path / "toy.db")), encoding="utf-8")
        return path

    return write
