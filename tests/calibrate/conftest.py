"""Helpers (``calibrate_data``, ``llmbar``) import from this folder; each test gets a scratch store."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)


@pytest.fixture(autouse=True)
def scratch_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """`jurybox calibrate` saves to the default store: a scratch one per test, never the working folder's."""
    url = f"sqlite:///{tmp_path / 'scratch-store' / 'jurybox.db'}"
    monkeypatch.setenv("JURYBOX_STORE", url)
    return url
