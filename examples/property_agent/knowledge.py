"""The host's knowledge base: house rules, check-in instructions, notes and guest reviews, searched offline.

Documents come from seed records (``jurybox.suites`` loads them from Markdown
files with YAML front matter and hands them to ``make_agent(seeds=...)``). Each
applies to the listings its ``listing`` / ``applies_to`` fields or listing tags
(``beach-house``) name, or to every listing when it names none.

Search is lexical and deterministic: words are normalized (``check in`` ->
``checkin``, ``dogs`` -> ``pet``), listing names are left out of the query (they
choose the documents, they are not the topic), and documents are ranked with
BM25. A question whose topic words match nothing gets no hits, so the caller
can say it does not know instead of answering from an unrelated document.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from examples.property_agent.language import listing_aliases, named_listings

MAX_HITS = 4
RELATIVE_CUTOFF = 0.5  # keep hits scoring at least half the best one
_BM25_K1 = 1.2
_BM25_B = 0.75

TYPE_LABELS = {
    "check-in": "check-in instructions",
    "house-rules": "house rules",
    "host-note": "host's note",
    "review": "guest review",
}

# Phrases folded into one token before splitting into words.
_PHRASES = (
    (re.compile(r"\bcheck[- ]?ins?\b"), " checkin "),
    (re.compile(r"\bcheck[- ]?outs?\b"), " checkout "),
    (re.compile(r"\bwi[- ]?fi\b"), " wifi "),
    (re.compile(r"\bhot[- ]tub\b"), " hottub "),
    (re.compile(r"\bsnow chains?\b"), " snowchain "),
)
_SYNONYMS = {
    "dog": "pet",
    "dogs": "pet",
    "cat": "pet",
    "cats": "pet",
    "pets": "pet",
    "arrive": "checkin",
    "arrival": "checkin",
    "arriving": "checkin",
    "departure": "checkout",
    "leave": "checkout",
    "loud": "noise",
    "noisy": "noise",
    "quiet": "noise",
    "parties": "party",
    "event": "party",
    "events": "party",
    "smoke": "smoking",
    "smoker": "smoking",
    "keys": "key",
    "lockbox": "key",
    "lock": "key",
    "locker": "key",
    "car": "parking",
    "cars": "parking",
    "park": "parking",
    "garage": "parking",
    "reviews": "review",
    "reviewed": "review",
    "feedback": "review",
    "say": "review",
    "said": "review",
    "says": "review",
    "complain": "review",
    "complained": "review",
    "complaint": "review",
    "complaints": "review",
    "rules": "rule",
    "policy": "rule",
    "policies": "rule",
    "fireplace": "fire",
    "firewood": "fire",
    "internet": "wifi",
}
_STOPWORD_TEXT = """a about after all also am an and any are as at be before by can could did do does for from get
    got has have how i if in is it its it's me my of on or our please should so some tell than that the their them then
    there these they this to up us was we were what when where which who will with would you your yours
    guests guest stay stays many much one ones first second third last allow allowed permitted"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_CANONICAL = frozenset(_SYNONYMS.values())
_WORD = re.compile(r"[a-z0-9$]+(?:'[a-z]+)?")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def tokens(text: str) -> list[str]:
    """Normalized content words of ``text`` (phrases folded, synonyms mapped, plurals stripped, stopwords out)."""
    lowered = text.lower()
    for pattern, replacement in _PHRASES:
        lowered = pattern.sub(replacement, lowered)
    found = []
    for raw in _WORD.findall(lowered):
        word = raw.removesuffix("'s")
        if word in _STOPWORDS:
            continue
        word = _SYNONYMS.get(word, word)
        found.append(word if word in _CANONICAL else _singular(word))
    return found


def _singular(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us")):
        return word[:-1]
    return word


class KnowledgeError(ValueError):
    """A seed record the knowledge base cannot use; the message names the record and field."""


@dataclass(frozen=True)
class Document:
    """One seed record as the assistant uses it.

    Attributes:
        id: The seed's id (cited in answers and sources).
        type: ``check-in``, ``house-rules``, ``host-note``, ``review``...
        body: The Markdown text.
        listings: Names of the listings it applies to; empty means every listing.
        tags: The seed's tags.
        source: Who wrote it (``host``, ``guest-review``...).
        valence: The seed's valence (a word or a number), if any.
        extra: The other front-matter fields (``rating``, ``stay``...).
    """

    id: str
    type: str
    body: str
    listings: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    source: str | None = None
    valence: float | str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return TYPE_LABELS.get(self.type, self.type.replace("-", " "))

    @property
    def title(self) -> str:
        where = " and ".join(self.listings) if self.listings else "all listings"
        return f"{self.label[0].upper()}{self.label[1:]} ({where})"

    def as_source(self) -> str:
        """The document as a reply's source: its id and title, then its text."""
        return f"[{self.id}] {self.title}\n{self.body}"

    def applies_to(self, listing_names: Sequence[str]) -> bool:
        return not self.listings or not listing_names or bool(set(self.listings) & set(listing_names))


@dataclass(frozen=True)
class Hit:
    """A document that matched a question, its BM25 score and the sentences that matched."""

    document: Document
    score: float
    sentences: tuple[str, ...]


class KnowledgeBase:
    """Searchable host documents; see the module docstring."""

    def __init__(self, documents: Sequence[Document], listings: Sequence[Mapping[str, Any]] = ()) -> None:
        self.documents = tuple(documents)
        self.listings = [dict(row) for row in listings]
        self._names = [str(row["name"]) for row in self.listings]
        self._aliases = {word for words in listing_aliases(self.listings).values() for word in words}
        self._aliases.update(word for name in self._names for word in name.lower().split())
        self._terms = [Counter(self._document_tokens(d)) for d in self.documents]
        lengths = [sum(terms.values()) for terms in self._terms]
        self._average_length = sum(lengths) / len(lengths) if lengths else 0.0
        self._document_frequency: Counter[str] = Counter()
        for terms in self._terms:
            self._document_frequency.update(set(terms))

    @classmethod
    def from_seeds(cls, seeds: Iterable[Mapping[str, Any]], listings: Sequence[Mapping[str, Any]]) -> KnowledgeBase:
        """Build from seed records (``Seed.to_dict()`` mappings) and the platform's listings.

        Raises:
            KnowledgeError: a record without ``id``/``type``/``body`` text, a
                duplicate id, or a ``listing``/``applies_to`` naming no listing.
        """
        names = {str(row["name"]).lower(): str(row["name"]) for row in listings}
        slugs = {name.replace(" ", "-"): name for name in names.values()}
        slugs = {slug.lower(): name for slug, name in slugs.items()}
        documents: list[Document] = []
        seen: set[str] = set()
        for index, seed in enumerate(seeds):
            if not isinstance(seed, Mapping):
                raise KnowledgeError(f"seeds[{index}]: a seed record is a mapping, got {type(seed).__name__}")
            where = f"seed {seed.get('id')!r}" if isinstance(seed.get("id"), str) else f"seeds[{index}]"
            for key in ("id", "type", "body"):
                if not isinstance(seed.get(key), str) or not seed[key].strip():
                    raise KnowledgeError(f"{where}: field {key!r} must be non-empty text")
            if seed["id"] in seen:
                raise KnowledgeError(f"{where}: duplicate seed id")
            seen.add(seed["id"])
            tags = tuple(str(tag) for tag in seed.get("tags") or ())
            applies: list[str] = []
            for key in ("listing", "applies_to"):
                value = seed.get(key)
                for item in [value] if isinstance(value, str) else list(value or ()):
                    name = names.get(str(item).lower())
                    if name is None:
                        choices = ", ".join(names.values())
                        raise KnowledgeError(
                            f"{where}: field {key!r} names {item!r}, which is not a listing ({choices})"
                        )
                    applies.append(name)
            if not applies:
                applies = [slugs[tag.lower()] for tag in tags if tag.lower() in slugs]
            if set(applies) >= set(names.values()):
                applies = []  # a note for every listing is a general one
            known = {"id", "type", "body", "source", "tags", "valence", "listing", "applies_to"}
            documents.append(
                Document(
                    id=seed["id"],
                    type=seed["type"],
                    body=seed["body"].strip(),
                    listings=tuple(dict.fromkeys(applies)),
                    tags=tags,
                    source=seed.get("source"),
                    valence=seed.get("valence"),
                    extra={key: value for key, value in seed.items() if key not in known},
                )
            )
        return cls(documents, listings)

    @classmethod
    def load(cls, path: str | Path, listings: Sequence[Mapping[str, Any]]) -> KnowledgeBase:
        """Load a folder (or file) of seed Markdown files with jurybox's seed loader."""
        from jurybox.suites import load_seeds

        return cls.from_seeds((seed.to_dict() for seed in load_seeds(path)), listings)

    def __len__(self) -> int:
        return len(self.documents)

    def get(self, document_id: str) -> Document | None:
        return next((d for d in self.documents if d.id == document_id), None)

    def topic(self, question: str) -> list[str]:
        """The question's topic words: its content words without the listing names."""
        return [word for word in tokens(question) if word not in self._aliases]

    def search(self, question: str, listing_ids: Sequence[int] = (), limit: int = MAX_HITS) -> list[Hit]:
        """Documents about the question's topic for those listings (all when none), best first.

        A listing named in the question narrows the search to its documents
        and the general ones; ``listing_ids`` does the same when the question
        names none (a follow-up about "it").
        """
        topic = set(self.topic(question))
        if not topic or not self.documents:
            return []
        ids = named_listings(question, self.listings) or list(listing_ids)
        wanted = [str(row["name"]) for row in self.listings if row["id"] in ids]
        scored: list[tuple[float, int, Document]] = []
        for position, (document, terms) in enumerate(zip(self.documents, self._terms, strict=True)):
            if not document.applies_to(wanted):
                continue
            score = self._bm25(topic, terms)
            if score > 0:
                scored.append((score, position, document))
        if "review" in topic:
            # "What do guests say about...": the reviews are the answer, not every note that mentions guests,
            # and "complaints about noise" wants the reviews that talk about noise.
            scored = [item for item in scored if item[2].type == "review"]
            specific = topic - {"review"}
            about = [item for item in scored if specific & set(self._terms[item[1]])]
            scored = about or scored
        else:
            # A guest's opinion is not the host's rule: "what is the Wi-Fi password?" is not answered by
            # a review praising fast Wi-Fi.
            scored = [item for item in scored if item[2].type != "review"]
        if not scored:
            return []
        best = max(score for score, _, _ in scored)
        kept = sorted((item for item in scored if item[0] >= RELATIVE_CUTOFF * best), key=lambda i: (-i[0], i[1]))
        return [Hit(d, round(s, 4), self._sentences(d, topic, wanted)) for s, _, d in kept[:limit]]

    def _document_tokens(self, document: Document) -> list[str]:
        # The type and tags count twice: they say what the document is about.
        labels = tokens(" ".join([document.type.replace("-", " "), *(t.replace("-", " ") for t in document.tags)]))
        return tokens(document.body) + labels * 2

    def _bm25(self, topic: set[str], terms: Counter[str]) -> float:
        total = len(self.documents)
        length = sum(terms.values())
        score = 0.0
        for word in topic:
            frequency = terms.get(word, 0)
            if not frequency:
                continue
            df = self._document_frequency[word]
            idf = math.log(1 + (total - df + 0.5) / (df + 0.5))
            norm = _BM25_K1 * (1 - _BM25_B + _BM25_B * length / (self._average_length or 1))
            score += idf * frequency * (_BM25_K1 + 1) / (frequency + norm)
        return score

    def _sentences(self, document: Document, topic: set[str], wanted: Sequence[str]) -> tuple[str, ...]:
        """The body's sentences about the topic; in a general note, not those only about other listings."""
        sentences = [s.strip() for s in _SENTENCE.split(" ".join(document.body.split())) if s.strip()]
        matching = [s for s in sentences if topic & set(tokens(s))]
        if wanted and not document.listings:
            others = [name for name in self._names if name not in wanted]
            matching = [
                s for s in matching if any(n in s for n in wanted) or not any(n in s for n in others)
            ] or matching
        return tuple(matching or sentences)


def review_line(document: Document) -> str:
    """One review for an answer: rating, stay dates and valence, then the guest's words."""
    facts = []
    rating = document.extra.get("rating")
    if isinstance(rating, int | float):
        facts.append(f"{rating:g}/5")
    stay = document.extra.get("stay")
    if isinstance(stay, str) and "/" in stay:
        facts.append(f"stayed {_stay_label(stay)}")
    if isinstance(document.valence, str):
        facts.append(document.valence)
    head = ", ".join(facts)
    text = " ".join(document.body.split())
    return f'• {head}: "{text}"' if head else f'• "{text}"'


def _stay_label(stay: str) -> str:
    try:
        start, end = (date.fromisoformat(part) for part in stay.split("/", 1))
    except ValueError:
        return stay
    if (start.year, start.month) == (end.year, end.month):
        return f"{start:%b} {start.day}–{end.day}, {start.year}"
    return f"{start:%b} {start.day}–{end:%b} {end.day}, {end.year}"


def average_rating(documents: Iterable[Document]) -> float | None:
    ratings = [d.extra["rating"] for d in documents if isinstance(d.extra.get("rating"), int | float)]
    return sum(ratings) / len(ratings) if ratings else None
