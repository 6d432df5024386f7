"""The review queue as a reviewer works it: filters, a count, pages, repeats folded, cheap passes hidden.

A judgment that repeats across runs (same suite, case, judge, round, verdict and
reasoning) is one item, the newest, with how many times it was seen: the same
timeout in twenty nightly runs is one thing to look at, not twenty. Passing
deterministic checks are hidden unless asked for: a regex that matched rarely
needs a person, and they would bury the judgments that do.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy import and_, case, exists, func, literal, not_, or_, select
from sqlalchemy.engine import Connection
from sqlalchemy.sql.elements import ColumnElement

from jurybox.store._schema import judgments_table, results_table, reviews_table, runs_table, suites_table

Reviewed = Literal["no", "yes", "any"]
QUEUE_STATUSES = ("fail", "error", "abstain", "pass")
CHEAP_TIER = "deterministic"
"""The tier whose passes are hidden by default."""
MAX_PAGE = 200


@dataclass(frozen=True)
class QueueFilter:
    """What a reviewer asks the queue for; every field optional.

    Attributes:
        suite: Only this suite's runs.
        run_id: Only this run.
        judge: Only judgments at this path (``llm_judge/correctness``) or of a judge of this name.
        status: Only this verdict (pass, fail, error, abstain).
        tier: Only this tier.
        reviewed: ``no`` (default) judgments nobody reviewed, ``yes`` reviewed ones, ``any`` both.
        cheap_passes: Show passing deterministic checks too (hidden by default).
        repeats: Show every repeat of a judgment across runs (folded into one by default).
    """

    suite: str | None = None
    run_id: str | None = None
    judge: str | None = None
    status: str | None = None
    tier: str | None = None
    reviewed: Reviewed = "no"
    cheap_passes: bool = False
    repeats: bool = False


@dataclass(frozen=True)
class QueueEntry:
    """One item of the queue: a judgment, and how often it repeats (the newest one is shown)."""

    run_id: str
    suite: str
    case: str
    path: str
    round_index: int | None
    judge: str
    tier: str | None
    status: str
    score: float | None
    confidence: float | None
    reasoning: str
    repeats: int
    reviews: int


@dataclass(frozen=True)
class QueuePage:
    """A page of the queue with the counts a reviewer needs to know where they are."""

    entries: list[QueueEntry]
    total: int
    offset: int
    limit: int
    hidden_passes: int


def same_judgment() -> ColumnElement[bool]:
    """A review (``reviews``) of the judgment (``judgments`` joined with its ``results`` row) at hand."""
    r, j = reviews_table.c, judgments_table.c
    return and_(
        r.run_id == j.run_id,
        r.case_name == results_table.c.case_name,
        r.path == j.path,
        or_(r.round_index == j.round_index, and_(r.round_index.is_(None), j.round_index.is_(None))),
    )


def _conditions(chosen: QueueFilter, *, cheap_passes: bool) -> list[ColumnElement[bool]]:
    j = judgments_table.c
    # A judge inside a cascade tier. ``depth >= 2`` says the same (a tier is at depth 1, its path its name) in a
    # form PostgreSQL's planner can estimate from the column's statistics: with ``path != tier`` alone it
    # expected most of the store's verdicts and hashed every result (0.45 s on 660,000 verdicts, now 0.04 s).
    conditions: list[ColumnElement[bool]] = [j.tier.is_not(None), j.path != j.tier, j.depth >= 2]
    reviewed = exists(select(literal(1)).where(same_judgment()))
    if chosen.reviewed == "no":
        conditions.append(not_(reviewed))
    elif chosen.reviewed == "yes":
        conditions.append(reviewed)
    if chosen.suite:
        conditions.append(suites_table.c.name == chosen.suite)
    if chosen.run_id:
        conditions.append(j.run_id == chosen.run_id)
    if chosen.judge:
        conditions.append((j.path == chosen.judge) | (j.judge == chosen.judge))
    if chosen.status:
        conditions.append(j.status == chosen.status)
    if chosen.tier:
        conditions.append(j.tier == chosen.tier)
    if not cheap_passes:
        conditions.append(not_(and_(j.tier == CHEAP_TIER, j.status == "pass")))
    return conditions


def _joined(query: Any) -> Any:
    j = judgments_table.c
    return (
        query.select_from(judgments_table)
        .join(results_table, results_table.c.id == j.result_id)
        .join(runs_table, runs_table.c.id == j.run_id)
        .join(suites_table, suites_table.c.id == runs_table.c.suite_id)
    )


def queue_page(
    connection: Connection,
    chosen: QueueFilter,
    *,
    order: Literal["attention", "sample"] = "attention",
    offset: int = 0,
    limit: int = 50,
    seed: int = 0,
) -> QueuePage:
    """One page of the queue, newest repeat of each judgment, with the total and the passes hidden.

    ``attention``: failed and errored first, then abstained, then the least confident (unknown
    confidence last), then the newest. ``sample``: passes in a seeded random order, the same for
    the same seed (an unbiased sample for measuring a judge on passes).
    """
    offset, limit = max(0, offset), max(1, min(limit, MAX_PAGE))
    j, res = judgments_table.c, results_table.c
    conditions = _conditions(chosen, cheap_passes=chosen.cheap_passes)
    if order == "sample":
        conditions.append(j.status == "pass")
    keys: Sequence[Any] = (
        (j.id,)
        if chosen.repeats
        else (runs_table.c.suite_id, res.case_name, j.path, j.round_index, j.status, j.reasoning)
    )
    grouped = (
        _joined(select(func.max(j.id).label("id"), func.count().label("repeats")))
        .where(*conditions)
        .group_by(*keys)
        .subquery()
    )
    total = int(connection.execute(select(func.count()).select_from(grouped)).scalar_one())
    hidden = 0
    if not chosen.cheap_passes and order != "sample" and chosen.status in (None, "pass"):
        cheap = [*_conditions(chosen, cheap_passes=True), j.tier == CHEAP_TIER, j.status == "pass"]
        hidden = int(connection.execute(_joined(select(func.count())).where(*cheap)).scalar_one())
    reviews = (
        select(func.count())
        .select_from(reviews_table)
        .where(same_judgment())
        .correlate(judgments_table, results_table)
        .scalar_subquery()
    )
    query = _joined(
        select(
            j.run_id, suites_table.c.name.label("suite"), res.case_name, j.path, j.round_index, j.judge, j.tier,
            j.status, j.score, j.confidence, j.reasoning, j.id, grouped.c.repeats, reviews.label("reviews"),
        )
    ).join(grouped, grouped.c.id == j.id)  # fmt: skip
    if order == "sample":
        rows = list(connection.execute(query))
        # A seeded shuffle in Python: SQLite and PostgreSQL have no shared seeded random.
        rows.sort(key=lambda row: hashlib.sha256(f"{seed}:{row.id}".encode()).digest())
        rows = rows[offset : offset + limit]
    else:
        urgency = case((j.status.in_(("fail", "error")), 0), (j.status == "abstain", 1), else_=2)
        query = query.order_by(urgency, j.confidence.is_(None), j.confidence, j.id.desc()).offset(offset).limit(limit)
        rows = list(connection.execute(query))
    entries = [
        QueueEntry(
            row.run_id, row.suite, row.case_name, row.path, row.round_index, row.judge, row.tier, row.status,
            row.score, row.confidence, row.reasoning or "", int(row.repeats), int(row.reviews or 0),
        )
        for row in rows
    ]  # fmt: skip
    return QueuePage(entries, total, offset, limit, hidden)
