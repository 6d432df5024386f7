"""Reading a host's message: what they ask about, for which property, and for which period.

Plain rules over the text, tuned to how hosts talk about their rentals. The
built-in policy uses them when no model is configured.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

INTENTS = ("revenue", "occupancy", "bookings", "details", "listings")

_INTENT_PATTERNS: Mapping[str, re.Pattern[str]] = {
    "revenue": re.compile(
        r"\b(revenue|earn(ed|ings|ing|s)?|income|made|make|money|sales|payouts?|gross|turnover|profit)\b", re.I
    ),
    "occupancy": re.compile(
        r"\b(occupancy|occupied|utili[sz]ation|how (busy|full)|booked nights|nights booked|vacan(cy|cies|t))\b", re.I
    ),
    "bookings": re.compile(
        r"\b(bookings?|reservations?|booked|guests?|check[- ]?ins?|stays?|arrivals?|who('s| is) (staying|coming))\b",
        re.I,
    ),
    "details": re.compile(
        r"\b(details?|tell me (more )?about|info(rmation)?|describe|amenit(y|ies)|bedrooms?|bathrooms?|address|"
        r"located|where is|nightly rate|price|rate|cleaning fee|rating|sleeps|capacity|how many guests)\b",
        re.I,
    ),
    "listings": re.compile(
        r"\b(listings|properties|places|homes|rentals|units|portfolio|what do i (have|own)|"
        r"how many (listings|properties))\b",
        re.I,
    ),
}
_CAPACITY = re.compile(r"\b(how many guests|sleeps?|capacity|max(imum)? guests)\b", re.I)
_GREETING = re.compile(r"^\s*(hi|hello|hey|good (morning|afternoon|evening))\b", re.I)
_HELP = re.compile(r"\b(help|what can you do|how does this work)\b", re.I)
_THANKS = re.compile(r"\b(thanks|thank you|cheers|great|perfect)\b", re.I)
_ALL = re.compile(
    r"\b(all( of them| properties| listings| three| my)?|every(thing| property| listing)?|each|whole portfolio|"
    r"portfolio|overall|combined|across|in total|total)\b",
    re.I,
)
_ORDINALS = {"first": 0, "1st": 0, "second": 1, "2nd": 1, "third": 2, "3rd": 2, "fourth": 3, "4th": 3}
_ORDINAL = re.compile(
    r"\b(first|1st|second|2nd|third|3rd|fourth|4th)\b(?!\s+(quarter|half|week|month|time|year))", re.I
)
_NUMBERED = re.compile(r"(?:#|\bnumber\s+|\bno\.\s*|\blisting\s+|\bproperty\s+)([1-9])\b", re.I)
_LAST_ONE = re.compile(r"\b(the\s+)?last\s+(one|listing|property|place)\b|\blast on the list\b", re.I)
_PRONOUN = re.compile(
    r"\b(it|its|it's|that one|this one|that property|this property|that listing|this listing|that place|"
    r"same one|there)\b",
    re.I,
)

_MONTHS = {name.lower(): number for number, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): number for number, name in enumerate(calendar.month_abbr) if name})
_MONTHS["sept"] = 9
_MONTH_WORD = re.compile(
    r"\b(january|february|march|april|may|june|july|august|september|october|november|december|"
    r"jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\b\.?(?:\s+(20\d{2}))?",
    re.I,
)
_NUMBER_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "twelve": 12}


@dataclass(frozen=True)
class Period:
    """A range of whole months, inclusive, with a label for replies."""

    start_month: str
    end_month: str
    label: str

    def to_dict(self) -> dict[str, str]:
        return {"start_month": self.start_month, "end_month": self.end_month, "label": self.label}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Period:
        return cls(str(data["start_month"]), str(data["end_month"]), str(data["label"]))


def month_label(key: str) -> str:
    year, month = (int(part) for part in key.split("-"))
    return f"{calendar.month_name[month]} {year}"


def range_label(start: str, end: str) -> str:
    if start == end:
        return month_label(start)
    (y1, m1), (y2, m2) = ((int(p) for p in k.split("-")) for k in (start, end))
    if y1 == y2:
        return f"{calendar.month_name[m1]}–{calendar.month_name[m2]} {y1}"
    return f"{month_label(start)}–{month_label(end)}"


def _key(year: int, month: int) -> str:
    while month < 1:
        month += 12
        year -= 1
    while month > 12:
        month -= 12
        year += 1
    return f"{year:04d}-{month:02d}"


def _span(start: str, end: str, label: str | None = None) -> Period:
    return Period(start, end, label or range_label(start, end))


def parse_period(text: str, as_of: date) -> Period | None:
    """The period a message names, relative to the platform's "today" (``as_of``), or None.

    Understands month names (with or without a year), ``2026-06``, month
    ranges ("March to May"), quarters ("Q2", "last quarter"), halves, "last
    month", "this month", "last N months", "this year"/"year to date",
    "last year", a bare year, and "all time".
    """
    lowered = text.lower()
    year, month = as_of.year, as_of.month
    previous = _key(year, month - 1)
    if re.search(r"\b(all[- ]time|ever|since (the )?start|to date overall)\b", lowered):
        return _span("2000-01", previous, "all time")
    if re.search(r"\blast month\b|\bprevious month\b|\bpast month\b", lowered):
        return _span(previous, previous)
    if re.search(r"\bthis month\b|\bcurrent month\b|\bmonth to date\b", lowered):
        current = _key(year, month)
        return _span(current, current)
    match = re.search(r"\b(?:last|past|previous)\s+(\d+|two|three|four|five|six|twelve)\s+months\b", lowered)
    if match:
        count = int(match.group(1)) if match.group(1).isdigit() else _NUMBER_WORDS[match.group(1)]
        return _span(
            _key(year, month - count),
            previous,
            f"the last {count} months ({range_label(_key(year, month - count), previous)})",
        )
    quarter = _parse_quarter(lowered, as_of)
    if quarter is not None:
        return quarter
    if re.search(r"\b(first half|h1)\b", lowered):
        y = _year_in(lowered) or year
        return _span(f"{y}-01", f"{y}-06", f"the first half of {y}")
    if re.search(r"\b(second half|h2)\b", lowered):
        y = _year_in(lowered) or year
        return _span(f"{y}-07", f"{y}-12", f"the second half of {y}")
    if re.search(r"\b(this year|ytd|year[- ]to[- ]date|so far)\b", lowered):
        return _span(f"{year}-01", previous, f"year to date ({range_label(f'{year}-01', previous)})")
    if re.search(r"\blast year\b|\bprevious year\b", lowered):
        return _span(f"{year - 1}-01", f"{year - 1}-12", str(year - 1))
    months = list(_months_in(text, year))
    if months:
        return _span(min(months), max(months))
    iso = re.findall(r"\b(20\d{2})-(0[1-9]|1[0-2])\b", text)
    if iso:
        keys = [f"{y}-{m}" for y, m in iso]
        return _span(min(keys), max(keys))
    bare_year = _year_in(lowered)
    if bare_year is not None:
        return _span(f"{bare_year}-01", f"{bare_year}-12", str(bare_year))
    return None


def _year_in(lowered: str) -> int | None:
    match = re.search(r"\b(20\d{2})\b(?!-)", lowered)
    return int(match.group(1)) if match else None


def _parse_quarter(lowered: str, as_of: date) -> Period | None:
    current = (as_of.month - 1) // 3 + 1
    number: int | None = None
    year = as_of.year
    match = re.search(r"\bq([1-4])\b(?:\s+(20\d{2}))?", lowered)
    words = re.search(r"\b(first|second|third|fourth|1st|2nd|3rd|4th)\s+quarter\b", lowered)
    if match:
        number = int(match.group(1))
        year = int(match.group(2)) if match.group(2) else year
    elif words:
        number = _ORDINALS[words.group(1)] + 1
        year = _year_in(lowered) or year
    elif re.search(r"\b(last|previous)\s+quarter\b", lowered):
        number = current - 1 if current > 1 else 4
        year = year if current > 1 else year - 1
    elif re.search(r"\bthis quarter\b", lowered):
        number = current
    if number is None:
        return None
    start = _key(year, 3 * number - 2)
    return _span(start, _key(year, 3 * number), f"Q{number} {year}")


def _months_in(text: str, default_year: int) -> Iterable[str]:
    for match in _MONTH_WORD.finditer(text):
        word = match.group(1).lower()
        # "may" is a month only where it reads like one ("in May", "May 2026", or the whole message).
        if word == "may" and not (
            match.group(2)
            or re.search(r"\b(in|for|of|during|since|and|to|through|until)\s+may\b", text, re.I)
            or re.fullmatch(r"\W*may\W*", text, re.I)
        ):
            continue
        year = int(match.group(2)) if match.group(2) else default_year
        yield _key(year, _MONTHS[word])


def detect_intents(text: str) -> list[str]:
    """What the message asks about, most specific first (revenue, occupancy, bookings, details, listings)."""
    found = [intent for intent in INTENTS if _INTENT_PATTERNS[intent].search(text)]
    if "bookings" in found and ("occupancy" in found or _CAPACITY.search(text)):
        # "booked nights" is an occupancy question; "how many guests does it sleep" a details one.
        found.remove("bookings")
    return found


_OFF_TOPIC = re.compile(
    r"\b(weather|forecast|rain|news|stocks?|restaurants?|flights?|traffic|recipes?|sports?|movies?)\b", re.I
)


_KNOWLEDGE = re.compile(
    r"\b(what time|check[- ]?in time|check[- ]?outs?|rules?|polic(y|ies)|allowed|permitted|pets?|dogs?|cats?|"
    r"smok(e|ing)|part(y|ies)|quiet hours|noise|noisy|loud|parking|park|wi-?fi password|keys?|lockbox|door code|"
    r"lock code|instructions?|reviews?|feedback|complain(ed|ts?)?|snow chains|firewood|"
    r"(guests?|people|they) (say|said|think|thought|like|liked))\b",
    re.I,
)


def asks_knowledge(text: str) -> bool:
    """Whether the message asks what the host's documents say (rules, check-in, pets, parking, reviews...)."""
    return bool(_KNOWLEDGE.search(text))


def off_topic(text: str) -> bool:
    """Whether the message is about something the assistant does not handle (weather, news...)."""
    return bool(_OFF_TOPIC.search(text))


def is_greeting(text: str) -> bool:
    return bool(_GREETING.search(text))


def asks_for_help(text: str) -> bool:
    return bool(_HELP.search(text))


def is_thanks(text: str) -> bool:
    return bool(_THANKS.search(text)) and len(text.split()) <= 6


def says_all(text: str) -> bool:
    return bool(_ALL.search(text))


def listing_aliases(listings: Sequence[Mapping[str, Any]]) -> dict[int, list[str]]:
    """Words a host may use for each listing: its name, distinctive name words, type and town."""
    stop = {"the", "my", "a", "an", "ca"}
    aliases: dict[int, list[str]] = {}
    for listing in listings:
        words = {listing["name"].lower()}
        words.update(w for w in listing["name"].lower().split() if w not in stop)
        words.add(listing["property_type"].lower())
        town = listing["city"].split(",")[0].lower()
        words.add(town)
        words.update(w for w in town.split() if len(w) > 4)
        aliases[listing["id"]] = sorted(words, key=len, reverse=True)
    # A word two listings share ("house" if there were two houses) names neither.
    counts: dict[str, int] = {}
    for names in aliases.values():
        for word in names:
            counts[word] = counts.get(word, 0) + 1
    extra = {"apartment": ["apt", "flat", "condo"], "cabin": ["chalet", "tahoe"], "house": ["beach"]}
    for listing in listings:
        unique = [w for w in aliases[listing["id"]] if counts[w] == 1]
        unique.extend(extra.get(listing["property_type"].lower(), []))
        aliases[listing["id"]] = unique
    return aliases


def named_listings(text: str, listings: Sequence[Mapping[str, Any]]) -> list[int]:
    """Ids of the listings the text names, in the order they are mentioned."""
    # "house rules" names no house.
    lowered = re.sub(r"\bhouse[- ]rules\b", "rules", text.lower())
    positions: dict[int, int] = {}
    for listing_id, words in listing_aliases(listings).items():
        for word in words:
            match = re.search(rf"\b{re.escape(word)}s?\b", lowered)
            if match:
                positions[listing_id] = min(positions.get(listing_id, match.start()), match.start())
    return sorted(positions, key=positions.__getitem__)


def ordinal_reference(text: str) -> int | None:
    """The 0-based position a message points at ("the first one", "#2"), -1 for "the last one", or None."""
    match = _ORDINAL.search(text)
    if match:
        return _ORDINALS[match.group(1).lower()]
    match = _NUMBERED.search(text)
    if match:
        return int(match.group(1)) - 1
    if _LAST_ONE.search(text):
        return -1
    return None


def refers_back(text: str) -> bool:
    """Whether the message points at something said before ("it", "that one")."""
    return bool(_PRONOUN.search(text))


def booking_status(text: str) -> str | None:
    """Which bookings a message wants: confirmed (upcoming), completed (past), cancelled, or None (unsaid)."""
    lowered = text.lower()
    if re.search(r"\bcancel", lowered):
        return "cancelled"
    if re.search(r"\b(past|previous|completed|finished|last|earlier|had)\b", lowered):
        return "completed"
    if re.search(r"\b(upcoming|next|future|coming|confirmed|scheduled|arriving)\b", lowered):
        return "confirmed"
    return None
