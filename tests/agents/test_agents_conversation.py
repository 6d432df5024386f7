"""run_conversation with Python agents: rounds, revival, follow-ups and failing agents."""

from __future__ import annotations

from pathlib import Path

import pytest

from jurybox.agents import (
    AgentError,
    AgentReply,
    AgentTimeout,
    RoundSpec,
    TargetConfigError,
    looks_like_clarification,
    make_target,
    run_conversation,
)
from jurybox.core import Context

HERE = Path(__file__).parent


def target(reference: str, **extra: object):  # type: ignore[no-untyped-def]
    return make_target({"python": f"agents_under_test:{reference}", **extra}, base_dir=HERE)


REMEMBER = [RoundSpec("My name is Ada."), RoundSpec("What did I say first?")]


async def test_rounds_share_one_session_and_contexts_carry_the_conversation(tmp_path: Path) -> None:
    agent = target("make_persistent", options={"folder": str(tmp_path)})
    outcomes = await run_conversation(agent, REMEMBER, session_id="s1")
    assert [o.index for o in outcomes] == [0, 1]
    first, second = outcomes
    assert first.context.input == "My name is Ada."
    assert first.context.output == "Noted: My name is Ada."
    assert first.context.sources == ("notes",)
    assert first.context.metadata["usage"] == {"input_tokens": 3, "output_tokens": 2}
    assert first.context.metadata["tokens"] == 5
    assert second.context.output == "You first said: My name is Ada."
    assert [(m.role, m.content) for m in second.context.messages] == [
        ("user", "My name is Ada."),
        ("assistant", "Noted: My name is Ada."),
        ("user", "What did I say first?"),
        ("assistant", "You first said: My name is Ada."),
    ]
    assert second.context.tool_names == ["load_history"]
    assert second.context.tool_calls[0].arguments == {"session": "s1"}
    assert second.context.duration is not None and second.context.started_at is not None
    assert second.context.metadata["session_id"] == "s1"
    await agent.aclose()


async def test_revival_fails_a_forgetful_agent_and_passes_a_persisting_one(tmp_path: Path) -> None:
    forgetful = target("ForgetfulAgent")
    kept = await run_conversation(forgetful, REMEMBER, session_id="a")
    assert kept[1].context.output == "You first said: My name is Ada."  # same object, no revival

    closed = __import__("agents_under_test").ForgetfulAgent.closed
    before = len(closed)
    revived = await run_conversation(forgetful, REMEMBER, session_id="b", revive_between_rounds=True)
    assert revived[1].context.output == "I don't know what you said before."
    assert revived[1].context.metadata["revived"] is True
    assert len(closed) - before == 2  # closed for the revival, and again when the conversation ended

    persistent = target("make_persistent", options={"folder": str(tmp_path)})
    outcomes = await run_conversation(persistent, REMEMBER, session_id="c", revive_between_rounds=True)
    assert outcomes[1].context.output == "You first said: My name is Ada."
    await forgetful.aclose()
    await persistent.aclose()


async def test_revival_of_a_function_agent_calls_its_close_session() -> None:
    kept = await run_conversation(target("noting"), REMEMBER, session_id="n1", revive_between_rounds=True)
    assert kept[1].context.output == "You first said: My name is Ada."  # nothing told it to forget
    agent = target("noting", close_session="agents_under_test:forget")
    revived = await run_conversation(agent, REMEMBER, session_id="n2", revive_between_rounds=True)
    assert revived[1].context.output == "I don't know what you said before."


async def test_sessions_are_released_when_the_conversation_ends() -> None:
    agent = target("ForgetfulAgent")
    await run_conversation(agent, REMEMBER, session_id="r1")
    assert "sessions=0" in repr(agent)
    await run_conversation(agent, REMEMBER, session_id="r2", close_when_done=False)
    assert "sessions=1" in repr(agent)
    await agent.aclose()
    assert "sessions=0" in repr(agent)


async def test_scripted_follow_up_answers_the_agents_question() -> None:
    agent = target("clarifying")
    rounds = [RoundSpec("What's the revenue?", follow_up_replies=("June 2026",))]
    (outcome,) = await run_conversation(agent, rounds, session_id="f1")
    assert outcome.follow_ups == (("Which month would you like the revenue for?", "June 2026"),)
    assert outcome.context.output == "Revenue for June 2026 was $4,200."
    assert outcome.context.tool_names == ["get_revenue"]
    assert [m.role for m in outcome.context.messages] == ["user", "assistant", "user", "assistant"]
    assert outcome.context.metadata["follow_ups"] == [
        {"question": "Which month would you like the revenue for?", "reply": "June 2026"}
    ]
    assert outcome.context.metadata["unanswered_question"] is False


async def test_generated_follow_up_is_used_when_the_script_runs_out() -> None:
    seen: list[Context] = []

    async def write_reply(question: str, context: Context) -> str:
        seen.append(context)
        return "May 2026"

    async def detector(context: Context) -> bool:
        return context.output.endswith("?")

    (outcome,) = await run_conversation(
        target("clarifying"),
        [RoundSpec("What's the revenue?")],
        session_id="f2",
        max_follow_ups=2,
        is_clarification=detector,
        follow_up=write_reply,
    )
    assert outcome.follow_ups == (("Which month would you like the revenue for?", "May 2026"),)
    assert outcome.context.output == "Revenue for May 2026 was $4,200."
    assert seen[0].output == "Which month would you like the revenue for?"


async def test_follow_ups_stop_at_the_bound_and_say_the_question_was_unanswered() -> None:
    calls = 0

    async def write_reply(question: str, context: Context) -> str:
        nonlocal calls
        calls += 1
        return "the first one"

    (outcome,) = await run_conversation(
        target("always_asks"),
        [RoundSpec("Occupancy?")],
        session_id="f3",
        max_follow_ups=2,
        follow_up=write_reply,
    )
    assert calls == 2
    assert len(outcome.follow_ups) == 2
    assert outcome.context.metadata["agent_calls"] == 3
    assert outcome.context.metadata["unanswered_question"] is True


async def test_no_follow_ups_without_a_bound_or_script() -> None:
    (outcome,) = await run_conversation(target("clarifying"), [RoundSpec("What's the revenue?")], session_id="f4")
    assert outcome.follow_ups == ()
    assert outcome.context.output == "Which month would you like the revenue for?"


async def test_a_crashing_agent_raises_agent_error_with_the_reason() -> None:
    with pytest.raises(AgentError, match=r"RuntimeError: database is down \(round 1\)") as caught:
        await run_conversation(target("crashes"), [RoundSpec("hi")], session_id="x")
    assert caught.value.round_index == 0
    assert caught.value.outcomes == ()


async def test_a_hanging_agent_times_out() -> None:
    with pytest.raises(AgentTimeout, match=r"did not answer within 0.2s \(round 1\)"):
        await run_conversation(target("hangs"), [RoundSpec("hi")], session_id="h", timeout=0.2)


async def test_a_timeout_in_a_later_round_keeps_the_finished_rounds() -> None:
    rounds = [RoundSpec("hi"), RoundSpec("again")]
    with pytest.raises(AgentTimeout, match=r"\(round 2\)") as caught:
        await run_conversation(_FirstThenHang(), rounds, session_id="h2", timeout=0.2)
    assert caught.value.round_index == 1
    assert [o.context.output for o in caught.value.outcomes] == ["first"]


async def test_a_sync_agent_hanging_in_its_thread_times_out_and_closes() -> None:
    import agents_under_test

    agent = target("hangs_in_thread")
    try:
        with pytest.raises(AgentTimeout):
            await run_conversation(agent, [RoundSpec("hi")], session_id="t", timeout=0.2)
    finally:
        agents_under_test.RELEASE_HANGING.set()
        await agent.aclose()


@pytest.mark.parametrize(
    ("reference", "reason"),
    [
        ("returns_number", r"returned int 42; expected a string or a dict with 'reply'.* \(round 1\)"),
        ("returns_wrong_dict", r"returned a dict without 'reply' \(keys: \['text'\]\)"),
        ("returns_none_reply", r"returned 'reply' of type NoneType None; expected a string"),
    ],
)
async def test_garbage_replies_are_agent_errors_naming_what_came_back(reference: str, reason: str) -> None:
    with pytest.raises(AgentError, match=reason):
        await run_conversation(target(reference), [RoundSpec("hi")], session_id="g")


class _FirstThenHang:
    name = "first-then-hang"

    async def respond(self, message: str, session_id: str) -> AgentReply:
        if message == "hi":
            return AgentReply("first")
        import asyncio

        await asyncio.sleep(3600)
        return AgentReply("never")

    async def close_session(self, session_id: str) -> None:
        return None

    async def aclose(self) -> None:
        return None


def test_python_spec_errors_name_the_field() -> None:
    with pytest.raises(TargetConfigError, match=r"agent\.python: expected 'module:attribute'"):
        make_target({"python": "no_colon"}, base_dir=HERE)
    with pytest.raises(TargetConfigError, match="cannot import 'missing_module_xyz'"):
        make_target({"python": "missing_module_xyz:respond"}, base_dir=HERE)
    with pytest.raises(TargetConfigError, match="has no attribute 'nope'"):
        make_target({"python": "agents_under_test:nope"}, base_dir=HERE)
    with pytest.raises(TargetConfigError, match="takes 1 required argument"):
        make_target({"python": "agents_under_test:one_argument"}, base_dir=HERE)
    with pytest.raises(TargetConfigError, match="give exactly one of python, openai, http, mcp"):
        make_target({"python": "a:b", "http": {}})
    with pytest.raises(TargetConfigError, match="unknown key"):
        make_target({"python": "agents_under_test:crashes", "optoins": {}}, base_dir=HERE)


def test_a_python_file_path_reference_loads(tmp_path: Path) -> None:
    (tmp_path / "bot.py").write_text("def respond(message, session_id):\n    return message.upper()\n")
    agent = make_target({"python": "bot.py:respond"}, base_dir=tmp_path)
    assert agent.name == "python:bot.py:respond"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Which month would you like the revenue for?", True),
        ("Do you mean the Beach House or the Mountain Cabin?", True),
        ("Could you clarify which property you mean?", True),
        ("Happy to help. For which period?", True),
        ("Revenue in June was $4,200. Would you like a breakdown by property?", False),
        ("Your occupancy is 78%. Which month next?", False),
        ("You have 3 listings: Beach House, Mountain Cabin and City Apartment.", False),
        ("Is there anything else I can help with?", False),
        ("", False),
    ],
)
def test_heuristic_clarification_detector(text: str, expected: bool) -> None:
    assert looks_like_clarification(text) is expected


def test_a_package_module_imports_from_the_suites_folder_wherever_jurybox_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    repo = HERE.parents[1]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if Path(p).resolve() != repo])
    for name in [m for m in sys.modules if m == "examples" or m.startswith("examples.")]:
        monkeypatch.delitem(sys.modules, name)
    agent = make_target(
        {"python": "examples.property_agent.agent:respond"}, base_dir=repo / "examples" / "property_agent"
    )
    assert agent.name == "python:examples.property_agent.agent:respond"
    assert str(repo) in sys.path


async def test_a_context_reporting_a_failed_execution_is_an_agent_error_not_a_reply() -> None:
    # An agent (or bridge) that hands back a Context saying its execution ended in error or a
    # timeout has not answered; judging its partial output as a normal reply could pass it.
    from jurybox.agents import coerce_reply

    for status in ("error", "timeout"):
        with pytest.raises(AgentError, match=f"status {status!r}"):
            coerce_reply(Context(output="partial: Beach House", status=status), agent="bridge")
    assert coerce_reply(Context(output="done"), agent="bridge").text == "done"
