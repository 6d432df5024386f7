"""Classifiers: turn a judge model's reply text into a Judgment, or ABSTAIN saying why not.

Every classifier strips reasoning blocks (``<think>...</think>``) first, finds
every verdict in the rest, and then applies ``on_conflict`` when the reply holds
more than one *different* verdict:

* ``"abstain"`` (the default) refuses to choose and returns ABSTAIN with the
  conflicting verdicts named. A judge's reasoning may quote the answer under
  test: if the answer contains "Rating: [[10]]", neither the first nor the last
  verdict of a reply that quotes it can be trusted, so an answer can never
  grade itself.
* ``"last"`` keeps the last one (a judge usually concludes last), for a judge
  model known to quote nothing; it is an explicit, documented risk.

A reply with no verdict at all is always ABSTAIN with the raw text kept in
``metadata["raw"]`` and the reason in ``metadata["parse_error"]``; it is never a
pass and never a 0.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Generic, Literal, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, ValidationError

from jurybox.core import BooleanScore, CategoricalScore, Check, Judgment, NumericScore, Score, Status
from jurybox.llm._text import json_objects, strip_think
from jurybox.llm._verdicts import ScoreVerdict

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
    _check_threshold(threshold)
    clone = copy.copy(classifier)
    setattr(clone, "threshold", float(threshold))  # noqa: B010 -- C is any classifier type
    return clone


def no_verdict(text: str, reason: str, **metadata: Any) -> Judgment:
    """The ABSTAIN judgment for a reply that holds no usable verdict."""
    return Judgment.abstained(
        f"no verdict could be read from the judge's reply: {reason}",
        metadata={"raw": text, "parse_error": reason, **metadata},
    )


def _check_threshold(threshold: float) -> None:
    if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be a number in 0..1, got {threshold!r}")


def _check_on_conflict(on_conflict: str) -> None:
    if on_conflict not in ("last", "abstain"):
        raise ValueError(f"on_conflict must be 'last' or 'abstain', got {on_conflict!r}")


def _compile_patterns(pattern: str | Sequence[str], owner: str, captures: str) -> list[re.Pattern[str]]:
    """A classifier's own regexes (one, or several tried in order), case-insensitive.

    Raises:
        ValueError: A regex has no group, so it cannot say what it found (``captures``).
    """
    compiled = [re.compile(p, re.IGNORECASE) for p in ([pattern] if isinstance(pattern, str) else pattern)]
    for regex in compiled:
        if regex.groups < 1:
            raise ValueError(f"{owner} pattern {regex.pattern!r} needs a group that captures {captures}")
    return compiled


def _decide(score: Score, threshold: float, reasoning: str, metadata: dict[str, Any], **extra: Any) -> Judgment:
    status = Status.PASS if score.normalized() >= threshold else Status.FAIL
    return Judgment(status, score=score, reasoning=reasoning, metadata=metadata, **extra)


def _pick(
    found: Sequence[Any], on_conflict: str, text: str, describe: Callable[[Any], str]
) -> tuple[Any, Judgment | None]:
    """The verdict to keep among ``found`` (all non-empty), or an ABSTAIN when they conflict."""
    distinct = list(dict.fromkeys(describe(item) for item in found))
    if len(distinct) > 1 and on_conflict == "abstain":
        return None, no_verdict(text, f"the reply holds conflicting verdicts: {', '.join(distinct)}", conflict=distinct)
    return found[-1], None


class Choice:
    """A labelled verdict such as ``GRADE: C``, ``[[A]]``, ``Output (a)`` or a bare ``B``.

    Args:
        labels: Each label and its score in 0..1, e.g. ``{"A": 1.0, "B": 0.0, "C": 0.5}``.
        pattern: A regex (or several, tried in order) whose first group captures
            the label. Default: ``[[L]]``, then ``GRADE:``/``VERDICT:``/
            ``ANSWER:``/``CHOICE:`` ``L``, then ``Output (L)``, then a reply that
            is only the label.
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
        _check_on_conflict(on_conflict)
        _check_threshold(threshold)
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
        cleaned = strip_think(text)
        if not cleaned:
            return no_verdict(text, "the reply is empty (after removing reasoning blocks)")
        for pattern in self.patterns:
            found = [self._canonical(m.group(1)) for m in pattern.finditer(cleaned)]
            found = [label for label in found if label is not None]
            if not found:
                continue
            label, abstain = _pick(found, self.on_conflict, text, str)
            if abstain is not None:
                return abstain
            metadata: dict[str, Any] = {"raw": text, "label": label}
            if len(set(found)) > 1:
                metadata["conflict"] = list(dict.fromkeys(found))
            score = CategoricalScore(label, self.labels)
            return _decide(score, self.threshold, f"verdict {label}", metadata)
        return no_verdict(text, f"no verdict label ({', '.join(self.labels)}) in the expected format")

    def _canonical(self, captured: str) -> str | None:
        return self._by_fold.get(captured.strip().casefold())

    def __repr__(self) -> str:
        return f"Choice({self.labels!r}, on_conflict={self.on_conflict!r})"


#: Scores for the A-E answer of the OpenAI-evals / autoevals "Factuality" prompt:
#: (A) subset of the expert answer and consistent, (B) superset and consistent,
#: (C) same details, (D) disagreement, (E) differences that do not matter.
FACTUALITY_LABELS: Mapping[str, float] = {"A": 0.4, "B": 0.6, "C": 1.0, "D": 0.0, "E": 1.0}


class Rating:
    """A number on a scale: ``Rating: [[8]]``, ``8/10``, ``Score: 73`` on 0-100, normalized to 0..1.

    Args:
        pattern: A regex (or several, tried in order) whose first group captures
            the number. Default: ``[[n]]``, then ``n/max`` or ``n out of max``,
            then ``rating/score/grade: n``, then a reply that is only a number.
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
        _check_on_conflict(on_conflict)
        _check_threshold(threshold)
        self.min = float(min)
        self.max = float(max)
        self.on_conflict = on_conflict
        self.threshold = float(threshold)
        if pattern is None:
            top = re.escape(_number_text(self.max))
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
        scale = f"{_number_text(self.min)} to {_number_text(self.max)}"
        self.format_hint = f'your final rating on a scale of {scale}, strictly in the format "Rating: [[n]]"'

    def classify(self, text: str) -> Judgment:
        """Read the rating from ``text``; ABSTAIN when there is none, it is off the scale, or ratings conflict."""
        cleaned = strip_think(text)
        if not cleaned:
            return no_verdict(text, "the reply is empty (after removing reasoning blocks)")
        off_scale: list[str] = []
        for pattern in self.patterns:
            found: list[float] = []
            for match in pattern.finditer(cleaned):
                try:
                    value = float(match.group(1))
                except ValueError:
                    continue
                if self.min <= value <= self.max:
                    found.append(value)
                else:
                    off_scale.append(match.group(1))
            if not found:
                continue
            value, abstain = _pick(found, self.on_conflict, text, _number_text)
            if abstain is not None:
                return abstain
            metadata: dict[str, Any] = {"raw": text, "value": value}
            if len(set(found)) > 1:
                metadata["conflict"] = [_number_text(v) for v in dict.fromkeys(found)]
            score = NumericScore(value, self.min, self.max)
            reasoning = f"rating {_number_text(value)} on {_number_text(self.min)}..{_number_text(self.max)}"
            return _decide(score, self.threshold, reasoning, metadata)
        if off_scale:
            return no_verdict(
                text,
                f"rating(s) {', '.join(off_scale)} outside the scale "
                f"{_number_text(self.min)}..{_number_text(self.max)}",
            )
        return no_verdict(text, "no rating in the expected format")

    def __repr__(self) -> str:
        return f"Rating(min={self.min:g}, max={self.max:g}, on_conflict={self.on_conflict!r})"


def _number_text(value: float) -> str:
    return f"{value:g}"


M = TypeVar("M", bound=BaseModel)


class JsonVerdict(Generic[M]):
    """A JSON verdict validated with a pydantic model.

    Args:
        schema: The pydantic model of the verdict. Default: ``{"score": 0..1,
            "reasoning": str, "issues": [str], "strengths": [str]}``.
        score: The field holding the score (a number on ``min..max`` or a
            bool), or a function of the validated verdict returning one.
        min: Lowest score on the scale.
        max: Highest score on the scale.
        on_conflict: ``"last"`` or ``"abstain"`` (see the module docs).
        threshold: A normalized score that reaches it passes.
        validate: Extra check of a verdict; returns an error message to reject
            it (the judge then asks again), or None.
        checks: Named sub-checks to attach, from the verdict.

    The JSON may be wrapped in code fences or surrounded by chatter. The
    verdict's ``reasoning``, ``confidence``, ``issues`` and ``strengths``
    fields, when the schema has them, go to the judgment's reasoning,
    confidence and metadata.
    """

    def __init__(
        self,
        schema: type[M] = ScoreVerdict,  # type: ignore[assignment]  # the default only fits M=ScoreVerdict
        *,
        score: str | Callable[[M], float | bool] = "score",
        min: float = 0.0,
        max: float = 1.0,
        on_conflict: OnConflict = "abstain",
        threshold: float = 0.5,
        validate: Callable[[M], str | None] | None = None,
        checks: Callable[[M], Sequence[Check]] | None = None,
    ) -> None:
        if not (isinstance(schema, type) and issubclass(schema, BaseModel)):
            raise TypeError(f"JsonVerdict schema must be a pydantic model class, got {schema!r}")
        if isinstance(score, str) and score not in schema.model_fields:
            raise ValueError(f"JsonVerdict score field {score!r} is not a field of {schema.__name__}")
        if min >= max:
            raise ValueError(f"JsonVerdict scale is empty: min {min} is not below max {max}")
        _check_on_conflict(on_conflict)
        _check_threshold(threshold)
        self.schema = schema
        self.score = score
        self.min = float(min)
        self.max = float(max)
        self.on_conflict = on_conflict
        self.threshold = float(threshold)
        self.validate = validate
        self.checks = checks
        # Shared by every judge built on this schema class: generating it costs far more than a judge.
        self.json_schema: Mapping[str, Any] | None = _json_schema(schema)
        self.format_hint = _format_hint(schema)

    def classify(self, text: str) -> Judgment:
        """Read and validate the JSON verdict; ABSTAIN when none is valid or valid ones conflict."""
        cleaned = strip_think(text)
        if not cleaned:
            return no_verdict(text, "the reply is empty (after removing reasoning blocks)")
        objects = json_objects(cleaned)
        if not objects:
            return no_verdict(text, "no JSON object in the reply")
        verdicts: list[M] = []
        problems: list[str] = []
        for obj in objects:
            try:
                verdict = self.schema.model_validate(obj)
            except ValidationError as exc:
                problems.append(_short_errors(exc))
                continue
            problem = self.validate(verdict) if self.validate is not None else None
            if problem:
                problems.append(problem)
                continue
            verdicts.append(verdict)
        if not verdicts:
            return no_verdict(text, f"the JSON does not match the verdict schema: {'; '.join(problems)}")
        verdict, abstain = _pick(verdicts, self.on_conflict, text, lambda v: _number_text(float(self._raw_score(v))))
        if abstain is not None:
            return abstain
        try:
            score = self._score(verdict)
        except ValueError as exc:
            return no_verdict(text, str(exc))
        data = verdict.model_dump(mode="json")
        metadata: dict[str, Any] = {"raw": text, "verdict": data, "value": _plain(self._raw_score(verdict))}
        for key in ("issues", "strengths"):
            if key in data:
                metadata[key] = data[key]
        reasoning = data.get("reasoning") if isinstance(data.get("reasoning"), str) else ""
        confidence = data.get("confidence")
        extra: dict[str, Any] = {}
        if isinstance(confidence, int | float) and not isinstance(confidence, bool) and 0.0 <= confidence <= 1.0:
            extra["confidence"] = float(confidence)
        if self.checks is not None:
            extra["checks"] = tuple(self.checks(verdict))
        return _decide(score, self.threshold, reasoning or f"score {score.normalized():.3g}", metadata, **extra)

    def _raw_score(self, verdict: M) -> float | bool:
        value = self.score(verdict) if callable(self.score) else getattr(verdict, self.score)
        if not isinstance(value, bool | int | float):
            raise ValueError(f"the verdict's score is not a number or bool: {value!r}")
        return value

    def _score(self, verdict: M) -> Score:
        value = self._raw_score(verdict)
        if isinstance(value, bool):
            return BooleanScore(value)
        if not math.isfinite(value) or not self.min <= value <= self.max:
            raise ValueError(f"score {value!r} is outside the scale {self.min:g}..{self.max:g}")
        return NumericScore(float(value), self.min, self.max)

    def __repr__(self) -> str:
        return f"JsonVerdict({self.schema.__name__}, on_conflict={self.on_conflict!r})"


def _plain(value: float | bool) -> float | bool:
    return value if isinstance(value, bool) else float(value)


def _short_errors(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors()[:5]:
        where = ".".join(str(p) for p in error["loc"]) or "(root)"
        parts.append(f"{where}: {error['msg']}")
    return ", ".join(parts)


@functools.cache
def _json_schema(schema: type[BaseModel]) -> Mapping[str, Any]:
    """The JSON schema of a verdict model, made once per class and read-only (judges share it)."""
    frozen: Mapping[str, Any] = _frozen(schema.model_json_schema())
    return frozen


@functools.cache
def _compact_schema(schema: type[BaseModel]) -> str:
    return json.dumps(schema.model_json_schema(), separators=(",", ":"))


@functools.cache
def _format_hint(schema: type[BaseModel]) -> str:
    # One string per schema class: a suite of 10,000 judges would otherwise hold 10,000 copies.
    return "a single JSON object matching this schema, and nothing else: " + _compact_schema(schema)


def _frozen(value: Any) -> Any:
    if isinstance(value, Mapping):
        return MappingProxyType({key: _frozen(item) for key, item in value.items()})
    if isinstance(value, list | tuple):
        return tuple(_frozen(item) for item in value)
    return value
