"""What a run produces per case: the record the runner writes, the store keeps and the reports read.

It lives in the core because three layers share it and none of them owns it:
``suites`` builds it, ``store`` persists it and ``report`` renders it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, TypeAlias, TypedDict, get_args

from jurybox.core._context import Context
from jurybox.core._deciding import deciding_judgment, pass_mark
from jurybox.core._judgment import Judgment, Status

RunStatus = Literal["completed", "interrupted", "failed"]
"""How a run ended: every case finished, stopped early (Ctrl-C), or the runner itself failed."""

RUN_STATUSES: tuple[str, ...] = get_args(RunStatus)

PlannedCases: TypeAlias = Mapping[str, Mapping[str, Any]] | Iterable[tuple[str, Mapping[str, Any]]]
"""The cases a run is opened with: name -> definition, or (name, definition) pairs read once (a cases file)."""


class RunDetails(TypedDict, total=False):
    """What a run records about itself when it is opened, besides its suite and its cases.

    The runner hands these to the store (``store.runs.begin(suite, cases=..., **details)``);
    every one may be left out. Said once here, so the engine's store port and the store's
    own method name the same fields without importing each other.
    """

    judge_model: str | None
    """The judge model the LLM tier used (None: no LLM tier)."""
    agent_version: str | None
    """The agent's version, as the user gave it."""
    git_commit: str | None
    """The commit the suite ran at."""
    config: Mapping[str, Any] | None
    """Anything else worth keeping with the run (concurrency, filters, the suite file...)."""
    experiment_id: str | None
    """The experiment the run is one variant of (a suite's ``variants:``); None: a run of its own."""
    variant: str | None
    """Which variant of the experiment the run is."""


SKIPPED_TIERS_KEY = "skipped_tiers"
"""``CaseRecord.metadata`` key: tiers the runner left out of a case, mapped to why (e.g. no judge model)."""
UNPRICED_KEY = "unpriced"
"""``CaseRecord.metadata`` key: when some calls of a case had no known price (``cost`` is then None),
``{"calls": n, "known_cost": usd}``: how many, and what the priced calls cost (a lower bound)."""
LESSONS_KEY = "lessons"
"""``CaseRecord.metadata`` key: ids of the stored lessons the case was handed, most relevant first."""


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
        """The score of the judge that decided the case (``deciding_judgment``), in 0..1.

        None when that judge gave none, and for an ABSTAIN or ERROR case: undecided is never a number.
        """
        if self.judgment.status not in (Status.PASS, Status.FAIL):
            return None
        return self._deciding.value

    @property
    def pass_mark(self) -> float | None:
        """The pass mark the deciding judge applied to that score, or None when it has none."""
        return pass_mark(self._deciding)

    @functools.cached_property
    def _deciding(self) -> Judgment:
        # Found once a record: the writer, the exporter and the tally each ask for the score.
        # (The record is frozen and so is its tree; the value lives in the instance's __dict__.)
        return deciding_judgment(self.judgment)

    @property
    def cost_parts(self) -> tuple[float | None, int | None]:
        """``(known cost, calls with no price)``: ``(cost, 0)`` when every call was priced.

        When some were not (``cost`` is None), the known part and their number from
        ``metadata[UNPRICED_KEY]``, so a report can say "≥ $X"; ``(None, None)`` when
        nothing says (a cost unknown altogether).
        """
        if self.cost is not None:
            return self.cost, 0
        found = self.metadata.get(UNPRICED_KEY)
        if isinstance(found, Mapping):
            calls, known = found.get("calls"), found.get("known_cost")
            if isinstance(calls, int) and not isinstance(calls, bool) and calls > 0:
                if isinstance(known, int | float) and not isinstance(known, bool) and math.isfinite(known):
                    return float(known), calls
                return 0.0, calls
        return None, None

    @property
    def lessons(self) -> list[int]:
        """Ids of the stored lessons this case was handed (``metadata["lessons"]``), most relevant first."""
        ids = self.metadata.get(LESSONS_KEY)
        return [int(i) for i in ids if isinstance(i, int) and not isinstance(i, bool)] if isinstance(ids, list) else []
