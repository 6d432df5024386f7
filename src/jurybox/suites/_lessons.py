"""Stored lessons for a run's cases: asked for once, before the cases start, and handed out by case name.

The runner reaches lessons only through its ``RunStore`` (``lessons_for_run``),
so ``suites`` never imports the store. One call per run, not one per case: the
per-case cost of a run without lessons is one dictionary truthiness check.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from typing import Any

from jurybox.core import LessonNote
from jurybox.suites._case import Case

LESSON_LIMIT = 5
"""Lessons a case is handed at most, by default (``RunOptions.lessons``)."""
LESSON_CHARS = 2000
"""Characters of lesson text a case is handed at most, by default (``RunOptions.lesson_chars``)."""


def lesson_names(case: Case) -> set[str]:
    """What a lesson's ``judge`` may name to be about this case: its judges' keys and labels, and its tiers."""
    names: set[str] = set()
    for item in case.judges:
        names.update((item.key, item.label, item.tier, item.key.rsplit(".", 1)[-1]))
    return names


class _LessonNames(Mapping[str, set[str]]):
    """Case name -> ``lesson_names``, each worked out when asked: a store with no lesson asks for none."""

    def __init__(self, cases: Sequence[Case]) -> None:
        self._cases = {case.name: case for case in cases}

    def __getitem__(self, name: str) -> set[str]:
        return lesson_names(self._cases[name])

    def __iter__(self) -> Iterator[str]:
        return iter(self._cases)

    def __len__(self) -> int:
        return len(self._cases)


async def fetch_lessons(
    store: Any,
    call: Callable[..., Awaitable[Any]],
    suite: str,
    cases: Sequence[Case],
    *,
    limit: int,
    max_chars: int,
) -> Mapping[str, tuple[LessonNote, ...]]:
    """Each case's lessons, from one ``store.lessons_for_run`` call run through ``call`` (the store thread).

    A store without lessons (a ``RunStore`` of your own written before them), ``limit=0``
    or no case gives no lessons.
    """
    query = getattr(store, "lessons_for_run", None)
    if not callable(query) or limit < 1 or not cases:
        return {}
    found = await call(query, suite, _LessonNames(cases), limit=limit, max_chars=max_chars)
    return {name: tuple(LessonNote.coerce(note) for note in notes) for name, notes in found.items() if notes}
