"""An offline heuristic that tells a clarifying question from an answer.

This is a heuristic, not a judge: it looks for a question that asks the user
to choose or specify something ("Which property...?", "Do you mean...?",
"Could you clarify...?") and that makes up most of the reply. An answer that
ends with an offer ("Would you like more details?") is not a clarification.
It exists so follow-ups work without a judge model; when one is configured,
use the model-backed detector (``jurybox.llm.clarification``) instead.
"""

from __future__ import annotations

import re

from jurybox.core import Context

# A question that asks the user to pick or pin down something.
_ASKS_TO_SPECIFY = re.compile(
    r"""\b(
        which|
        what\s+(?:period|time\s*frame|timeframe|date|dates|month|year|range|property|listing|one|kind|type)|
        for\s+(?:which|what)|
        do\s+you\s+mean|did\s+you\s+mean|are\s+you\s+(?:asking|referring|looking)|
        (?:could|can|would)\s+you\s+(?:please\s+)?(?:clarify|specify|confirm|tell\s+me|let\s+me\s+know|say)|
        please\s+(?:clarify|specify|confirm|tell\s+me|let\s+me\s+know)|
        \bor\b
    )""",
    re.IGNORECASE | re.VERBOSE,
)
# Closing offers that follow a complete answer; they do not ask for anything missing.
_OFFER = re.compile(
    r"\b(would\s+you\s+like\s+(?:me\s+to|more|any|to\s+see)|anything\s+else|let\s+me\s+know\s+if|"
    r"shall\s+i|should\s+i|do\s+you\s+want\s+me\s+to|want\s+me\s+to|need\s+anything)\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*")
# How much non-question text a clarification may carry (a short preamble such as
# "Happy to help with revenue."); more than this is an answer with a question at the end.
_MAX_PREAMBLE = 120
# Figures (money, percentages) outside the question mean the reply already answers something.
_FIGURE = re.compile(r"[$€£]\s?\d|\d\s?%")


def looks_like_clarification(text: str) -> bool:
    """Whether ``text`` reads as a clarifying question rather than an answer (heuristic).

    Args:
        text: The agent's reply.

    Returns:
        True when the reply contains a question asking the user to specify or
        choose something, no closing offer, and little text besides the question.
    """
    sentences = [s.strip() for s in _SENTENCE.findall(text) if s.strip()]
    questions = [s for s in sentences if s.endswith("?")]
    if not questions:
        return False
    clarifying = [q for q in questions if _ASKS_TO_SPECIFY.search(q) and not _OFFER.search(q)]
    if not clarifying:
        return False
    preamble = [s for s in sentences if not s.endswith("?")]
    if any(_FIGURE.search(s) for s in preamble):
        return False
    return sum(len(s) for s in preamble) <= _MAX_PREAMBLE


async def heuristic_is_clarification(context: Context) -> bool:
    """``run_conversation``'s default detector: ``looks_like_clarification(context.output)``."""
    return looks_like_clarification(context.output)
