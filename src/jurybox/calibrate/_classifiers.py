"""``FirstMatch``: a verdict read with one regular expression per label, as many published evaluators do.

``jurybox.llm.Choice`` reads a label from a pattern's captured group; evaluators
such as LLMBar's instead give one pattern per verdict (``"1": "Output \\(a\\) is
better."``) and take the first pattern, in the order listed, that matches
anywhere in the reply. ``FirstMatch`` is that rule as a jurybox classifier, so
their raw completions can be re-read offline with the evaluator's own rules.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from jurybox.core import CategoricalScore, Judgment, Status
from jurybox.llm import Found, Reading, read_verdict

OnConflict = Literal["order", "abstain"]


class FirstMatch:
    """One regex per label; the first label (in the order given) whose regex matches anywhere decides.

    Args:
        patterns: Label -> regex, tried in this order with ``re.search``
            (case-sensitive, as written).
        worth: Each label's score in 0..1 (default: the first label 1.0, the others 0.0).
        on_conflict: When patterns of two labels both match: ``"order"``
            (the label listed first wins: the published rule of such evaluators)
            or ``"abstain"`` (no verdict: the reply holds two).
        threshold: A label whose worth reaches it passes.

    Example:
        >>> FirstMatch({"A": r"Output \\(a\\)", "B": r"Output \\(b\\)"}).classify("Output (b)").metadata["label"]
        'B'
    """

    json_schema: Mapping[str, Any] | None = None

    def __init__(
        self,
        patterns: Mapping[str, str],
        *,
        worth: Mapping[str, float] | None = None,
        on_conflict: OnConflict = "abstain",
        threshold: float = 0.5,
    ) -> None:
        if not patterns:
            raise ValueError("FirstMatch needs at least one label pattern")
        if on_conflict not in ("order", "abstain"):
            raise ValueError(f"on_conflict must be 'order' or 'abstain', got {on_conflict!r}")
        self.patterns = {str(label): re.compile(pattern) for label, pattern in patterns.items()}
        labels = list(self.patterns)
        self.worth = {label: float((worth or {}).get(label, 1.0 if label == labels[0] else 0.0)) for label in labels}
        self.on_conflict = on_conflict
        self.threshold = float(threshold)
        self.format_hint = "exactly one of: " + ", ".join(p.pattern for p in self.patterns.values())

    def classify(self, text: str) -> Judgment:
        """The first listed label whose pattern matches; ABSTAIN when none does (or two do, if asked).

        Read under the rule every jurybox classifier shares (``jurybox.llm.read_verdict``): the
        reply in normal form, the model's own leading reasoning block removed.
        """
        return read_verdict(self, text)

    def find(self, text: str) -> Reading:
        """Every match of every label's pattern in ``text``, in text order."""
        found = [
            Found(label, match.group(0), match.start(), match.end(), label)
            for label, pattern in self.patterns.items()
            for match in pattern.finditer(text)
        ]
        found.sort(key=lambda item: item.start)
        return Reading(found, "no pattern matched")

    def choose(self, found: Sequence[Found]) -> Found:
        """The label listed first among those found: the published rule of such evaluators."""
        order = list(self.patterns)
        return min(found, key=lambda item: order.index(item.key))

    def decide(self, found: Found, raw: str, keys: Sequence[str]) -> Judgment:
        label = found.key
        score = CategoricalScore(label, self.worth)
        status = Status.PASS if score.normalized() >= self.threshold else Status.FAIL
        metadata: dict[str, Any] = {"raw": raw, "label": label}
        if len(keys) > 1:
            metadata["conflict"] = sorted(keys, key=list(self.patterns).index)
        return Judgment(status, score=score, reasoning=f"verdict {label}", metadata=metadata)

    def __repr__(self) -> str:
        shown = {label: pattern.pattern for label, pattern in self.patterns.items()}
        return f"FirstMatch({shown!r}, on_conflict={self.on_conflict!r})"
