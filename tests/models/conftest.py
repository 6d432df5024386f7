"""Fixtures for the model-layer tests: an isolated cache, recorded sleeps, no real credentials."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from models_helpers import RecordedSleep

from jurybox.models import RetryPolicy


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    # Every test gets its own cache file and never sees a developer's real keys or servers.
    monkeypatch.setenv("JURYBOX_CACHE_DIR", str(tmp_path / "cache"))
    for name in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "OLLAMA_HOST",
        "JURYBOX_JUDGE_MODEL",
        "JURYBOX_CACHE",
    ):
        monkeypatch.delenv(name, raising=False)
    yield


@pytest.fixture
def sleep() -> RecordedSleep:
    return RecordedSleep()


@pytest.fixture
def retry(sleep: RecordedSleep) -> RetryPolicy:
    """The default policy, with waits recorded instead of slept."""
    return RetryPolicy(sleep=sleep)
