"""Lessons as prompt text: the loop from a regression back to a judge or agent prompt."""

from __future__ import annotations

from jurybox.store._store import Store


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
