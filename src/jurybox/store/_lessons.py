"""Lessons: the regressions a store has found, kept, searched and turned into prompt text.

A lesson is written when a completed run regresses (see ``_baselines``);
``lessons_for`` closes the loop from a regression back to a judge or agent prompt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import func, or_, select

from jurybox.store._cases import now
from jurybox.store._engine import StoreError
from jurybox.store._models import Lesson, as_utc
from jurybox.store._repository import Repository
from jurybox.store._rows import dialect_insert
from jurybox.store._schema import lessons_table, runs_table, suites_table
from jurybox.store._serialize import db_jsonable

if TYPE_CHECKING:
    from jurybox.store._store import Store


class LessonRepository(Repository):
    """The ``lessons`` table: one row per run and regressed metric."""

    def add_lesson(
        self,
        run_id: str,
        *,
        metric: str,
        baseline: float,
        current: float,
        drop: float,
        threshold: float,
        failing: list[dict[str, Any]],
        text: str,
    ) -> bool:
        """Store a lesson; False when the run already has one for this metric."""
        with self._write() as connection:
            suite_key = connection.execute(
                select(runs_table.c.suite_id).where(runs_table.c.id == run_id)
            ).scalar_one_or_none()
            if suite_key is None:
                raise StoreError(f"unknown run {run_id!r} in store {self.url}")
            statement = (
                dialect_insert(connection, lessons_table)
                .values(
                    suite_id=suite_key,
                    run_id=run_id,
                    metric=metric,
                    baseline=baseline,
                    current=current,
                    drop=drop,
                    threshold=threshold,
                    failing=db_jsonable(failing),
                    text=db_jsonable(text),
                    created_at=now(),
                )
                .on_conflict_do_nothing(index_elements=["run_id", "metric"])
                .returning(lessons_table.c.id)
            )
            return connection.execute(statement).scalar_one_or_none() is not None

    def lessons(self, suite: str | None = None, *, topic: str | None = None, limit: int | None = 20) -> list[Lesson]:
        """Lessons, newest first; ``topic`` matches a metric (tier) name or any word of the lesson text."""
        query = (
            select(lessons_table, suites_table.c.name)
            .join(suites_table, suites_table.c.id == lessons_table.c.suite_id)
            .order_by(lessons_table.c.created_at.desc(), lessons_table.c.id.desc())
        )
        if suite is not None:
            query = query.where(suites_table.c.name == suite)
        if topic:
            needle = topic.lower()
            query = query.where(
                or_(lessons_table.c.metric == topic, func.lower(lessons_table.c.text).contains(needle, autoescape=True))
            )
        if limit is not None:
            query = query.limit(limit)
        with self._read() as connection:
            return [
                Lesson(
                    id=row.id,
                    suite=row.name,
                    run_id=row.run_id,
                    metric=row.metric,
                    baseline=row.baseline,
                    current=row.current,
                    drop=row.drop,
                    threshold=row.threshold,
                    failing=list(row.failing or []),
                    text=row.text,
                    created_at=as_utc(row.created_at),
                )
                for row in connection.execute(query)
            ]


def lessons_for(store: Store, suite: str | None = None, topic: str | None = None, limit: int = 5) -> str:
    """The latest lessons as plain text for a prompt template variable, newest first.

    The runner puts this in ``Context.metadata["lessons"]`` so a template can
    say ``{metadata.lessons}``. ``topic`` keeps lessons whose metric (tier) is
    the topic or whose text mentions it (a case name, a tag, a word of a
    reason). Returns ``""`` when there is nothing to learn from.
    """
    if limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")
    lessons = store.lessons(suite, topic=topic, limit=limit)
    return "\n\n".join(lesson.text for lesson in lessons)
