"""Stored lessons for a run's cases: asked for once, before the cases start, and handed out by case name.

The runner reaches lessons only through its ``RunStore`` (``store.lessons.for_run``),
so the engine never imports the store. One call per run, not one per case: the
per-case cost of a run without lessons is one dictionary truthiness check.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, ItemsView, Iterator, Mapping, Sequence
from typing import Any

from jurybox.core import LessonNote
from jurybox.suites import Case

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
        # Not a dict of the cases: a suite with a cases_file builds each case as it is reached, and keeps none.
        self._cases = cases
        self._by_name: dict[str, Case] | None = None

    def __getitem__(self, name: str) -> set[str]:
        if self._by_name is None:
            self._by_name = {case.name: case for case in self._cases}
        return lesson_names(self._by_name[name])

    def __iter__(self) -> Iterator[str]:
        return (case.name for case in self._cases)

    def __len__(self) -> int:
        return len(self._cases)

    def items(self) -> ItemsView[str, set[str]]:
        """(case, its names) in one pass over the cases, each built once (``lessons_for_cases`` reads only this)."""
        return _NamesOfCases(self)


class _NamesOfCases(ItemsView[str, set[str]]):
    def __init__(self, names: _LessonNames) -> None:
        super().__init__(names)
        self._cases = names._cases

    def __iter__(self) -> Iterator[tuple[str, set[str]]]:
        for case in self._cases:
            yield case.name, lesson_names(case)


async def fetch_lessons(
    store: Any,
    call: Callable[..., Awaitable[Any]],
    suite: str,
    cases: Sequence[Case],
    *,
    limit: int,
    max_chars: int,
) -> Mapping[str, tuple[LessonNote, ...]]:
    """Each case's lessons, from one ``store.lessons.for_run`` call run through ``call`` (the store thread).

    A store without lessons (a ``RunStore`` of your own written before them), ``limit=0``
    or no case gives no lessons.
    """
    query = getattr(getattr(store, "lessons", None), "for_run", None)
    if not callable(query) or limit < 1 or not cases:
        return {}
    found = await call(query, suite, _LessonNames(cases), limit=limit, max_chars=max_chars)
    return {name: tuple(LessonNote.coerce(note) for note in notes) for name, notes in found.items() if notes}
