"""The one rule every classifier reads a verdict from a judge's reply with.

1. The reply is put in the normal form (``normal_form``): the same form the
   material under judgment is compared in.
2. The model's own leading reasoning block is removed (``strip_think``), unless
   the material writes think tags itself: then nothing is removed, since a tag
   in the reply may be a quote.
3. The classifier finds *every* verdict in what is left, wherever it sits:
   fenced or bare, early or late, inside or outside tags the reply did not
   open as its own reasoning. Its strictest format found is the verdict's
   format (``Rating: [[8]]`` outranks a "3/10" said of one aspect on the way).
4. Two different verdicts in that format decide nothing (ABSTAIN naming them),
   unless the classifier was told otherwise (``on_conflict="last"``, or
   FirstMatch's published ``"order"``).
5. A passing verdict that the material under judgment also states, or that the
   reply quotes from it (whole, or cut short where a reply cut at the token
   limit ends), is not accepted: ABSTAIN, "an answer cannot grade itself". This
   step only ever turns a pass into an abstention.

Classifiers that implement ``VerdictReader`` (Choice, Rating, JsonVerdict,
calibrate's FirstMatch) get every step. Any other object with ``classify`` gets
what can be done from outside: its verdict must not change when the reply is put
in normal form, and a passing value the material states is not accepted.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from jurybox.core import Judgment, Status
from jurybox.llm._normal import normal_form
from jurybox.llm._text import mentions_think_tags, strip_think


@dataclass(frozen=True)
class Found:
    """One verdict a reader found in a text.

    Attributes:
        key: What verdicts are compared by: two different keys are a conflict,
            and a key the material states is planted (a label, or a number as text).
        text: The verdict-shaped text it was read from.
        start: Where that text starts.
        end: Where it ends.
        value: The reader's own reading (a label, a number, a validated verdict).
        rank: The format it was read in, 0 the strictest: only the strictest rank found counts.
        head: The part of ``text`` that, found in the material, shows the verdict is a quote
            (a JSON object's first member); empty for all of ``text``.
    """

    key: str
    text: str
    start: int
    end: int
    value: Any = None
    rank: int = 0
    head: str = ""


@dataclass(frozen=True)
class Reading:
    """Every verdict found in a text, in order, and why there is none when there is none."""

    found: list[Found] = field(default_factory=list)
    problem: str = "no verdict in the expected format"


@runtime_checkable
class VerdictReader(Protocol):
    """A classifier that can list every verdict in a text, so the shared rule can judge them.

    Attributes:
        on_conflict: ``"abstain"`` makes two different keys an ABSTAIN; any other
            value lets ``choose`` pick one.
        threshold: A verdict whose normalized score reaches it passes.
    """

    on_conflict: str
    threshold: float

    def find(self, text: str) -> Reading:
        """Every verdict in ``text`` (already in normal form, reasoning removed), in text order."""
        ...

    def choose(self, found: Sequence[Found]) -> Found:
        """The verdict to keep when ``found`` may disagree and conflicts do not abstain."""
        ...

    def decide(self, found: Found, raw: str, keys: Sequence[str]) -> Judgment:
        """The judgment for ``found``; ``raw`` is the reply as written, ``keys`` every distinct key found."""
        ...


# What may stand around a verdict in a text that holds nothing else ("**B**", "[[8]]", "(a).").
_DECORATION = " \t\r\n*_\"'`()[]."
_TOKEN = re.compile(r"[\w.]+")


def is_bare(text: str, found: Found) -> bool:
    """Whether ``text`` holds nothing but ``found``, and that is a bare value (``B``, ``8``, ``[[8]]``).

    A bare value has no verdict syntax of its own: "8" is no quote of "I have 8 apples",
    while ``VERDICT: PASS`` or ``8/10`` found in the material is.
    """
    return (
        not text[: found.start].strip(_DECORATION)
        and not text[found.end :].strip(_DECORATION)
        and _TOKEN.fullmatch(text[found.start : found.end].strip(_DECORATION)) is not None
    )


class Evidence(Protocol):
    """What the rule needs to know about the material under judgment (``jurybox.llm.Material``)."""

    @property
    def mentions_think_tags(self) -> bool: ...

    def repeats(self, reader: VerdictReader, found: Sequence[Found], body: str, *, cut: bool = False) -> str | None: ...

    def states_value(self, classifier: Any, value: float) -> str | None: ...


class _Nothing:
    mentions_think_tags = False

    def repeats(self, reader: VerdictReader, found: Sequence[Found], body: str, *, cut: bool = False) -> str | None:
        return None

    def states_value(self, classifier: Any, value: float) -> str | None:
        return None


NO_MATERIAL: Evidence = _Nothing()


def no_verdict(text: str, reason: str, **metadata: Any) -> Judgment:
    """The ABSTAIN judgment for a reply that holds no usable verdict."""
    return Judgment.abstained(
        f"no verdict could be read from the judge's reply: {reason}",
        metadata={"raw": text, "parse_error": reason, **metadata},
    )


def planted(raw: str, verdict: str, label: str) -> Judgment:
    """The ABSTAIN for a passing verdict the judged ``label`` states about itself."""
    reason = f"the reply's verdict ({verdict}) is one the judged {label} states about itself"
    reason += "; an answer cannot grade itself"
    return no_verdict(raw, reason, planted_in=label)


def read_verdict(classifier: Any, reply: str, material: Evidence | None = None, *, cut: bool = False) -> Judgment:
    """The verdict of ``reply`` read by ``classifier`` under the shared rule (see the module docs).

    Args:
        classifier: A ``VerdictReader`` (every step of the rule), or any object with ``classify``.
        reply: The judge model's reply, as written.
        material: The untrusted text the judge was shown (``Material``); None for none.
        cut: The reply was cut at the token limit, so it may end inside a quote.
    """
    evidence = NO_MATERIAL if material is None else material
    kind: type = type(classifier)
    if not _reads_verdicts(kind):
        return _outside(classifier, reply, evidence)
    reader: VerdictReader = classifier
    normal = normal_form(reply)
    # The material is searched for think tags only when the reply has some to strip.
    body = strip_think(normal, keep_tags=mentions_think_tags(normal) and evidence.mentions_think_tags)
    if not body:
        return no_verdict(reply, "the reply is empty (after removing reasoning blocks)")
    reading = reader.find(body)
    if not reading.found:
        return no_verdict(reply, reading.problem)
    strictest = min(found.rank for found in reading.found)
    verdicts = [found for found in reading.found if found.rank == strictest]
    keys = list(dict.fromkeys(found.key for found in verdicts))
    if len(keys) > 1 and getattr(reader, "on_conflict", "abstain") == "abstain":
        return no_verdict(reply, f"the reply holds conflicting verdicts: {', '.join(keys)}", conflict=keys)
    chosen = reader.choose(verdicts)
    judgment = reader.decide(chosen, reply, keys)
    if judgment.status is not Status.PASS:
        return judgment
    same = [found for found in verdicts if found.key == chosen.key]
    where = evidence.repeats(reader, same, body, cut=cut)
    return judgment if where is None else planted(reply, chosen.key, where)


@functools.cache
def _reads_verdicts(kind: type) -> bool:
    # Checked once per class: a runtime Protocol check on every reply costs more than reading it.
    return all(callable(getattr(kind, name, None)) for name in ("find", "choose", "decide"))


def _outside(classifier: Any, reply: str, evidence: Evidence) -> Judgment:
    """The rule as far as it reaches a classifier that only has ``classify``."""
    judgment: Judgment = classifier.classify(reply)
    normal = normal_form(reply)
    if normal != reply and _outcome(classifier.classify(normal)) != _outcome(judgment):
        reason = "the verdict changes when look-alike and invisible characters are folded"
        return no_verdict(reply, reason)
    if judgment.status is Status.PASS and judgment.value is not None:
        where = evidence.states_value(classifier, judgment.value)
        if where is not None:
            return planted(reply, f"{judgment.value:.3g}", where)
    return judgment


def _outcome(judgment: Judgment) -> tuple[Status, float | None]:
    return judgment.status, judgment.value
