"""The built-in assistant policy: answers hosts' questions without a model, deterministically.

It routes each message to an intent (listings, details, occupancy, bookings,
revenue), works out which property and period it is about -- from the
message or from the persisted conversation ("the first one", "it") -- calls
the same tools a model would, and writes the answer. Questions about the
host's documents (house rules, check-in instructions, notes, guest reviews,
given as seeds) are answered from the matching documents, quoted and returned
as the reply's sources. When a request is
ambiguous it asks a clarifying question and remembers (in the stored
message's ``meta``) what it asked, so the host's answer completes the request.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from examples.property_agent.knowledge import Hit, KnowledgeBase, average_rating, review_line
from examples.property_agent.language import (
    INTENTS,
    Period,
    asks_for_help,
    asks_knowledge,
    booking_status,
    detect_intents,
    is_greeting,
    is_thanks,
    month_label,
    named_listings,
    off_topic,
    ordinal_reference,
    parse_period,
    range_label,
    refers_back,
    says_all,
)
from examples.property_agent.store import PropertyStore, StoredMessage
from examples.property_agent.tools import call_tool

MAX_BOOKING_LINES = 8


@dataclass
class ToolUse:
    """One tool call the policy made, with its result."""

    id: str
    name: str
    arguments: dict[str, Any]
    result: dict[str, Any]


@dataclass
class Turn:
    """The policy's answer: text, the tools it used, the documents it is based on, and what to remember."""

    text: str
    tool_uses: list[ToolUse] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Memory:
    """What the policy needs from the stored conversation."""

    pending: Mapping[str, Any] | None = None
    focus: tuple[int, ...] = ()
    enumerated: tuple[int, ...] = ()
    last_intent: str | None = None
    last_period: Period | None = None
    last_topic: str | None = None  # the question a knowledge answer was about, for "and at the cabin?"

    @classmethod
    def from_messages(cls, messages: Sequence[StoredMessage], listings: Sequence[Mapping[str, Any]]) -> Memory:
        finals = [m for m in messages if m.role == "assistant" and not m.tool_calls]
        last = finals[-1].meta if finals else {}
        period = last.get("period")
        return cls(
            pending=last.get("pending"),
            focus=_focus(finals, listings),
            enumerated=_enumerated(messages, listings),
            last_intent=last.get("intent"),
            last_period=Period.from_dict(period) if isinstance(period, Mapping) else None,
            last_topic=last.get("topic") if isinstance(last.get("topic"), str) else None,
        )


def _focus(finals: Sequence[StoredMessage], listings: Sequence[Mapping[str, Any]]) -> tuple[int, ...]:
    """The listing(s) the conversation was last about ("it", "that one")."""
    for message in reversed(finals):
        if "focus" in message.meta:
            return tuple(message.meta["focus"])
        named = named_listings(message.content, listings)
        if len(named) == 1:
            return tuple(named)
    return ()


def _enumerated(messages: Sequence[StoredMessage], listings: Sequence[Mapping[str, Any]]) -> tuple[int, ...]:
    """The most recent list of listings shown to the host, in the order shown ("the first one")."""
    for message in reversed(messages):
        if message.role == "assistant" and message.meta.get("enumerated"):
            return tuple(message.meta["enumerated"])
        if message.role == "tool" and message.name == "get_listings":
            try:
                return tuple(item["id"] for item in json.loads(message.content)["listings"])
            except (ValueError, KeyError, TypeError):
                continue
        if message.role == "assistant" and not message.tool_calls:
            # A conversation held by a model has no meta: read the order the names appear in.
            named = named_listings(message.content, listings)
            if len(named) >= 2:
                return tuple(named)
    return ()


@dataclass(frozen=True)
class Target:
    """Which listings a message is about."""

    ids: tuple[int, ...] = ()
    all: bool = False
    unresolved: str | None = None  # the words that pointed at a listing we could not identify

    @property
    def given(self) -> bool:
        return bool(self.ids) or self.all


def plural(count: int, word: str) -> str:
    return f"{count:g} {word}{'' if count == 1 else 's'}"


def money(amount: float) -> str:
    return f"${amount:,.0f}"


def percent(rate: float | None) -> str:
    return "n/a" if rate is None else f"{rate:.0%}"


def short_date(text: str) -> str:
    day = date.fromisoformat(text)
    return f"{day:%b} {day.day}"


def stay_dates(check_in: str, check_out: str) -> str:
    start, end = date.fromisoformat(check_in), date.fromisoformat(check_out)
    if start.month == end.month:
        return f"{start:%b} {start.day}–{end.day}"
    return f"{start:%b} {start.day}–{end:%b} {end.day}"


class BuiltInPolicy:
    """Answers from the property database by rules; see the module docstring."""

    def __init__(self, store: PropertyStore, knowledge: KnowledgeBase | None = None) -> None:
        self.store = store
        self.knowledge = knowledge if knowledge is not None else KnowledgeBase(())

    # Entry point ---------------------------------------------------------

    def reply(self, message: str, memory: Memory) -> Turn:
        listings = self.store.listings()
        as_of = self.store.as_of()
        names = {row["id"]: row["name"] for row in listings}
        intents = detect_intents(message)
        period = parse_period(message, as_of)
        target = self._target(message, memory, names)
        pending = memory.pending
        # The host answers the question asked before unless they clearly moved on; "all properties"
        # names the scope of the pending question, not a request for the listings.
        answers_pending = pending is not None and (
            not intents
            or pending["intent"] in intents
            or (set(intents) <= {"listings"} and bool(period or target.given))
        )
        if pending and answers_pending:
            intent = str(pending["intent"])
            if period is None and isinstance(pending.get("period"), Mapping):
                period = Period.from_dict(pending["period"])
            if not target.given and not target.unresolved and pending.get("listing_ids"):
                target = Target(ids=tuple(pending["listing_ids"]))
            return self._answer(intent, message, target, period, names, as_of, asked_before=True)
        knowledge = self._knowledge(message, intents, target, memory, names)
        if knowledge is not None:
            return knowledge
        if intents:
            return self._answer(intents[0], message, target, period, names, as_of)
        if off_topic(message):
            return self._decline()
        if (target.given or target.unresolved or period) and memory.last_intent in INTENTS:
            # A follow-on such as "and the second one?" or "what about May?" continues the last topic.
            intent = "details" if memory.last_intent == "listings" else str(memory.last_intent)
            if not target.given and not target.unresolved and memory.focus:
                target = Target(ids=memory.focus)
            if period is None and intent in ("revenue", "occupancy"):
                period = memory.last_period
            return self._answer(intent, message, target, period, names, as_of)
        if is_thanks(message):
            return Turn("You're welcome! Anything else about your properties?", meta={"intent": "thanks"})
        if is_greeting(message) or asks_for_help(message):
            return Turn(
                "Hi! I'm your property assistant. I can look up your listings, upcoming bookings, revenue and "
                'occupancy -- for example "What are my listings?" or "Revenue for the Beach House in June".',
                meta={"intent": "help"},
            )
        return self._decline()

    # Knowledge: the host's documents -------------------------------------

    def _knowledge(
        self, message: str, intents: Sequence[str], target: Target, memory: Memory, names: Mapping[int, str]
    ) -> Turn | None:
        """An answer from the documents, or None when the message is for the database or small talk."""
        if not self.knowledge.documents or target.unresolved:
            return None
        ids = list(target.ids) if target.given and not target.all else []
        cue = asks_knowledge(message)
        if cue:
            hits = self.knowledge.search(message, ids)
            if hits:
                return self.from_documents(message, hits, ids, names)
            if not intents and not off_topic(message):
                return self._not_in_documents(ids, names)
            return None  # "check-in" may still be a bookings question the database answers
        follow_on = not intents and not self.knowledge.topic(message)
        if follow_on and memory.last_intent == "knowledge" and memory.last_topic and target.given:
            # "And at the Mountain Cabin?" after a knowledge answer asks the same about another listing.
            hits = self.knowledge.search(memory.last_topic, ids)
            if hits:
                return self.from_documents(memory.last_topic, hits, ids, names)
            return self._not_in_documents(ids, names)
        return None

    def from_documents(self, question: str, hits: Sequence[Hit], ids: Sequence[int], names: Mapping[int, str]) -> Turn:
        """Answer with the matching sentences of each document (reviews whole), citing each one."""
        documents = [hit.document for hit in hits]
        if all(d.type == "review" for d in documents):
            where = " and ".join(f"the {names[i]}" for i in ids) or "your listings"
            rating = average_rating(documents)
            head = f"{len(documents)} guest review{'s' if len(documents) != 1 else ''} of {where}"
            head += f" (average rating {rating:.1f}/5):" if rating is not None else ":"
            lines = [review_line(d) + (f" [{d.id}]" if not ids else "") for d in documents]
            text = head + "\n" + "\n".join(lines)
        else:
            lines = []
            for hit in hits:
                doc = hit.document
                if doc.type == "review":
                    lines.append(f"A guest review of the {' and '.join(doc.listings)}: {review_line(doc)[2:]}")
                    continue
                about = f"{' and '.join(doc.listings)} " if doc.listings else ""
                lines.append(f"From the {about}{doc.label}: {' '.join(hit.sentences)}")
            text = "\n".join(lines)
        focus = ids or sorted({i for i, name in names.items() if any(name in d.listings for d in documents)})
        return Turn(
            text,
            meta={
                "intent": "knowledge",
                "topic": " ".join(self.knowledge.topic(question)),
                "focus": list(focus) if len(focus) == 1 else [],
                "documents": [d.id for d in documents],
            },
            sources=[d.as_source() for d in documents],
        )

    def _not_in_documents(self, ids: Sequence[int], names: Mapping[int, str]) -> Turn:
        where = " for " + " and ".join(f"the {names[i]}" for i in ids) if ids else ""
        return Turn(
            f"I couldn't find anything about that in the house rules, check-in instructions, notes or guest reviews"
            f"{where}, so I won't guess.",
            meta={"intent": "knowledge", "focus": list(ids)},
        )

    def _decline(self) -> Turn:
        return Turn(
            "Sorry, I can't help with that: I can only look up your listings, bookings, revenue and occupancy. "
            'Try "What are my listings?", "Upcoming bookings for the Mountain Cabin" or "Revenue last month".',
            meta={"intent": "unknown"},
        )

    def _target(self, message: str, memory: Memory, names: Mapping[int, str]) -> Target:
        rows = [dict(self.store.listing(i) or {}) for i in names]
        named = named_listings(message, rows)
        if named:
            return Target(ids=tuple(named))
        position = ordinal_reference(message)
        if position is not None:
            shown = memory.enumerated
            if shown and -len(shown) <= position < len(shown):
                return Target(ids=(shown[position],))
            return Target(unresolved=_reference_words(message))
        if says_all(message):
            return Target(all=True)
        if refers_back(message) and memory.focus:
            return Target(ids=memory.focus)
        return Target()

    def _answer(
        self,
        intent: str,
        message: str,
        target: Target,
        period: Period | None,
        names: Mapping[int, str],
        as_of: date,
        *,
        asked_before: bool = False,
    ) -> Turn:
        if intent == "listings":
            return self.listings()
        if intent == "details":
            return self.details(target, names)
        if intent == "occupancy":
            return self.occupancy(target, period, names)
        if intent == "bookings":
            return self.bookings(target, period, booking_status(message), names, as_of)
        return self.revenue(target, period, names, as_of, asked_before=asked_before, ranking=ranking_word(message))

    # Tools ---------------------------------------------------------------

    def _call(self, turn: Turn, name: str, **arguments: Any) -> dict[str, Any]:
        # Leave out unset filters, as a model would, so recorded calls show only what was asked.
        arguments = {key: value for key, value in arguments.items() if value is not None}
        result = call_tool(self.store, name, arguments)
        turn.tool_uses.append(ToolUse(f"call_{secrets.token_hex(6)}", name, arguments, result))
        return result

    # Clarifying questions ------------------------------------------------

    def _ask_property(
        self, intent: str, what: str, target: Target, period: Period | None, names: Mapping[int, str]
    ) -> Turn:
        choices = _choices(names)
        if target.unresolved:
            text = f'Which property do you mean by "{target.unresolved}"? You have {choices}.'
        else:
            text = f'Which property would you like {what} for: {choices}? You can also say "all of them".'
        pending: dict[str, Any] = {"intent": intent}
        if period is not None:
            pending["period"] = period.to_dict()
        return Turn(text, meta={"intent": intent, "pending": pending, "focus": []})

    # Intents -------------------------------------------------------------

    def listings(self) -> Turn:
        turn = Turn("")
        rows = self._call(turn, "get_listings")["listings"]
        lines = [
            f"{n}. {row['name']} -- {row['property_type']} in {row['city']} · {row['bedrooms']} bedroom"
            f"{'s' if row['bedrooms'] != 1 else ''} · sleeps {row['max_guests']} · {money(row['nightly_rate'])}/night"
            f" · rated {row['rating']}"
            for n, row in enumerate(rows, start=1)
        ]
        turn.text = f"You have {len(rows)} listings:\n" + "\n".join(lines)
        turn.meta = {"intent": "listings", "enumerated": [row["id"] for row in rows], "focus": []}
        return turn

    def details(self, target: Target, names: Mapping[int, str]) -> Turn:
        if not target.given:
            return self._ask_property("details", "details", target, None, names)
        ids = list(names) if target.all else list(target.ids)
        turn = Turn("")
        paragraphs = []
        for listing_id in ids:
            data = self._call(turn, "get_listing_details", listing_id=listing_id)
            listing, occupancy = data["listing"], data["occupancy"]["last_3_months"]
            stay, current = data["next_check_in"], data["current_stay"]
            next_text = "No upcoming bookings."
            if stay:
                nights = plural(stay["nights"], "night")
                next_text = f"Next check-in: {short_date(stay['check_in'])} ({stay['guest_name']}, {nights})."
            if current:
                next_text = f"{current['guest_name']} is staying until {short_date(current['check_out'])}. " + next_text
            paragraphs.append(
                f"{listing['name']} -- {listing['address']}, {listing['city']}. "
                f"{plural(listing['bedrooms'], 'bedroom')}, "
                f"{plural(listing['bathrooms'], 'bath')}, sleeps {listing['max_guests']}. "
                f"{money(listing['nightly_rate'])}/night "
                f"plus a {money(listing['cleaning_fee'])} cleaning fee; rated {listing['rating']}. "
                f"Amenities: {', '.join(listing['amenities'])}. Occupancy over the last 3 months "
                f"({range_label(occupancy['start_month'], occupancy['end_month'])}): {percent(occupancy['rate'])}. "
                f"{plural(data['upcoming_bookings'], 'upcoming booking')}. {next_text}"
            )
        turn.text = "\n\n".join(paragraphs)
        turn.meta = {"intent": "details", "focus": ids}
        return turn

    def occupancy(self, target: Target, period: Period | None, names: Mapping[int, str]) -> Turn:
        if target.unresolved or (not target.given and period is None):
            return self._ask_property("occupancy", "the occupancy", target, period, names)
        turn = Turn("")
        if target.ids and len(target.ids) == 1 and period is None:
            listing_id = target.ids[0]
            data = self._call(turn, "get_listing_details", listing_id=listing_id)
            recent, ytd = data["occupancy"]["last_3_months"], data["occupancy"]["year_to_date"]
            turn.text = (
                f"The {names[listing_id]} was {percent(recent['rate'])} occupied over the last 3 months "
                f"({range_label(recent['start_month'], recent['end_month'])}): {recent['nights_booked']} of "
                f"{recent['nights_available']} nights booked. Year to date it is {percent(ytd['rate'])} "
                f"({ytd['nights_booked']} of {ytd['nights_available']} nights)."
            )
            turn.meta = {"intent": "occupancy", "focus": [listing_id]}
            return turn
        months = self.store.revenue_months()
        period = period or Period(months[-3], months[-1], f"the last 3 months ({range_label(months[-3], months[-1])})")
        ids = list(names) if (target.all or not target.given) else list(target.ids)
        rows: list[dict[str, Any]] = []
        # One portfolio-wide call when every listing is wanted, otherwise one call per listing.
        scopes: list[int | None] = list(ids) if len(ids) < len(names) else [None]
        for scope in scopes:
            data = self._call(
                turn, "get_revenue", listing_id=scope, start_month=period.start_month, end_month=period.end_month
            )
            rows.extend(item for item in data["by_listing"] if item["listing_id"] in ids)
        if not rows:
            turn.text = self._no_data(period)
        else:
            lines = [
                f"• {row['listing']}: {percent(row['rate'])} "
                f"({row['nights_booked']} of {row['nights_available']} nights)"
                for row in rows
            ]
            covered = f"all {len(rows)} properties" if len(ids) == len(names) else "these properties"
            booked = sum(row["nights_booked"] for row in rows)
            available = sum(row["nights_available"] for row in rows)
            head = (
                f"Occupancy for {period.label}:"
                if len(rows) == 1
                else f"Occupancy for {period.label} -- {percent(booked / available)} across {covered}:"
            )
            turn.text = head + "\n" + "\n".join(lines)
        turn.meta = {
            "intent": "occupancy",
            "focus": ids if len(ids) == 1 else [],
            "enumerated": [row["listing_id"] for row in rows] if len(rows) > 1 else [],
            "period": period.to_dict(),
        }
        return turn

    def bookings(
        self, target: Target, period: Period | None, status: str | None, names: Mapping[int, str], as_of: date
    ) -> Turn:
        if target.unresolved:
            return self._ask_property("bookings", "bookings", target, period, names)
        ids: list[int | None] = list(target.ids) if target.ids and not target.all else [None]
        arguments: dict[str, Any] = {}
        if period is not None:
            arguments["start_date"] = f"{period.start_month}-01"
            arguments["end_date"] = _month_after(period.end_month).isoformat()
            label = f"in {period.label}"
        elif status in (None, "confirmed"):
            status = "confirmed"
            arguments["start_date"] = as_of.isoformat()
            label = "upcoming"
        else:
            label = status
        if status is not None:
            arguments["status"] = status
        turn = Turn("")
        rows: list[dict[str, Any]] = []
        for listing_id in ids:
            extra = {"listing_id": listing_id} if listing_id is not None else {}
            rows.extend(self._call(turn, "get_bookings", **extra, **arguments)["bookings"])
        if status is None:
            rows = [row for row in rows if row["status"] != "cancelled"]
        where = " and ".join(f"the {names[i]}" for i in ids if i is not None) or "all your properties"
        if label == "upcoming":
            kind = "upcoming bookings"
        elif period is None:
            kind = f"{status} bookings"
        else:
            kind = f"{status + ' ' if status else ''}bookings {label}"
        if not rows:
            turn.text = f"There are no {kind} for {where}."
        else:
            rows.sort(key=lambda row: (row["check_in"], row["id"]))
            several = len({row["listing_id"] for row in rows}) > 1
            lines = [
                f"• {stay_dates(row['check_in'], row['check_out'])} · "
                + (f"{row['listing']} · " if several else "")
                + f"{row['guest_name']} · {plural(row['guests'], 'guest')} · {money(row['total'])}"
                for row in rows[:MAX_BOOKING_LINES]
            ]
            more = len(rows) - MAX_BOOKING_LINES
            if more > 0:
                lines.append(f"…and {more} more.")
            total = money(sum(row["total"] for row in rows))
            turn.text = f"{len(rows)} {kind} for {where} ({total} in total):\n" + "\n".join(lines)
        turn.meta = {"intent": "bookings", "focus": [i for i in ids if i is not None]}
        return turn

    def revenue(
        self,
        target: Target,
        period: Period | None,
        names: Mapping[int, str],
        as_of: date,
        *,
        asked_before: bool = False,
        ranking: str | None = None,
    ) -> Turn:
        if target.unresolved:
            return self._ask_property("revenue", "revenue", target, period, names)
        if not target.given and period is None:
            again = "Sorry, I still need to know which. " if asked_before else ""
            return Turn(
                f"{again}Which period and which property would you like the revenue for? For example "
                '"June 2026 for the Beach House" or "all properties, year to date".',
                meta={"intent": "revenue", "pending": {"intent": "revenue"}, "focus": []},
            )
        if period is None:
            previous = _month_before(as_of)
            period = Period(f"{as_of.year}-01", previous, f"year to date ({range_label(f'{as_of.year}-01', previous)})")
        turn = Turn("")
        ids = list(target.ids) if target.ids and not target.all else []
        results = (
            [
                self._call(
                    turn, "get_revenue", listing_id=i, start_month=period.start_month, end_month=period.end_month
                )
                for i in ids
            ]
            if ids
            else [self._call(turn, "get_revenue", start_month=period.start_month, end_month=period.end_month)]
        )
        rows = [row for result in results for row in result["by_listing"]]
        meta: dict[str, Any] = {"intent": "revenue", "period": period.to_dict(), "focus": ids}
        if not rows:
            turn.text = self._no_data(period)
        elif len(rows) == 1 and ids:
            row, months = rows[0], results[0]["by_month"]
            turn.text = (
                f"The {row['listing']} earned {money(row['gross'])} in {period.label} "
                f"from {plural(row['stays'], 'stay')}, "
                f"with {row['nights_booked']} of {row['nights_available']} nights booked "
                f"({percent(row['rate'])} occupancy)."
            )
            if len(months) > 1:
                turn.text += "\nBy month: " + " · ".join(
                    f"{month_label(m['month'])} {money(m['gross'])}" for m in months
                )
        else:
            total = sum(row["gross"] for row in rows)
            scope = f"all {len(rows)} properties" if not ids else " and ".join(f"the {names[i]}" for i in ids)
            lines = [f"• {row['listing']}: {money(row['gross'])} ({percent(row['rate'])} occupancy)" for row in rows]
            turn.text = f"Revenue for {period.label} across {scope}: {money(total)}.\n" + "\n".join(lines)
            if ranking is not None:
                # "Which listing earned the most?" deserves the answer in words, not only the list.
                pick = (max if ranking == "most" else min)(rows, key=lambda row: row["gross"])
                turn.text += f"\nThe {pick['listing']} earned the {ranking}: {money(pick['gross'])}."
                meta["focus"] = [pick["listing_id"]]
            meta["enumerated"] = [row["listing_id"] for row in rows]
        turn.meta = meta
        return turn

    def _no_data(self, period: Period) -> str:
        months = self.store.revenue_months()
        available = range_label(months[0], months[-1])
        return (
            f"I don't have realized revenue for {period.label}. Figures are available for {available}; "
            "the current month is still in progress."
        )


def ranking_word(message: str) -> str | None:
    """Return "most" or "least" when the host asks for the best or worst performer, else None."""
    lowered = message.lower()
    if re.search(r"\b(most|highest|best|top|biggest)\b", lowered):
        return "most"
    if re.search(r"\b(least|lowest|worst|smallest)\b", lowered):
        return "least"
    return None


def _choices(names: Mapping[int, str]) -> str:
    labels = [f"the {name}" for name in names.values()]
    return ", ".join(labels[:-1]) + " or " + labels[-1] if len(labels) > 1 else labels[0]


def _reference_words(message: str) -> str:
    lowered = message.lower()
    for phrase in (
        "the first one",
        "the second one",
        "the third one",
        "the last one",
        "the first",
        "the second",
        "the third",
        "the last",
    ):
        if phrase in lowered:
            return phrase
    return message.strip()


def _month_before(day: date) -> str:
    previous = day.replace(day=1) - timedelta(days=1)
    return f"{previous.year:04d}-{previous.month:02d}"


def _month_after(key: str) -> date:
    year, month = (int(part) for part in key.split("-"))
    return date(year + (month == 12), month % 12 + 1, 1)
