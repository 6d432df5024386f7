"""The case's lessons reach the agent under test: Python agents that ask for them, and chat endpoints configured to."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path
from typing import Any

import pytest

from jurybox.agents import (
    RoundSpec,
    Target,
    TargetConfigError,
    case_lessons,
    current_lessons,
    make_target,
    run_conversation,
)
from jurybox.core import LessonNote
from jurybox.stubs import StubReply, StubServer

LESSON = LessonNote(4, "Quote the 30-day refund window.", "case")
_modules = itertools.count()


def python_target(obj: object, **spec: Any) -> Target:
    """A Python agent as a suite would name it: ``module:attribute`` (the object is put in a module of its own)."""
    name = f"lesson_agents_{next(_modules)}"
    module = type(sys)(name)
    module.agent = obj  # type: ignore[attr-defined]
    sys.modules[name] = module
    return make_target({"python": f"{name}:agent", **spec}, base_dir=Path.cwd())


class Remembering:
    def __init__(self, lessons: list[dict[str, Any]] | None = None) -> None:
        self.lessons = lessons

    def respond(self, message: str, session_id: str) -> str:
        # A sync agent runs on its own thread: the factory's keyword is how it gets them there.
        return f"factory gave {self.lessons}; thread sees {list(current_lessons())}"


async def test_a_factory_that_takes_lessons_gets_them_and_one_that_does_not_is_called_as_before() -> None:
    with case_lessons([LESSON]):
        (asked,) = await run_conversation(python_target(Remembering), [RoundSpec("hi")], session_id="s1")
        (plain,) = await run_conversation(python_target(_Plain, kind="factory"), [RoundSpec("hi")], session_id="s2")
    assert "factory gave [{'id': 4, 'text': 'Quote the 30-day refund window.', 'scope': 'case'}]" in asked.reply.text
    assert plain.reply.text == "plain"
    (outside,) = await run_conversation(python_target(Remembering), [RoundSpec("hi")], session_id="s3")
    assert "factory gave None" in outside.reply.text  # no lessons outside a case's scope


class _Plain:
    def respond(self, message: str, session_id: str) -> str:
        return "plain"


async def test_respond_functions_take_lessons_by_keyword_sync_or_async() -> None:
    def sync_respond(message: str, session_id: str, *, lessons: list[dict[str, Any]] | None = None) -> str:
        return f"sync {[lesson['id'] for lesson in lessons or []]}"

    async def async_respond(message: str, session_id: str, lessons: list[dict[str, Any]] | None = None) -> str:
        return f"async {[lesson['id'] for lesson in lessons or []]} {[n.id for n in current_lessons()]}"

    with case_lessons([LESSON]):
        (one,) = await run_conversation(python_target(sync_respond), [RoundSpec("hi")], session_id="a")
        (two,) = await run_conversation(python_target(async_respond), [RoundSpec("hi")], session_id="b")
    assert one.reply.text == "sync [4]"
    assert two.reply.text == "async [4] [4]"


async def test_a_chat_endpoint_gets_lessons_only_when_configured() -> None:
    with StubServer("openai", reply=lambda body: StubReply(text="ok")) as stub:
        spec = {"model": "agent-model", "base_url": stub.base_url, "system": "You handle refunds."}
        quiet = make_target({"openai": spec})
        told = make_target({"openai": {**spec, "lessons": "system"}})
        with case_lessons([LESSON]):
            await run_conversation(quiet, [RoundSpec("refund?")], session_id="q")
            await run_conversation(told, [RoundSpec("refund?"), RoundSpec("and then?")], session_id="t")
        quiet_sent, first, second = (request.json["messages"] for request in stub.requests)
    assert [m["role"] for m in quiet_sent] == ["system", "user"]
    assert [m["role"] for m in first] == ["system", "system", "user"]
    assert "Quote the 30-day refund window." in first[1]["content"]
    assert [m["role"] for m in second] == ["system", "system", "user", "assistant", "user"]  # said once, kept


def test_lessons_on_a_chat_endpoint_is_checked() -> None:
    with pytest.raises(TargetConfigError, match=r"agent\.openai\.lessons"):
        make_target({"openai": {"model": "m", "base_url": "http://127.0.0.1:9/v1", "lessons": "user"}})
    with pytest.raises(TargetConfigError, match="only for 'api: chat'"):
        make_target(
            {"openai": {"model": "m", "base_url": "http://127.0.0.1:9/v1", "api": "responses", "lessons": "system"}}
        )
