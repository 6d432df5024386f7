"""The example property assistant: its data, tools, conversation memory, clarifications and model mode."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from examples.property_agent import PropertyAgent, make_agent
from examples.property_agent.store import PropertyStore
from examples.property_agent.tools import TOOL_SCHEMAS, TOOLS, call_tool

from jurybox.agents import RoundSpec, heuristic_is_clarification, make_target, run_conversation
from jurybox.stubs import StubReply, StubServer, StubToolCall

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "property.db"


@pytest.fixture
def store(db: Path) -> PropertyStore:
    return PropertyStore(db)


def dump(path: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(path) as connection:
        rows: list[tuple[Any, ...]] = []
        for table in ("listings", "bookings", "revenue", "meta"):
            rows.extend(connection.execute(f"SELECT '{table}', * FROM {table} ORDER BY 2, 3"))
        return rows


def test_seed_data_is_deterministic_and_consistent(tmp_path: Path, store: PropertyStore) -> None:
    other = PropertyStore(tmp_path / "other.db")
    assert dump(store.path) == dump(other.path)
    assert [row["name"] for row in store.listings()] == ["Beach House", "Mountain Cabin", "City Apartment"]
    assert store.revenue_months() == ["2026-01", "2026-02", "2026-03", "2026-04", "2026-05", "2026-06"]
    # Revenue is derived from completed stays: nights in the month at the nightly rate plus cleaning at check-in.
    june = store.revenue(listing_id=1, start_month="2026-06", end_month="2026-06")[0]
    assert june["gross"] == 6190.0 and june["nights_booked"] == 17 and june["nights_available"] == 30
    statuses = {row["status"] for row in store.bookings()}
    assert statuses == {"completed", "confirmed", "cancelled"}
    assert all(row["check_in"] >= "2026-06-01" for row in store.bookings(status="confirmed"))


def test_tools_answer_from_the_database(store: PropertyStore) -> None:
    listings = call_tool(store, "get_listings", {})["listings"]
    assert [item["id"] for item in listings] == [1, 2, 3]

    details = call_tool(store, "get_listing_details", {"listing_id": 2})
    assert details["listing"]["name"] == "Mountain Cabin"
    recent = details["occupancy"]["last_3_months"]
    assert (recent["start_month"], recent["end_month"]) == ("2026-04", "2026-06")
    assert recent["nights_available"] == 91
    assert recent["rate"] == round(recent["nights_booked"] / 91, 4)

    revenue = call_tool(store, "get_revenue", {"start_month": "2026-01", "end_month": "2026-06"})
    assert revenue["total"] == round(sum(item["gross"] for item in revenue["by_listing"]), 2)
    assert revenue["total"] == round(sum(item["gross"] for item in revenue["by_month"]), 2)
    assert len(revenue["by_month"]) == 6

    upcoming = call_tool(store, "get_bookings", {"listing_id": 1, "status": "confirmed", "start_date": "2026-07-01"})
    assert upcoming["count"] > 0
    assert all(item["listing"] == "Beach House" and item["status"] == "confirmed" for item in upcoming["bookings"])


@pytest.mark.parametrize(
    ("name", "arguments", "error"),
    [
        ("get_listing_details", {}, "listing_id is required"),
        ("get_listing_details", {"listing_id": 9}, "there is no listing 9; valid ids: 1, 2, 3"),
        ("get_revenue", {"start_month": "June"}, "start_month must look like 2026-06"),
        ("get_revenue", {"start_month": "2026-05", "end_month": "2026-01"}, "is before start_month"),
        ("get_bookings", {"status": "pending"}, "status must be completed, confirmed or cancelled"),
        ("get_bookings", {"colour": "red"}, "bad arguments for get_bookings"),
        ("delete_everything", {}, "unknown tool 'delete_everything'"),
    ],
)
def test_bad_tool_calls_return_an_error_the_model_can_read(
    store: PropertyStore, name: str, arguments: dict[str, Any], error: str
) -> None:
    assert error in call_tool(store, name, arguments)["error"]


def test_tool_schemas_describe_every_tool() -> None:
    assert [schema["function"]["name"] for schema in TOOL_SCHEMAS] == list(TOOLS)


def test_policy_routes_intents_to_the_right_tools(db: Path) -> None:
    agent = PropertyAgent(db, offline=True)
    listings = agent.respond("What are my listings?", "s")
    assert [call["name"] for call in listings["tool_calls"]] == ["get_listings"]
    assert all(name in listings["reply"] for name in ("Beach House", "Mountain Cabin", "City Apartment"))

    revenue = agent.respond("Revenue for the cabin in Q1", "s")
    assert revenue["tool_calls"][0]["name"] == "get_revenue"
    assert revenue["tool_calls"][0]["arguments"] == {"listing_id": 2, "start_month": "2026-01", "end_month": "2026-03"}
    assert "$16,030" in revenue["reply"]

    bookings = agent.respond("upcoming bookings for it", "s")
    assert bookings["tool_calls"][0]["arguments"] == {
        "listing_id": 2,
        "start_date": "2026-07-01",
        "status": "confirmed",
    }
    assert "upcoming bookings for the Mountain Cabin" in bookings["reply"]

    details = agent.respond("Tell me about the city apartment", "s")
    assert details["tool_calls"][0] == {
        "name": "get_listing_details",
        "arguments": {"listing_id": 3},
        "result": details["tool_calls"][0]["result"],
    }
    assert "1450 Valencia St" in details["reply"]


def test_messages_are_persisted_with_tool_calls(db: Path) -> None:
    agent = PropertyAgent(db, offline=True)
    agent.respond("What are my listings?", "persist")
    with sqlite3.connect(db) as connection:
        rows = connection.execute(
            "SELECT role, name, tool_calls IS NOT NULL FROM messages WHERE session_id = 'persist' ORDER BY id"
        ).fetchall()
    assert rows == [("user", None, 0), ("assistant", None, 1), ("tool", "get_listings", 0), ("assistant", None, 0)]


async def test_revival_the_first_one_is_answered_from_the_stored_conversation(db: Path) -> None:
    target = make_target(
        {"python": "examples.property_agent.agent:make_agent", "options": {"db_path": str(db), "offline": True}},
        base_dir=REPO,
    )
    rounds = [RoundSpec("What are my listings?"), RoundSpec("What's the occupancy for the first one?")]
    outcomes = await run_conversation(target, rounds, session_id="revive-1", revive_between_rounds=True)
    second = outcomes[1].context
    assert second.metadata["revived"] is True
    assert second.tool_names == ["get_listing_details"]
    assert second.tool_calls[0].arguments == {"listing_id": 1}
    assert second.output.startswith("The Beach House was ")
    assert "occupied over the last 3 months" in second.output
    with sqlite3.connect(db) as connection:
        (count,) = connection.execute("SELECT count(*) FROM messages WHERE session_id = 'revive-1'").fetchone()
    assert count >= 4
    await target.aclose()


async def test_without_an_earlier_list_the_first_one_gets_a_clarifying_question(db: Path) -> None:
    agent = make_agent(db, offline=True)
    reply = agent.respond("What's the occupancy for the first one?", "fresh")
    assert reply["tool_calls"] == []
    assert reply["reply"].startswith('Which property do you mean by "the first one"?')


async def test_ambiguous_revenue_question_is_clarified_and_the_answer_completes_it(db: Path) -> None:
    target = make_target(
        {"python": "examples.property_agent.agent:make_agent", "options": {"db_path": str(db), "offline": True}},
        base_dir=REPO,
    )
    rounds = [RoundSpec("What's the revenue?", follow_up_replies=("June 2026, all properties",))]
    (outcome,) = await run_conversation(target, rounds, session_id="clarify", max_follow_ups=1)
    question, answer = outcome.follow_ups[0]
    assert question.startswith("Which period and which property would you like the revenue for?")
    assert answer == "June 2026, all properties"
    assert outcome.context.tool_names == ["get_revenue"]
    assert outcome.context.output.startswith("Revenue for June 2026 across all 3 properties: $14,180.")
    assert outcome.context.metadata["unanswered_question"] is False
    await target.aclose()


@pytest.mark.parametrize(
    ("answer", "expected_start"),
    [
        ("Beach House", "The Beach House earned $27,980 in year to date"),
        ("last month", "Revenue for June 2026 across all 3 properties"),
    ],
)
def test_a_partial_answer_to_the_revenue_question_fills_the_other_slot(
    db: Path, answer: str, expected_start: str
) -> None:
    agent = make_agent(db, offline=True)
    agent.respond("What's the revenue?", "partial")
    assert agent.respond(answer, "partial")["reply"].startswith(expected_start)


async def test_the_heuristic_detector_reads_the_agents_questions_as_clarifications(db: Path) -> None:
    from jurybox.core import Context

    agent = make_agent(db, offline=True)
    questions = [
        agent.respond("What's the revenue?", "q1")["reply"],
        agent.respond("What's the occupancy?", "q2")["reply"],
        agent.respond("Tell me about the first one", "q3")["reply"],
    ]
    answers = [
        agent.respond("What are my listings?", "q4")["reply"],
        agent.respond("Revenue last month", "q4")["reply"],
    ]
    assert [await heuristic_is_clarification(Context(output=text)) for text in questions] == [True, True, True]
    assert [await heuristic_is_clarification(Context(output=text)) for text in answers] == [False, False]


def test_respond_function_uses_the_database_from_the_environment(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from examples.property_agent import respond

    monkeypatch.setenv("JURYBOX_PROPERTY_DB", str(db))
    monkeypatch.delenv("JURYBOX_AGENT_MODEL", raising=False)
    respond("What are my listings?", "env")
    reply = respond("Tell me about the second one", "env")
    assert reply["reply"].startswith("Mountain Cabin -- 88 Pine Ridge Rd")
    assert db.exists()


def test_model_mode_calls_tools_and_persists_the_exchange(db: Path) -> None:
    def script(body: dict[str, Any]) -> StubReply:
        messages = body["messages"]
        if messages[-1]["role"] == "user":
            return StubReply(tool_calls=(StubToolCall("get_listing_details", {"listing_id": 1}, id="call_1"),))
        result = json.loads(messages[-1]["content"])
        return StubReply(text=f"{result['listing']['name']} sleeps {result['listing']['max_guests']}.")

    with StubServer("openai", reply=script) as stub:
        agent = make_agent(db, model="stub-model", base_url=stub.base_url, api_key="test")
        reply = agent.respond("How many guests fit in the beach house?", "model")
        assert reply["reply"] == "Beach House sleeps 8."
        assert [(c["name"], c["arguments"]) for c in reply["tool_calls"]] == [
            ("get_listing_details", {"listing_id": 1})
        ]
        assert reply["usage"]["input_tokens"] > 0
        first = stub.requests[0].json
        assert first["model"] == "stub-model"
        assert [tool["function"]["name"] for tool in first["tools"]] == list(TOOLS)
        assert first["messages"][0]["role"] == "system" and "2026-07-01" in first["messages"][0]["content"]

        # A new agent object (revival) sends the stored conversation, tool calls included.
        make_agent(db, model="stub-model", base_url=stub.base_url, api_key="test").respond("And the cabin?", "model")
        replayed = stub.requests[-2].json["messages"]
        assert [m["role"] for m in replayed] == ["system", "user", "assistant", "tool", "assistant", "user"]
        assert replayed[2]["tool_calls"][0]["function"]["name"] == "get_listing_details"


def test_many_first_users_at_once_seed_the_database_once(db: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    def converse(n: int) -> str:
        agent = make_agent(db, offline=True)
        agent.respond("What are my listings?", f"parallel-{n}")
        return str(agent.respond("Tell me about the last one", f"parallel-{n}")["reply"])

    with ThreadPoolExecutor(max_workers=8) as pool:
        replies = list(pool.map(converse, range(8)))
    assert all(reply.startswith("City Apartment -- 1450 Valencia St") for reply in replies)
    with sqlite3.connect(db) as connection:
        assert connection.execute("SELECT count(*) FROM listings").fetchone() == (3,)
        assert connection.execute("SELECT count(DISTINCT session_id) FROM messages").fetchone() == (8,)


@pytest.mark.parametrize(
    ("question", "expected_end"),
    [
        ("Which listing earned the most last month?", "The Beach House earned the most: $6,190."),
        ("Which one made the least this year?", "The City Apartment earned the least: $23,800."),
    ],
)
def test_ranking_questions_get_the_answer_in_words(db: Path, question: str, expected_end: str) -> None:
    assert make_agent(db, offline=True).respond(question, "rank")["reply"].endswith(expected_end)


def test_off_topic_questions_are_declined_even_mid_conversation(db: Path) -> None:
    agent = make_agent(db, offline=True)
    agent.respond("What are my listings?", "weather")
    reply = agent.respond("What's the weather in Santa Cruz tomorrow?", "weather")
    assert reply["tool_calls"] == []
    assert reply["reply"].startswith("Sorry, I can't help with that")
