"""Human review of judgments: agree or disagree with a judge, the label a person would give, and why.

Reviews are what ``jurybox calibrate`` measures judges against: ``labelled_rows``
turns them into a labelled set (one row per reviewed judgment, one label per
reviewer) with the judged text and the judge's identity. The review queue
offers judgments nobody reviewed yet: the ones that need a person first
(failed, errored or abstained, then the least confident), or a seeded random
sample of passes, which is what an unbiased estimate of a judge's accuracy on
passes needs.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import and_, case, exists, func, insert, literal, not_, select
from sqlalchemy.sql.elements import ColumnElement

from jurybox.store._cases import now
from jurybox.store._errors import StoreError
from jurybox.store._json import db_jsonable
from jurybox.store._models import as_utc
from jurybox.store._repository import Repository
from jurybox.store._review_queue import QueueFilter, QueuePage, queue_page, same_judgment
from jurybox.store._schema import judgments_table, results_table, reviews_table, round_results_table

JUDGE_IDENTITIES_KEY = "judge_identities"
"""Where a run's config keeps its LLM judges' identities, by the judgment's path (``llm_judge/correctness``)."""
LABELS = ("pass", "fail")
"""What a reviewer may say a judgment should have been."""
MAX_NOTE = 10_000
QueueOrder = Literal["attention", "sample"]


@dataclass(frozen=True)
class Review:
    """One person's review of one judgment."""

    id: int
    run_id: str
    case: str
    path: str
    round_index: int | None
    reviewer: str
    agree: bool
    label: str
    note: str
    judge_name: str
    judge_status: str
    judge_key: str | None = None
    judge_identity: Mapping[str, Any] | None = None
    created_at: datetime | None = None


@dataclass(frozen=True)
class ReviewItem:
    """A judgment waiting for review."""

    run_id: str
    case: str
    path: str
    round_index: int | None
    judge: str
    tier: str | None
    status: str
    score: float | None
    confidence: float | None
    reasoning: str
    reviews: int = 0
    extra: Mapping[str, Any] = field(default_factory=dict)


def _reviewable() -> ColumnElement[bool]:
    """Judges' own verdicts: the nodes below a tier of the runner's cascade (not the tiers, not the case root)."""
    j = judgments_table.c
    return and_(j.tier.is_not(None), j.path != j.tier)


class ReviewRepository(Repository):
    """The ``reviews`` table, read with the judgments and results it is about."""

    def add_review(
        self,
        run_id: str,
        case: str,
        path: str,
        *,
        reviewer: str,
        agree: bool,
        label: str,
        note: str = "",
        round_index: int | None = None,
        judge_key: str | None = None,
        judge_identity: Mapping[str, Any] | None = None,
    ) -> int:
        """Record a review of the judgment at ``path`` of ``case`` in ``run_id``; return its id.

        Raises:
            ValueError: a label other than pass/fail, an over-long note, or an empty reviewer.
            StoreError: no such judgment.
        """
        if label not in LABELS:
            raise ValueError(f"label must be pass or fail (got {label!r})")
        if not reviewer.strip():
            raise ValueError("a review needs its reviewer")
        if len(note) > MAX_NOTE:
            raise ValueError(f"a note holds at most {MAX_NOTE:,} characters (got {len(note):,})")
        j = judgments_table.c
        with self._write() as connection:
            node = connection.execute(
                select(j.judge, j.status)
                .join(results_table, results_table.c.id == j.result_id)
                .where(
                    j.run_id == run_id,
                    results_table.c.case_name == case,
                    j.path == path,
                    j.round_index.is_(None) if round_index is None else j.round_index == round_index,
                )
                .limit(1)
            ).one_or_none()
            if node is None:
                where = f"round {round_index + 1} of " if round_index is not None else ""
                raise StoreError(
                    f"no judgment {path or '(the case verdict)'!r} in {where}case {case!r} of run {run_id}"
                )
            inserted = connection.execute(
                insert(reviews_table)
                .values(
                    run_id=run_id,
                    case_name=case,
                    round_index=round_index,
                    path=path,
                    reviewer=reviewer.strip()[:255],
                    agree=bool(agree),
                    label=label,
                    note=db_jsonable(note),
                    judge_name=node.judge,
                    judge_status=node.status,
                    judge_key=judge_key,
                    judge_identity=db_jsonable(dict(judge_identity)) if judge_identity is not None else None,
                    created_at=now(),
                )
                .returning(reviews_table.c.id)
            )
            return int(inserted.scalar_one())

    def reviews(
        self,
        *,
        run_id: str | None = None,
        case: str | None = None,
        reviewer: str | None = None,
        judge_key: str | None = None,
        limit: int = 1000,
    ) -> list[Review]:
        """Reviews, newest first, filtered by any of run, case, reviewer and judge key."""
        r = reviews_table.c
        query = select(reviews_table).order_by(r.id.desc()).limit(max(1, min(limit, 100_000)))
        for column, value in (
            (r.run_id, run_id),
            (r.case_name, case),
            (r.reviewer, reviewer),
            (r.judge_key, judge_key),
        ):
            if value is not None:
                query = query.where(column == value)
        with self._read() as connection:
            return [_review(row) for row in connection.execute(query)]

    def review_queue(
        self,
        *,
        run_id: str | None = None,
        order: QueueOrder = "attention",
        tiers: Sequence[str] | None = None,
        limit: int = 50,
        seed: int = 0,
    ) -> list[ReviewItem]:
        """Judgments nobody has reviewed yet.

        Args:
            run_id: Only this run's judgments (default: every run).
            order: ``attention``: failed, errored and abstained first, then the least confident,
                then the newest; ``sample``: a random sample of passes (the same for the same seed).
            tiers: Only judges of these tiers (``llm_judge``...).
            limit: At most this many.
            seed: The sample's seed.
        """
        j, res = judgments_table.c, results_table.c
        query = (
            select(
                j.run_id, res.case_name, j.path, j.round_index, j.judge, j.tier, j.status, j.score, j.confidence,
                j.reasoning, j.id,
            )
            .join(results_table, res.id == j.result_id)
            .where(_reviewable(), not_(exists(select(literal(1)).where(same_judgment()))))
        )  # fmt: skip
        if run_id is not None:
            query = query.where(j.run_id == run_id)
        if tiers:
            query = query.where(j.tier.in_(list(tiers)))
        if order == "sample":
            query = query.where(j.status == "pass")
            rows = list(self._read_all(query))
            # A seeded shuffle in Python: SQLite and PostgreSQL have no shared seeded random.
            rows.sort(key=lambda row: hashlib.sha256(f"{seed}:{row.id}".encode()).digest())
            rows = rows[: max(1, limit)]
        else:
            urgency = case((j.status.in_(("fail", "error")), 0), (j.status == "abstain", 1), else_=2)
            query = query.order_by(urgency, j.confidence.is_(None), j.confidence, j.id.desc()).limit(max(1, limit))
            rows = list(self._read_all(query))
        return [
            ReviewItem(
                row.run_id, row.case_name, row.path, row.round_index, row.judge, row.tier, row.status,
                row.score, row.confidence, row.reasoning,
            )
            for row in rows
        ]  # fmt: skip

    def queue(
        self,
        chosen: QueueFilter | None = None,
        *,
        order: QueueOrder = "attention",
        offset: int = 0,
        limit: int = 50,
        seed: int = 0,
    ) -> QueuePage:
        """A page of the review queue as the dashboard shows it (see ``jurybox.store.QueueFilter``)."""
        with self._read() as connection:
            return queue_page(connection, chosen or QueueFilter(), order=order, offset=offset, limit=limit, seed=seed)

    def agreement(self, *, run_id: str | None = None) -> tuple[int, int]:
        """(reviews agreeing with the judge, reviews) over every review, or one run's."""
        r = reviews_table.c
        query = select(func.count(), func.sum(case((r.agree.is_(True), 1), else_=0))).select_from(reviews_table)
        if run_id is not None:
            query = query.where(r.run_id == run_id)
        with self._read() as connection:
            total, agreed = connection.execute(query).one()
        return int(agreed or 0), int(total or 0)

    def labelled_rows(self, *, run_id: str | None = None, judge_key: str | None = None) -> Iterator[dict[str, Any]]:
        """The reviews as a labelled set for ``jurybox calibrate``: one row per judgment, a label per reviewer.

        Each row holds what the judge saw (``input``, ``output``, ``expected``, ``sources``),
        ``labels`` (reviewer -> pass/fail) and, in ``metadata``, the judge's name, key,
        identity and verdict, the run, the case and the reviewers' notes.
        """
        grouped: dict[tuple[str, str, int | None, str], list[Review]] = {}
        for review in reversed(self.reviews(run_id=run_id, judge_key=judge_key, limit=100_000)):
            grouped.setdefault((review.run_id, review.case, review.round_index, review.path), []).append(review)
        for (run, case_name, round_index, path), reviews in grouped.items():
            context = self._context(run, case_name, round_index)
            last = reviews[-1]
            yield {
                "id": f"{run}/{case_name}/{'' if round_index is None else f'round{round_index + 1}/'}{path}",
                "input": str(context.get("input", "")),
                "output": str(context.get("output", "")),
                "expected": context.get("expected"),
                "sources": list(context.get("sources") or []),
                # The latest review of each reviewer is their label.
                "labels": {review.reviewer: review.label for review in reviews},
                "metadata": {
                    "run_id": run,
                    "case": case_name,
                    "path": path,
                    "judge": last.judge_name,
                    "judge_key": last.judge_key,
                    "judge_identity": dict(last.judge_identity) if last.judge_identity else None,
                    "judge_status": last.judge_status,
                    "notes": {review.reviewer: review.note for review in reviews if review.note},
                },
            }

    def _context(self, run_id: str, case: str, round_index: int | None) -> Mapping[str, Any]:
        res = results_table.c
        with self._read() as connection:
            if round_index is None:
                found = connection.execute(
                    select(res.context).where(res.run_id == run_id, res.case_name == case)
                ).scalar()
            else:
                found = connection.execute(
                    select(round_results_table.c.context)
                    .join(results_table, res.id == round_results_table.c.result_id)
                    .where(
                        res.run_id == run_id, res.case_name == case, round_results_table.c.round_index == round_index
                    )
                ).scalar()
        return found if isinstance(found, Mapping) else {}

    def _read_all(self, query: Any) -> list[Any]:
        with self._read() as connection:
            return list(connection.execute(query))


def _review(row: Any) -> Review:
    return Review(
        row.id, row.run_id, row.case_name, row.path, row.round_index, row.reviewer, bool(row.agree), row.label,
        row.note, row.judge_name, row.judge_status, row.judge_key, row.judge_identity, as_utc(row.created_at),
    )  # fmt: skip
