"""``jurybox lessons list | add | retire``: what earlier runs taught, which later runs are handed.

``jurybox lessons`` with no sub-command lists, as it always did. Retiring keeps
the lesson (with when and why) so the history of what was taught stays; a retired
lesson is no longer handed to runs.
"""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.text import Text

from jurybox._cli.common import StoreOption, console, opened_store
from jurybox.report import terminal_safe
from jurybox.store import Lesson

lessons_app = typer.Typer(
    help="Lessons from regressions and from people: list, add, retire. Runs hand them to agents and judges.",
    invoke_without_command=True,
)

SuiteFilter = Annotated[str | None, typer.Option("--suite", help="Only lessons of this suite.")]
TopicFilter = Annotated[str | None, typer.Option("--topic", help="Only lessons about this tier, case or word.")]
LimitOption = Annotated[int, typer.Option("--limit", help="How many lessons, newest first.", min=1)]


@lessons_app.callback()
def lessons_default(
    ctx: typer.Context,
    suite: SuiteFilter = None,
    topic: TopicFilter = None,
    limit: LimitOption = 10,
    store_url: StoreOption = None,
) -> None:
    """List (the default), add or retire lessons."""
    if ctx.invoked_subcommand is None:
        _list(suite, topic, limit, store_url, retired=False, as_json=False)


@lessons_app.command("list")
def list_lessons(
    suite: SuiteFilter = None,
    topic: TopicFilter = None,
    limit: LimitOption = 10,
    retired: Annotated[bool, typer.Option("--retired", help="Include retired lessons (marked as such).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON array, for scripts.")] = False,
    store_url: StoreOption = None,
) -> None:
    """List lessons newest first: id, suite, what it is about, and its text."""
    _list(suite, topic, limit, store_url, retired=retired, as_json=as_json)


@lessons_app.command("add")
def add_lesson(
    suite: Annotated[str, typer.Argument(help="The suite the lesson is for.")],
    text: Annotated[str, typer.Argument(help="What the lesson says (handed to the agent and opted-in judges).")],
    case: Annotated[str | None, typer.Option("--case", help="Only for this case.")] = None,
    judge: Annotated[
        str | None, typer.Option("--judge", help="Only for cases with this judge (key, name or tier).")
    ] = None,
    store_url: StoreOption = None,
) -> None:
    """Add a lesson of your own; later runs of the suite hand it to their cases."""
    if not text.strip():
        console().print("[bold red]error:[/] the lesson text is empty")
        raise typer.Exit(2)
    with opened_store(store_url, writes=True) as store:
        lesson_id = store.lessons.add_manual(suite, text, case=case, judge=judge)
    console().print(f"Added lesson {lesson_id} to {terminal_safe(suite)}.", markup=False)


@lessons_app.command("retire")
def retire_lesson(
    lesson_id: Annotated[int, typer.Argument(help="The lesson's id (from `jurybox lessons list`).")],
    reason: Annotated[str, typer.Option("--reason", help="Why it no longer applies (kept with it).")] = "",
    store_url: StoreOption = None,
) -> None:
    """Stop handing a lesson to runs. It is kept, with when and why, for history."""
    with opened_store(store_url, writes=True) as store:
        retired = store.lessons.retire(lesson_id, reason)
    if not retired:
        console().print(f"[bold red]error:[/] no active lesson {lesson_id} (unknown, or retired already)")
        raise typer.Exit(2)
    console().print(f"Retired lesson {lesson_id}; `jurybox lessons list --retired` still shows it.")


def _list(
    suite: str | None, topic: str | None, limit: int, store_url: str | None, *, retired: bool, as_json: bool
) -> None:
    with opened_store(store_url) as store:
        found = store.lessons.find(suite, topic=topic, limit=limit, manual=True, retired=retired)
    if as_json:
        typer.echo(json.dumps([_lesson_data(lesson) for lesson in found], ensure_ascii=False, indent=1))
        return
    out = console()
    if not found:
        out.print("No lessons yet: no regression has been found and none was added.")
        return
    for lesson in found:
        out.rule(Text(terminal_safe(_heading(lesson)), style="bold"))
        out.print(Text(terminal_safe(lesson.text)))


def _heading(lesson: Lesson) -> str:
    when = f"{lesson.created_at:%Y-%m-%d %H:%M}" if lesson.created_at else ""
    about = [f"case {lesson.case}"] if lesson.case else []
    about += [f"judge {lesson.judge}"] if lesson.judge else []
    source = f"run {lesson.run_id}" if lesson.run_id else "added by hand"
    parts = [f"#{lesson.id}", lesson.suite, lesson.metric if lesson.run_id else "", *about, source, when]
    if lesson.retired_at is not None:
        parts.append(
            f"retired {lesson.retired_at:%Y-%m-%d}" + (f": {lesson.retired_reason}" if lesson.retired_reason else "")
        )
    return " · ".join(part for part in parts if part)


def _lesson_data(lesson: Lesson) -> dict[str, object]:
    return {
        "id": lesson.id,
        "suite": lesson.suite,
        "origin": lesson.origin,
        "run_id": lesson.run_id or None,
        "metric": lesson.metric,
        "case": lesson.case,
        "judge": lesson.judge,
        "text": lesson.text,
        "created_at": lesson.created_at.isoformat() if lesson.created_at else None,
        "retired_at": lesson.retired_at.isoformat() if lesson.retired_at else None,
        "retired_reason": lesson.retired_reason,
    }


def register(app: typer.Typer) -> None:
    """Add ``jurybox lessons`` to the ``jurybox`` app."""
    app.add_typer(lessons_app, name="lessons")
