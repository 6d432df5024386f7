"""Lessons: the regressions a store has found (and notes people add), kept, searched and fed to later runs.

A lesson is written when a completed run regresses (see ``_baselines``) or added
by hand (``jurybox lessons add``). ``for_run`` closes the loop: before a
run starts, the runner asks once for every case's most relevant lessons, which
its agent and its opted-in LLM judges then see. Retired lessons stay, for history.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, or_, select, update

from jurybox.core import LessonNote
from jurybox.store._cases import now, suite_id
from jurybox.store._errors import StoreError
from jurybox.store._json import db_jsonable
from jurybox.store._models import Lesson, as_utc
from jurybox.store._repository import Repository, dialect_insert
from jurybox.store._schema import lessons_table, runs_table, suites_table

LESSON_POOL = 200
"""Newest active lessons of a suite a run ranks its cases' lessons from (one query per run)."""
MANUAL = "manual"
"""The ``origin`` (and ``metric``) of a lesson a person added."""
_SCOPES = ("case", "judge", "suite")

if TYPE_CHECKING:
    from jurybox.store._store import Store


class LessonRepository(Repository):
    """The ``lessons`` table (``store.lessons``): one row per run and regressed metric, and people's notes."""

    def add(
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

    def find(
        self,
        suite: str | None = None,
        *,
        topic: str | None = None,
        limit: int | None = 20,
        manual: bool = False,
        retired: bool = False,
    ) -> list[Lesson]:
        """Lessons, newest first; ``topic`` matches a metric (tier) name or any word of the lesson text.

        Only regressions' active lessons unless ``manual`` (people's too) or ``retired`` (retired ones too).
        """
        query = (
            select(lessons_table, suites_table.c.name)
            .join(suites_table, suites_table.c.id == lessons_table.c.suite_id)
            .order_by(lessons_table.c.created_at.desc(), lessons_table.c.id.desc())
        )
        if not manual:
            query = query.where(lessons_table.c.run_id.is_not(None))
        if not retired:
            query = query.where(lessons_table.c.retired_at.is_(None))
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
            return [_lesson(row) for row in connection.execute(query)]

    def add_manual(self, suite: str, text: str, *, case: str | None = None, judge: str | None = None) -> int:
        """Store a lesson a person wrote about a suite (a case, a judge); returns its id."""
        if not text.strip():
            raise StoreError("a lesson needs some text")
        with self._write() as connection:
            suite_key = suite_id(connection, suite)
            statement = lessons_table.insert().values(
                suite_id=suite_key,
                run_id=None,
                metric=MANUAL,
                baseline=0.0,
                current=0.0,
                drop=0.0,
                threshold=0.0,
                failing=[],
                text=db_jsonable(text),
                created_at=now(),
                case_name=case,
                judge=judge,
                origin=MANUAL,
            )
            key = connection.execute(statement).inserted_primary_key
            assert key is not None
            return int(key[0])

    def for_run(
        self, suite: str, cases: Mapping[str, Collection[str]], *, limit: int, max_chars: int
    ) -> dict[str, list[LessonNote]]:
        """Each case's lessons (case -> its judges' names and tiers), most relevant first, in one query.

        What the runner asks once before a run starts (``jurybox.engine``'s lesson feed): the
        suite's newest ``LESSON_POOL`` active lessons, people's included, ranked per case.
        """
        found = self.find(suite, limit=LESSON_POOL, manual=True)
        return lessons_for_cases(found, cases, limit=limit, max_chars=max_chars)

    def retire(self, lesson_id: int, reason: str = "") -> bool:
        """Stop handing a lesson to runs; it stays in the store with when and why. False if unknown or retired."""
        with self._write() as connection:
            done = connection.execute(
                update(lessons_table)
                .where(lessons_table.c.id == lesson_id, lessons_table.c.retired_at.is_(None))
                .values(retired_at=now(), retired_reason=reason or None)
            )
            return bool(done.rowcount)


def _lesson(row: Any) -> Lesson:
    return Lesson(
        id=row.id,
        suite=row.name,
        run_id=row.run_id or "",
        metric=row.metric,
        baseline=row.baseline,
        current=row.current,
        drop=row.drop,
        threshold=row.threshold,
        failing=list(row.failing or []),
        text=row.text,
        created_at=as_utc(row.created_at),
        case=row.case_name,
        judge=row.judge,
        origin=row.origin,
        retired_at=as_utc(row.retired_at) if row.retired_at is not None else None,
        retired_reason=row.retired_reason,
    )


def rank_lessons(
    lessons: Iterable[Lesson], case: str, names: Collection[str], *, limit: int, max_chars: int
) -> list[LessonNote]:
    """The lessons one case is handed: most relevant first, at most ``limit`` and ``max_chars`` characters.

    Relevance: about this case (its ``case``, or a regression that lists it as failing),
    then about one of its judges or tiers (``names``: judge keys, labels and tiers), then
    the suite's; newest first within each. A lesson about another case, a judge the
    case does not have, or a tier's regression when the case has no judge in that tier
    is not this case's. A lesson longer than what is left of
    ``max_chars`` is cut with a note (or, with under 80 characters left, not given).
    """
    ranked: list[tuple[int, Lesson]] = []
    for lesson in lessons:  # newest first already; the sort below is stable
        if lesson.case is not None and lesson.case != case:
            continue
        if lesson.judge is not None and lesson.judge not in names:
            continue
        about_case = lesson.case == case or case in lesson.failing_cases
        if lesson.run_id and lesson.metric != "overall" and lesson.metric not in names and not about_case:
            continue  # a tier's regression is about the cases that have that tier
        if about_case:
            scope = 0
        elif lesson.judge is not None or lesson.metric in names:
            scope = 1
        else:
            scope = 2
        ranked.append((scope, lesson))
    ranked.sort(key=lambda item: item[0])
    notes: list[LessonNote] = []
    left = max_chars
    for scope, lesson in ranked[:limit]:
        text = lesson.text
        if len(text) > left:
            if left < 80:
                break
            text = text[: left - 40] + f" [... {len(lesson.text) - left + 40} more characters]"
        notes.append(LessonNote(lesson.id, text, _SCOPES[scope]))
        left -= len(text)
    return notes


def lessons_for_cases(
    found: Sequence[Lesson], cases: Mapping[str, Collection[str]], *, limit: int, max_chars: int
) -> dict[str, list[LessonNote]]:
    """Each case's lessons (``rank_lessons``) from one suite's active lessons; cases with none are left out."""
    if limit < 1 or max_chars < 1:
        raise ValueError(f"lesson limits must be at least 1, got limit={limit}, max_chars={max_chars}")
    handed: dict[str, list[LessonNote]] = {}
    if not found:
        return handed
    for case, names in cases.items():
        notes = rank_lessons(found, case, names, limit=limit, max_chars=max_chars)
        if notes:
            handed[case] = notes
    return handed


def lessons_for(store: Store, suite: str | None = None, topic: str | None = None, limit: int = 5) -> str:
    """The latest lessons as plain text for a prompt template variable, newest first.

    For your own prompt or script; the runner hands each case its lessons itself
    (``Context.lessons``, see ``LessonRepository.for_run``). ``topic`` keeps lessons whose metric (tier) is
    the topic or whose text mentions it (a case name, a tag, a word of a
    reason). Returns ``""`` when there is nothing to learn from.
    """
    if limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")
    lessons = store.lessons.find(suite, topic=topic, limit=limit, manual=True)
    return "\n\n".join(lesson.text for lesson in lessons)
