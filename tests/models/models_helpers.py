"""Helpers shared by the model-layer tests."""

from __future__ import annotations

from pathlib import Path

CASSETTES = Path(__file__).resolve().parents[1] / "data" / "cassettes" / "models"


class RecordedSleep:
    """A sleep that returns at once and remembers how long it was asked to wait."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
