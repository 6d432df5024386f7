from datetime import UTC, datetime
from pathlib import Path

import pytest

from jurybox import Context, ToolCall
from jurybox.core import Message, contexts_from_jsonl


def test_context_is_frozen_and_coerces_collections() -> None:
    ctx = Context(
        input="What are my listings?",
        output="Beach House",
        messages=[{"role": "user", "content": "hi"}],
        tool_calls=[{"name": "get_listings", "arguments": '{"owner": 1}'}],
        sources=["doc"],
        workspace="/tmp",  # type: ignore[arg-type]
        metadata={"model": "gpt", "cost": 0.01, "tokens": 12},
    )
    assert ctx.messages == (Message("user", "hi"),)
    assert ctx.tool_calls[0] == ToolCall("get_listings", {"owner": 1})
    assert ctx.workspace == Path("/tmp")
    assert ctx.cost == 0.01
    assert ctx.tool_names == ["get_listings"]
    with pytest.raises(AttributeError):
        ctx.output = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        ctx.metadata["cost"] = 5  # type: ignore[index]


def test_context_round_trips_through_dict() -> None:
    ctx = Context(
        input="q",
        output="a",
        expected="a",
        started_at=datetime(2026, 1, 1, tzinfo=UTC),
        duration=1.5,
        tool_calls=[ToolCall("t", {"x": 1}, result="ok", id="c1")],
    )
    assert Context.from_dict(ctx.to_dict()) == ctx


def test_bad_context_input_is_named() -> None:
    with pytest.raises(ValueError, match=r"unknown Context field.*outptu"):
        Context.from_dict({"outptu": "x"})
    with pytest.raises(TypeError, match=r"Context\.output must be a string"):
        Context(output=3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"duration"):
        Context(duration=-1)
    with pytest.raises(ValueError, match="has no 'name'"):
        Context(tool_calls=[{"arguments": {}}])
    with pytest.raises(TypeError, match="sources must be a list"):
        Context(sources="one doc")  # type: ignore[arg-type]


def test_jsonl_errors_name_source_and_line() -> None:
    lines = ['{"input": "a", "output": "b"}', "", '{"input": "a", "oops": 1}']
    with pytest.raises(ValueError, match=r"runs.jsonl:3: unknown Context field"):
        contexts_from_jsonl(lines, "runs.jsonl")
    assert len(contexts_from_jsonl(lines[:2], "runs.jsonl")) == 1
