"""An offline heuristic that tells a clarifying question from an answer.

This is a heuristic, not a judge. A reply is a clarification when it ends by
asking the user for something it needs: an open question ("Which listing...?",
"How many guests...?"), a choice ("... the Beach House or the Cabin?"), a
request to pin something down ("Do you mean...?", "Could you clarify...?",
"Please specify the date."), and carries little else. An answer that ends with
an offer ("Would you like more details?", "Anything else?") is not one, nor is
an answer that opens with a rhetorical question and then answers it. It exists
so follow-ups work without a judge model; when one is configured, use the
model-backed detector (``jurybox.llm.clarification``) instead.
tests/agents/test_clarification_corpus.py measures it on a written corpus.
"""

from __future__ import annotations

import re

from jurybox.core import Context

# An open question: it asks the user to supply a value, not to say yes or no.
# It may open a clause after a lead-in ("Sure, which one?", "Before I change it: which listing?").
_OPEN_QUESTION = re.compile(
    r"(?:^|[,:;\u2013\u2014]|\s-)\s*(?:which|what|whose|who|whom|where|when|"
    r"how\s+(?:many|much|long|far|often|would|should|do|does|did))\b",
    re.IGNORECASE,
)
# A question or request that asks the user to pick or pin down something.
_ASKS_TO_SPECIFY = re.compile(
    r"""\b(
        for\s+(?:which|what)|
        do\s+you\s+mean|did\s+you\s+mean|are\s+you\s+(?:asking|referring|looking|after)|are\s+we\s+talking|
        (?:could|can|would)\s+you\s+(?:please\s+)?
            (?:clarify|specify|confirm|tell\s+me|let\s+me\s+know|say|give\s+me|provide|share)|
        please\s+(?:clarify|specify|confirm|tell\s+me|let\s+me\s+know|provide|give\s+me|share)|
        \bor\b
    )""",
    re.IGNORECASE | re.VERBOSE,
)
# Closing offers that follow a complete answer; they do not ask for anything missing.
_OFFER = re.compile(
    r"\b(would\s+you\s+like\s+(?:me\s+to|more|any|to\s+see)|anything\s+else|what\s+else|how\s+else|"
    r"let\s+me\s+know\s+if|shall\s+i|should\s+i|do\s+you\s+want\s+me\s+to|want\s+me\s+to|need\s+anything)\b",
    re.IGNORECASE,
)
# A request that is not phrased as a question ("Please specify the check-in date.").
_REQUEST = re.compile(r"^\W*please\s+(?:clarify|specify|confirm|tell\s+me|let\s+me\s+know|provide|give|share)\b", re.I)
# A sentence after the question telling the user how they may reply, or what the choices are.
_HINT = re.compile(
    r"\b(?:for\s+example|for\s+instance|e\.g|such\s+as|you\s+can\s+(?:also\s+)?(?:say|pick|choose|reply|answer)|"
    r"just\s+(?:say|reply)|reply\s+with|or)\b",  # "or": the choices ("You have A, B or C.")
    re.IGNORECASE,
)
_CHOICE = re.compile(r"\bor\b", re.IGNORECASE)
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*")
# How much non-question text a clarification may carry (a short preamble such as
# "Happy to help with revenue."); more than this is an answer with a question at the end.
_MAX_PREAMBLE = 120
# Figures (money, percentages) outside the question mean the reply already answers something.
_FIGURE = re.compile(r"[$€£]\s?\d|\d\s?%")


def _asks_for_something(sentence: str) -> bool:
    """Whether one question (or request) asks the user to supply or choose something."""
    if _REQUEST.search(sentence):
        return True
    if not sentence.endswith("?"):
        return False
    if _OPEN_QUESTION.search(sentence):
        # "Which listing would you like to see?" asks; "What else can I do?" offers.
        return not re.search(r"\b(?:what|how)\s+else\b|\banything\s+else\b", sentence, re.IGNORECASE)
    if _CHOICE.search(sentence):
        return True  # "Should I send it to the guest or to the cleaner?" is a choice, not an offer
    return bool(_ASKS_TO_SPECIFY.search(sentence)) and not _OFFER.search(sentence)


def looks_like_clarification(text: str) -> bool:
    """Whether ``text`` reads as a clarifying question rather than an answer (heuristic).

    Args:
        text: The agent's reply.

    Returns:
        True when the reply asks the user to supply or choose something (a question
        or a "please specify" request that is not a closing offer), nothing but a
        hint on how to reply follows it, and little text and no figures precede it.
    """
    sentences = [s.strip() for s in _SENTENCE.findall(text) if s.strip()]
    asking = [i for i, sentence in enumerate(sentences) if _asks_for_something(sentence)]
    if not asking:
        return False
    # After the question may come a hint on how to reply ("For example ..."); anything else answers
    # it, which makes it rhetorical: "Who doesn't love a sea view? The house has one from every room."
    trailing = sentences[asking[-1] + 1 :]
    if not all(_HINT.search(s) for s in trailing):
        return False
    preamble = [s for s in sentences if not s.endswith("?") and not _REQUEST.search(s)]
    if any(_FIGURE.search(s) for s in preamble):
        return False
    return sum(len(s) for s in preamble) <= _MAX_PREAMBLE


async def heuristic_is_clarification(context: Context) -> bool:
    """``run_conversation``'s default detector: ``looks_like_clarification(context.output)``."""
    return looks_like_clarification(context.output)
