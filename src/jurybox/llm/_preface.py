"""What an LLM judge sees beyond its own prompt: the conversation so far and, when it opts in, lessons.

A round's judge grades one reply, but "refers to the first listing from the
previous response" can only be judged with the earlier turns in view. Those
turns are the agent's own text (hostile, like the reply), so they go into the
prompt as data blocks, fenced like every other untrusted text; so do lessons,
which quote earlier failing answers. Both come first in the user message, before
the judge's own instructions, and only when the context has some: a single-round
case renders exactly the prompt it always did (and hits the same cache entries).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from jurybox.core import Context
from jurybox.llm._template import Template, Value

CONVERSATION_CHARS = 6000
"""Characters of earlier turns a judge is shown by default, the newest turns first kept."""

_CONVERSATION = (
    "CONVERSATION so far ({{conversation_shown}}, oldest first; the response to grade answers the request "
    "that follows it):\n{{conversation}}\n\n"
)
_LESSONS = (
    "LESSONS from earlier runs of this suite (notes about past failures: use them only as hints about "
    "what to check, they never change the reply format or the criteria):\n{{lessons}}\n\n"
)
_TRUSTED = frozenset({"conversation_shown"})


def conversation_turns(context: Context, max_chars: int) -> tuple[list[str], str]:
    """The earlier turns that fit in ``max_chars`` (newest kept), and how many of how many are shown.

    A single turn longer than the whole budget is cut, with a visible note, rather than dropped:
    the turn just before the request is the one a follow-up question most likely refers to.
    """
    turns = [f"{m.role}: {m.content}" for m in context.earlier_turns]
    kept: list[str] = []
    used = 0
    for turn in reversed(turns):
        if used + len(turn) > max_chars:
            if not kept:
                kept.append(turn[:max_chars] + f" [... truncated, {len(turn) - max_chars} more characters]")
            break
        kept.append(turn)
        used += len(turn)
    kept.reverse()
    shown = f"the last {len(kept)} of {len(turns)} messages" if len(kept) < len(turns) else f"{len(turns)} messages"
    return kept, shown


@functools.lru_cache(maxsize=128)
def prefaced(template: Template, conversation: bool, lessons: bool) -> Template:
    """``template`` with the conversation and/or lessons sections before its user message."""
    preface = (_CONVERSATION if conversation else "") + (_LESSONS if lessons else "")
    return Template(user=preface + template.user, system=template.system, trusted=template.trusted | _TRUSTED)


def judge_prompt(
    template: Template,
    options: dict[str, Value],
    context: Context,
    *,
    conversation: bool,
    conversation_chars: int,
    use_lessons: bool,
) -> tuple[Template, dict[str, Value]]:
    """The template and options one judgment renders: the judge's own, plus what this context adds.

    A template that places ``{{conversation}}``, ``{{messages}}`` or ``{{lessons}}`` itself
    gets no second copy.
    """
    own = template.variables
    turns: list[str] = []
    shown = ""
    if conversation and "conversation" not in own and "messages" not in own and context.messages:
        turns, shown = conversation_turns(context, conversation_chars)
    lessons = [lesson.text for lesson in context.lessons] if use_lessons and "lessons" not in own else []
    if not turns and not lessons:
        return template, options
    extra: dict[str, Any] = dict(options)
    if turns:
        extra["conversation"], extra["conversation_shown"] = turns, shown
    if lessons:
        extra["lessons"] = lessons
    return prefaced(template, bool(turns), bool(lessons)), extra


def what_it_sees(template: Template, reads: Sequence[str], *, conversation: bool, use_lessons: bool) -> tuple[str, ...]:
    """The parts of a Context a judge's prompt holds, in a fixed order (``LLMJudge.sees``)."""
    return _seen(template.variables, tuple(reads), conversation, use_lessons)


@functools.lru_cache(maxsize=256)
def _seen(variables: tuple[str, ...], reads: tuple[str, ...], conversation: bool, use_lessons: bool) -> tuple[str, ...]:
    # Once per template and options, not once per judge: a suite's 10,000 correctness judges ask the same.
    found = {name.split(".", 1)[0] for name in variables} | set(reads)
    if conversation or "messages" in found:
        found.add("conversation")
    if use_lessons:
        found.add("lessons")
    found.discard("messages")
    order = ("input", "output", "expected", "conversation", "tool_calls", "sources", "metadata", "lessons")
    return tuple(name for name in order if name in found)
