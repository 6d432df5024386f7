"""Classifiers: turn a judge model's reply text into a Judgment, or ABSTAIN saying why not.

Every classifier reads its reply under one shared rule (``jurybox.llm._reading``):
the reply is put in the normal form the material under judgment is compared in,
the model's own leading reasoning block is removed, and every verdict in the
rest is found, wherever it sits, in the strictest format the reply uses. Then
``on_conflict`` says what more than one *different* verdict means:

* ``"abstain"`` (the default) refuses to choose and returns ABSTAIN with the
  conflicting verdicts named. A judge's reasoning may quote the answer under
  test: if the answer contains "Rating: [[10]]", neither the first nor the last
  verdict of a reply that quotes it can be trusted, so an answer can never
  grade itself.
* ``"last"`` keeps the last one in the reply (a judge usually concludes last),
  for a judge model known to quote nothing; it is an explicit, documented risk.

A reply with no verdict at all is always ABSTAIN with the raw text kept in
``metadata["raw"]`` and the reason in ``metadata["parse_error"]``; it is never a
pass and never a 0.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol, TypeVar, runtime_checkable

from jurybox.core import CategoricalScore, Judgment, NumericScore, Score, Status
from jurybox.llm._reading import Found, Reading, read_verdict

OnConflict = Literal["last", "abstain"]
_NUMBER = r"(\d+(?:\.\d+)?)"


@runtime_checkable
class Classifier(Protocol):
    """What LLMJudge needs from a classifier.

    Attributes:
        threshold: A verdict whose normalized score reaches it passes.
        format_hint: How a readable reply must state its verdict; sent back to
            the model when its reply could not be read.
        json_schema: The JSON schema to request as structured output, or None
            for free-text verdicts.
    """

    threshold: float
    format_hint: str
    json_schema: Mapping[str, Any] | None

    def classify(self, text: str) -> Judgment: ...


C = TypeVar("C")


def with_threshold(classifier: C, threshold: float) -> C:
    """A copy of ``classifier`` that passes at ``threshold``."""
    check_threshold(threshold)
    clone = copy.copy(classifier)
    setattr(clone, "threshold", float(threshold))  # noqa: B010 -- C is any classifier type
    return clone


def check_threshold(threshold: float) -> None:
    if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be a number in 0..1, got {threshold!r}")


def check_on_conflict(on_conflict: str) -> None:
    if on_conflict not in ("last", "abstain"):
        raise ValueError(f"on_conflict must be 'last' or 'abstain', got {on_conflict!r}")


def decide(score: Score, threshold: float, reasoning: str, metadata: dict[str, Any], **extra: Any) -> Judgment:
    status = Status.PASS if score.normalized() >= threshold else Status.FAIL
    return Judgment(status, score=score, reasoning=reasoning, metadata=metadata, **extra)


def _compile_patterns(pattern: str | Sequence[str], owner: str, captures: str) -> list[re.Pattern[str]]:
    """A classifier's own regexes (one, or several), case-insensitive.

    Raises:
        ValueError: A regex has no group, so it cannot say what it found (``captures``).
    """
    compiled = [re.compile(p, re.IGNORECASE) for p in ([pattern] if isinstance(pattern, str) else pattern)]
    for regex in compiled:
        if regex.groups < 1:
            raise ValueError(f"{owner} pattern {regex.pattern!r} needs a group that captures {captures}")
    return compiled


class Choice:
    """A labelled verdict such as ``GRADE: C``, ``[[A]]``, ``Output (a)`` or a bare ``B``.

    Args:
        labels: Each label and its score in 0..1, e.g. ``{"A": 1.0, "B": 0.0, "C": 0.5}``.
        pattern: A regex (or several, strictest first) whose first group captures
            the label. Default: ``[[L]]``, then ``GRADE:``/``VERDICT:``/
            ``ANSWER:``/``CHOICE:`` ``L``, then ``Output (L)``, then a reply that
            is only the label. The strictest pattern that matches is read
            everywhere in the reply: two different labels in it are a conflict.
        on_conflict: ``"last"`` or ``"abstain"`` (see the module docs).
        threshold: A label whose score reaches it passes.

    Example:
        >>> Choice({"A": 1.0, "B": 0.0}).classify("Both are fine, but [[A]] is better.").metadata["label"]
        'A'
    """

    json_schema: Mapping[str, Any] | None = None

    def __init__(
        self,
        labels: Mapping[str, float],
        *,
        pattern: str | Sequence[str] | None = None,
        on_conflict: OnConflict = "abstain",
        threshold: float = 0.5,
    ) -> None:
        if not labels:
            raise ValueError("Choice needs at least one label")
        for label, worth in labels.items():
            if not isinstance(label, str) or not label:
                raise ValueError(f"Choice labels must be non-empty strings, got {label!r}")
            if isinstance(worth, bool) or not isinstance(worth, int | float) or not 0.0 <= worth <= 1.0:
                raise ValueError(f"Choice label {label!r} is worth {worth!r}; worth must be a number in 0..1")
        folded = [label.casefold() for label in labels]
        if len(set(folded)) != len(folded):
            raise ValueError(f"Choice labels must differ by more than letter case: {list(labels)}")
        check_on_conflict(on_conflict)
        check_threshold(threshold)
        self.labels = {label: float(worth) for label, worth in labels.items()}
        self.on_conflict = on_conflict
        self.threshold = float(threshold)
        self._by_fold = {label.casefold(): label for label in labels}
        if pattern is None:
            self.patterns = self._default_patterns()
        else:
            self.patterns = _compile_patterns(pattern, "Choice", "the label")
        listed = ", ".join(self.labels)
        self.format_hint = f"your final verdict as exactly one of [[{']], [['.join(self.labels)}]] ({listed})"

    def _default_patterns(self) -> list[re.Pattern[str]]:
        alternation = "|".join(re.escape(label) for label in sorted(self.labels, key=len, reverse=True))
        label = f"({alternation})"
        return [
            re.compile(rf"\[\[\s*{label}\s*\]\]", re.IGNORECASE),
            # The keyword is case-insensitive but the label is not: "the answer is a draft" must not read as "A".
            re.compile(
                rf"(?i:\b(?:grade|verdict|answer|choice|decision|label)\b)[^\S\n]*:[^\S\n]*[*_\"'(\[]*{label}(?![\w])"
            ),
            re.compile(rf"\bOutput\s*\(\s*{label}\s*\)", re.IGNORECASE),
            re.compile(rf"^[\s*_\"'(\[]*{label}[\s*_\"')\].]*$", re.IGNORECASE),
        ]

    def classify(self, text: str) -> Judgment:
        """Read the label from ``text``; ABSTAIN when there is none or the labels conflict."""
        return read_verdict(self, text)

    def find(self, text: str) -> Reading:
        """Every label in ``text``, in any of the patterns, in text order."""
        found = [
            Found(label, match.group(0), match.start(), match.end(), label, rank)
            for rank, pattern in enumerate(self.patterns)
            for match in pattern.finditer(text)
            if (label := self._by_fold.get(match.group(1).strip().casefold())) is not None
        ]
        found.sort(key=lambda item: item.start)
        return Reading(found, f"no verdict label ({', '.join(self.labels)}) in the expected format")

    def choose(self, found: Sequence[Found]) -> Found:
        return found[-1]

    def decide(self, found: Found, raw: str, keys: Sequence[str]) -> Judgment:
        label = str(found.value)
        metadata: dict[str, Any] = {"raw": raw, "label": label}
        if len(keys) > 1:
            metadata["conflict"] = list(keys)
        return decide(CategoricalScore(label, self.labels), self.threshold, f"verdict {label}", metadata)

    def __repr__(self) -> str:
        return f"Choice({self.labels!r}, on_conflict={self.on_conflict!r})"


#: Scores for the A-E answer of the OpenAI-evals / autoevals "Factuality" prompt:
#: (A) subset of the expert answer and consistent, (B) superset and consistent,
#: (C) same details, (D) disagreement, (E) differences that do not matter.
FACTUALITY_LABELS: Mapping[str, float] = {"A": 0.4, "B": 0.6, "C": 1.0, "D": 0.0, "E": 1.0}


class Rating:
    """A number on a scale: ``Rating: [[8]]``, ``8/10``, ``Score: 73`` on 0-100, normalized to 0..1.

    Args:
        pattern: A regex (or several, strictest first) whose first group captures
            the number. Default: ``[[n]]``, then ``n/max`` or ``n out of max``,
            then ``rating/score/grade: n``, then a reply that is only a number.
            The strictest pattern that matches is read everywhere in the reply:
            two different ratings in it are a conflict.
        min: Lowest value on the scale.
        max: Highest value on the scale.
        on_conflict: ``"last"`` or ``"abstain"`` (see the module docs).
        threshold: A normalized rating that reaches it passes.

    A number outside ``min..max`` is not a verdict (ABSTAIN names it), because
    clipping "15" on a 1-10 scale to 10 would invent a perfect score.
    """

    json_schema: Mapping[str, Any] | None = None

    def __init__(
        self,
        pattern: str | Sequence[str] | None = None,
        *,
        min: float = 1,
        max: float = 10,
        on_conflict: OnConflict = "abstain",
        threshold: float = 0.5,
    ) -> None:
        for bound in (min, max):
            if isinstance(bound, bool) or not isinstance(bound, int | float) or not math.isfinite(bound):
                raise ValueError(f"Rating bounds must be finite numbers, got {bound!r}")
        if min >= max:
            raise ValueError(f"Rating scale is empty: min {min} is not below max {max}")
        check_on_conflict(on_conflict)
        check_threshold(threshold)
        self.min = float(min)
        self.max = float(max)
        self.on_conflict = on_conflict
        self.threshold = float(threshold)
        if pattern is None:
            top = re.escape(number_text(self.max))
            self.patterns = [
                re.compile(rf"\[\[\s*{_NUMBER}\s*\]\]"),
                re.compile(rf"(?<![\d.]){_NUMBER}\s*(?:/|out of)\s*{top}(?!\.?\d)", re.IGNORECASE),
                re.compile(
                    rf"\b(?:rating|score|grade)\b[*_]*[^\S\n]*(?:is|of)?[^\S\n]*[:=]?[^\S\n]*[*_\[(]*{_NUMBER}(?!\.?\d)",
                    re.IGNORECASE,
                ),
                re.compile(rf"^[\s*_\[(]*{_NUMBER}[\s*_\])]*$"),
            ]
        else:
            self.patterns = _compile_patterns(pattern, "Rating", "the number")
        scale = f"{number_text(self.min)} to {number_text(self.max)}"
        self.format_hint = f'your final rating on a scale of {scale}, strictly in the format "Rating: [[n]]"'

    def classify(self, text: str) -> Judgment:
        """Read the rating from ``text``; ABSTAIN when there is none, it is off the scale, or ratings conflict."""
        return read_verdict(self, text)

    def find(self, text: str) -> Reading:
        """Every rating on the scale in ``text``, in any of the patterns, in text order."""
        found: list[Found] = []
        off_scale: list[str] = []
        for rank, pattern in enumerate(self.patterns):
            for match in pattern.finditer(text):
                try:
                    value = float(match.group(1))
                except ValueError:
                    continue
                if not self.min <= value <= self.max:
                    off_scale.append(match.group(1))
                    continue
                found.append(Found(number_text(value), match.group(0), match.start(), match.end(), value, rank))
        found.sort(key=lambda item: item.start)
        scale = f"{number_text(self.min)}..{number_text(self.max)}"
        problem = (
            f"rating(s) {', '.join(dict.fromkeys(off_scale))} outside the scale {scale}"
            if off_scale
            else "no rating in the expected format"
        )
        return Reading(found, problem)

    def choose(self, found: Sequence[Found]) -> Found:
        return found[-1]

    def decide(self, found: Found, raw: str, keys: Sequence[str]) -> Judgment:
        value = float(found.value)
        metadata: dict[str, Any] = {"raw": raw, "value": value}
        if len(keys) > 1:
            metadata["conflict"] = list(keys)
        reasoning = f"rating {number_text(value)} on {number_text(self.min)}..{number_text(self.max)}"
        return decide(NumericScore(value, self.min, self.max), self.threshold, reasoning, metadata)

    def __repr__(self) -> str:
        return f"Rating(min={self.min:g}, max={self.max:g}, on_conflict={self.on_conflict!r})"


def number_text(value: float) -> str:
    return f"{value:g}"
