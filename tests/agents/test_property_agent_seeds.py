"""The example property assistant's knowledge base: seed documents retrieved, quoted, cited and remembered."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from examples.property_agent import make_agent
from examples.property_agent.knowledge import KnowledgeBase, KnowledgeError, tokens
from examples.property_agent.store import PropertyStore

from jurybox.agents import RoundSpec, make_target, run_conversation
from jurybox.stubs import StubReply, StubServer
from jurybox.suites import load_seeds

REPO = Path(__file__).resolve().parents[2]
SEEDS = REPO / "examples" / "property_agent" / "seeds"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "property.db"


@pytest.fixture(scope="module")
def seeds() -> list[dict[str, Any]]:
    """The records exactly as a suite's ``seeds: seeds/`` hands them to the factory."""
    return [seed.to_dict() for seed in load_seeds(SEEDS)]


@pytest.fixture
def knowledge(db: Path, seeds: list[dict[str, Any]]) -> KnowledgeBase:
    return KnowledgeBase.from_seeds(seeds, PropertyStore(db).listings())


def source_ids(reply: dict[str, Any]) -> list[str]:
    return [source.split("]", 1)[0].lstrip("[") for source in reply.get("sources", [])]


def test_words_are_normalized_and_listing_names_are_not_the_topic(knowledge: KnowledgeBase) -> None:
    assert tokens("What time is check in? Dogs, cats and Wi-Fi") == ["time", "checkin", "pet", "pet", "wifi"]
    assert knowledge.topic("What time is check-in at the Beach House?") == ["time", "checkin"]
    assert knowledge.topic("Tell me about the Mountain Cabin") == []


def test_documents_know_which_listings_they_apply_to(knowledge: KnowledgeBase) -> None:
    assert len(knowledge) == 11
    review = knowledge.get("review-beach-house-2026-05-ortiz")
    assert review is not None and review.listings == ("Beach House",) and review.extra["rating"] == 3
    note = knowledge.get("note-host-pet-policy")
    assert note is not None and note.listings == ()  # applies_to names every listing: a general note
    assert note.as_source().startswith("[note-host-pet-policy] Host's note (all listings)\nDogs are welcome")


@pytest.mark.parametrize(
    ("question", "listing_ids", "expected"),
    [
        ("What time is check-in at the Beach House?", (), ["checkin-beach-house"]),
        ("what time is check in", (2,), ["checkin-mountain-cabin"]),
        ("Is smoking allowed at the cabin?", (), ["rules-mountain-cabin"]),
        ("Is there parking at the city apartment?", (), ["checkin-city-apartment"]),
        ("Can I bring my dog to the City Apartment?", (), ["note-host-pet-policy", "rules-city-apartment"]),
        ("Any complaints about noise?", (), ["review-beach-house-2026-05-ortiz"]),
        ("What is the wifi password?", (), []),  # a review praising fast Wi-Fi is no password
        ("Tell me about the Beach House", (), []),  # no topic words: the database answers that
    ],
)
def test_search_finds_the_documents_about_the_question(
    knowledge: KnowledgeBase, question: str, listing_ids: tuple[int, ...], expected: list[str]
) -> None:
    assert [hit.document.id for hit in knowledge.search(question, listing_ids)] == expected


def test_matching_sentences_of_a_general_note_are_those_about_the_listing(knowledge: KnowledgeBase) -> None:
    (hit,) = knowledge.search("are dogs ok?", (2,))
    assert hit.sentences == ("Dogs are welcome at the Beach House and the Mountain Cabin for a $75 pet fee per stay.",)


def test_the_agent_answers_from_the_seeds_and_returns_them_as_sources(db: Path, seeds: list[dict[str, Any]]) -> None:
    agent = make_agent(db, offline=True, seeds=seeds)

    checkin = agent.respond("What time is check-in at the Beach House?", "kb")
    assert checkin["tool_calls"] == []  # not the bookings tool, although "check-in" reads like bookings
    assert checkin["reply"] == (
        "From the Beach House check-in instructions: Check-in is from 4 pm and check-out is by 11 am. "
        "The key is in the lockbox by the side gate; the code is sent the morning of arrival."
    )
    assert checkin["sources"] == [knowledge_source(seeds, "checkin-beach-house")]

    reviews = agent.respond("What do guests say about the Beach House?", "kb")
    assert reviews["reply"].startswith("2 guest reviews of the Beach House (average rating 4.0/5):\n• 5/5, stayed Jun")
    assert source_ids(reviews) == ["review-beach-house-2026-06-kim", "review-beach-house-2026-05-ortiz"]

    unknown = agent.respond("What's the Wi-Fi password at the Beach House?", "kb")
    assert "won't guess" in unknown["reply"] and "sources" not in unknown

    # Database questions are untouched by the seeds.
    upcoming = agent.respond("When is the next check-in at the Beach House?", "kb")
    assert [call["name"] for call in upcoming["tool_calls"]] == ["get_bookings"] and "sources" not in upcoming


def knowledge_source(seeds: list[dict[str, Any]], seed_id: str) -> str:
    seed = next(s for s in seeds if s["id"] == seed_id)
    return f"[{seed_id}] Check-in instructions (Beach House)\n{seed['body']}"


def test_without_seeds_the_agent_behaves_as_before(db: Path) -> None:
    reply = make_agent(db, offline=True).respond("What time is check-in at the Beach House?", "plain")
    assert [call["name"] for call in reply["tool_calls"]] == ["get_bookings"] and "sources" not in reply


def test_a_seeds_folder_path_loads_with_the_suite_loader(db: Path) -> None:
    agent = make_agent(db, offline=True, seeds=str(SEEDS))
    reply = agent.respond("Is smoking allowed at the cabin?", "folder")
    assert reply["reply"] == "From the Mountain Cabin house rules: No smoking anywhere on the property."
    assert source_ids(reply) == ["rules-mountain-cabin"]


async def test_the_topic_survives_revival(db: Path, seeds: list[dict[str, Any]]) -> None:
    target = make_target(
        {
            "python": "examples.property_agent.agent:make_agent",
            "options": {"db_path": str(db), "offline": True, "seeds": seeds},
        },
        base_dir=REPO,
    )
    rounds = [RoundSpec("Can I bring my dog to the City Apartment?"), RoundSpec("And at the Mountain Cabin?")]
    outcomes = await run_conversation(target, rounds, session_id="pets", revive_between_rounds=True)
    await target.aclose()

    first, second = (outcome.context for outcome in outcomes)
    assert second.metadata["revived"] is True
    assert "No pets at the City Apartment" in str(first.output)
    assert second.output == (
        "From the host's note: Dogs are welcome at the Beach House and the Mountain Cabin for a $75 pet fee per stay."
    )
    assert [s.split("]")[0] for s in second.sources] == ["[note-host-pet-policy"]
    stored = PropertyStore(db).messages("pets")
    assert [m.meta.get("topic") for m in stored if m.role == "assistant"] == ["bring pet", "bring pet"]


def test_a_follow_up_with_its_own_topic_is_not_read_as_the_old_one(db: Path, seeds: list[dict[str, Any]]) -> None:
    agent = make_agent(db, offline=True, seeds=seeds)
    agent.respond("Is there parking at the city apartment?", "topic")
    reply = agent.respond("Is there a pool table there?", "topic")
    assert "sources" not in reply and reply["reply"].startswith("Sorry, I can't help with that")


@pytest.mark.parametrize(
    ("records", "message"),
    [
        ([{"id": "a", "type": "note"}], "seed 'a': field 'body' must be non-empty text"),
        ([{"type": "note", "body": "x"}], "seeds[0]: field 'id' must be non-empty text"),
        (
            [{"id": "a", "type": "note", "body": "x", "listing": "Lighthouse"}],
            "seed 'a': field 'listing' names 'Lighthouse', which is not a listing (Beach House, Mountain Cabin",
        ),
        ([{"id": "a", "type": "n", "body": "x"}, {"id": "a", "type": "n", "body": "y"}], "seed 'a': duplicate seed id"),
        (["not a mapping"], "seeds[0]: a seed record is a mapping, got str"),
    ],
)
def test_bad_seed_records_are_refused_naming_the_record_and_field(db: Path, records: list[Any], message: str) -> None:
    with pytest.raises(KnowledgeError, match="^" + re.escape(message)):
        make_agent(db, offline=True, seeds=records)


def test_model_mode_gets_the_matching_documents_in_its_context(db: Path, seeds: list[dict[str, Any]]) -> None:
    with StubServer("openai", reply=StubReply(text="Check-in at the Beach House is from 4 pm.")) as stub:
        agent = make_agent(db, model="stub-model", base_url=stub.base_url, api_key="test", seeds=seeds)
        reply = agent.respond("What time is check-in at the Beach House?", "model")
        first = agent.respond("Are dogs welcome there?", "model")
        system = [request.json["messages"][0]["content"] for request in stub.requests]

    assert reply["reply"] == "Check-in at the Beach House is from 4 pm."
    assert source_ids(reply) == ["checkin-beach-house"]
    assert "[checkin-beach-house] Check-in instructions (Beach House)\nCheck-in is from 4 pm" in system[0]
    assert "cite the [id]" in system[0]
    # "there" is the Beach House the conversation was about; the pet note is found for it.
    assert source_ids(first) == ["note-host-pet-policy"] and "[note-host-pet-policy]" in system[1]
    stored = PropertyStore(db).messages("model")
    assert [m.content for m in stored if m.role in ("user", "assistant")] == [
        "What time is check-in at the Beach House?",
        "Check-in at the Beach House is from 4 pm.",
        "Are dogs welcome there?",
        "Check-in at the Beach House is from 4 pm.",
    ]
