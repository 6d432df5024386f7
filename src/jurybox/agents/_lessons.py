"""The lessons of the case being run, for the agent under test.

The runner hands each case the stored lessons most relevant to it (see
``jurybox.store``'s ``store.lessons.for_run``) and runs the case's conversation inside
``case_lessons(...)``. An agent reads them with ``current_lessons()`` from any
code the case's conversation runs (a Python agent's factory and ``respond``,
sync or async); a Python agent whose factory or ``respond`` takes a ``lessons``
keyword is given them as a list of ``{"id", "text", "scope"}`` dicts. A context
variable, not a new ``respond`` argument: agents written before lessons existed
keep their signature, and concurrent cases never see each other's lessons.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from typing import Any

from jurybox.core import LessonNote

_LESSONS: ContextVar[tuple[LessonNote, ...]] = ContextVar("jurybox_case_lessons", default=())


def current_lessons() -> tuple[LessonNote, ...]:
    """The lessons of the case whose conversation is running (empty outside a run, or with none)."""
    return _LESSONS.get()


def lessons_payload(lessons: Sequence[LessonNote] | None = None) -> list[dict[str, Any]]:
    """The lessons as plain dicts (``id``, ``text``, ``scope``): what a Python agent's ``lessons=`` receives."""
    return [lesson.to_dict() for lesson in (current_lessons() if lessons is None else lessons)]


def lessons_system_message(lessons: Sequence[LessonNote]) -> str | None:
    """The system message a chat endpoint configured with ``lessons: system`` is sent, or None with no lessons."""
    if not lessons:
        return None
    lines = "\n".join(f"- {lesson.text}" for lesson in lessons)
    return f"Lessons from earlier test runs of this application (notes about past failures):\n{lines}"


@contextlib.contextmanager
def case_lessons(lessons: Sequence[LessonNote]) -> Iterator[None]:
    """Make ``lessons`` the current case's for the code run inside (the runner wraps a case's conversation)."""
    token = _LESSONS.set(tuple(lessons))
    try:
        yield
    finally:
        _LESSONS.reset(token)
