"""Which judge's verdict a case's verdict is: its score and pass mark are the case's.

A cascade's own score is a tally of its tiers, and a tier's that of its judges, so
"score 0.00" on a FAIL said little and "score 0.50" on a FAIL contradicted itself.
A case's score is instead the score of the judge that decided it, shown with the pass
mark that judge applied (``correctness 0.10 < 0.70``).
"""

from __future__ import annotations

from jurybox.core._judgment import Judgment, Status

#: The metadata key of the pass mark a judge applied (the case runner sets it on every judge it runs).
PASS_MARK_KEY = "threshold"
#: Voting strategies whose verdict is a number made of every member's score: no one member decided.
_WEIGHING = frozenset({"Average", "Median", "Weighted", "WeightedAverage"})
_DEEPEST = 64  # nested cascades a case verdict may hold; never a cycle, but never unbounded either


def deciding_judgment(judgment: Judgment) -> Judgment:
    """The verdict that decided ``judgment``: the judge whose score is the case's.

    Down a cascade's ``decided_by`` to the deciding tier; within a tier of several
    judges, the one that agrees with the tier's verdict with the lowest score (the
    judge that failed worst, or that passed by the least). For an ABSTAIN or ERROR
    verdict, the first judge under it that could not decide either. A verdict without
    members is its own decider.
    """
    node = judgment
    for _ in range(_DEEPEST):
        if not node.children:
            return node
        if node.decided_by is not None and node.decided_by in node.children:
            node = node.children[node.decided_by]
            continue
        agreeing = [child for child in node.children.values() if child.status is node.status]
        if node.status not in (Status.PASS, Status.FAIL):
            if not agreeing:
                return node
            node = agreeing[0]
            continue
        scored = [child for child in agreeing if child.value is not None]
        if not scored:
            return node
        if len(node.children) > 1 and node.metadata.get("voting") in _WEIGHING:
            # A jury that weighs its members (an average, a majority) decided as a whole.
            return node
        node = min(scored, key=lambda child: child.value if child.value is not None else 0.0)
        if node.decided_by is None:
            return node
    return node


def pass_mark(judgment: Judgment) -> float | None:
    """The pass mark a judge applied to its score (``metadata["threshold"]``), or None when it has none."""
    mark = judgment.metadata.get(PASS_MARK_KEY)
    return float(mark) if isinstance(mark, int | float) and not isinstance(mark, bool) else None


#: Characters of an undecided judge's reply a failure message, the console and JUnit show.
REPLY_SHOWN = 300
#: Where a judge keeps its model's last reply: jurybox's LLM judges say ``raw``; ``raw_output`` is a common spelling.
_RAW_KEYS = ("raw", "raw_output")


def undecided_reply(judgment: Judgment, limit: int = REPLY_SHOWN) -> str | None:
    """What an undecided judge actually replied (its last raw reply), cut to ``limit`` characters.

    For an ABSTAIN or ERROR verdict: the reply of the first judge under it that could not
    decide and kept its model's words (``metadata["raw"]``); None for a decided verdict or
    when no judge kept a reply (a provider outage has none).
    """
    if judgment.status not in (Status.ABSTAIN, Status.ERROR):
        return None
    for _, node in judgment.walk():
        raw = next((node.metadata[key] for key in _RAW_KEYS if isinstance(node.metadata.get(key), str)), None)
        if node.status in (Status.ABSTAIN, Status.ERROR) and isinstance(raw, str) and raw.strip():
            text = raw.strip()
            return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
    return None
