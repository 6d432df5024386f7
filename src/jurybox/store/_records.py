"""What a run produces per case: the record the runner hands to the store and the reports."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from jurybox.core._context import Context
from jurybox.core._judgment import Judgment, Status


@dataclass(frozen=True)
class RoundRecord:
    """One round of a multi-round case: the prompt, what happened and its verdict."""

    index: int
    """0-based, as stored; reports and messages number rounds from 1 (``round1`` is index 0)."""
    prompt: str
    context: Context
    judgment: Judgment
    follow_ups: tuple[tuple[str, str], ...] = ()
    """Clarifying exchanges inside the round: (agent question, reply the runner gave)."""


@dataclass(frozen=True)
class CaseRecord:
    """The outcome of one case in one run.

    ``judgment`` is the case's whole verdict tree (a cascade's tiers and their
    judges); the store keeps one row per judge by walking it. ``status`` equals
    ``judgment.status``; ERROR here means the case could not be judged (an
    agent that crashed, hung or returned garbage), with ``error`` saying why.
    """

    case: str
    judgment: Judgment
    rounds: tuple[RoundRecord, ...] = ()
    context: Context | None = None
    duration: float = 0.0
    tokens: int | None = None
    cost: float | None = None
    judge_calls: int = 0
    tags: tuple[str, ...] = ()
    error: str | None = None
    started_at: datetime | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def status(self) -> Status:
        return self.judgment.status

    @property
    def score(self) -> float | None:
        return self.judgment.value
