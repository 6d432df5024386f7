"""JsonVerdict: a JSON verdict validated with a pydantic model, read under the shared rule."""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from jurybox.core import BooleanScore, Check, Judgment, NumericScore, Score
from jurybox.llm._classifiers import OnConflict, check_on_conflict, check_threshold, decide, number_text
from jurybox.llm._normal import normal_form
from jurybox.llm._reading import Found, Reading, no_verdict, read_verdict
from jurybox.llm._text import first_member, json_spans
from jurybox.llm._verdicts import HundredPointVerdict, ScoreVerdict

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
        on_conflict: ``"last"`` or ``"abstain"`` (see ``jurybox.llm.Choice``).
        threshold: A normalized score that reaches it passes.
        validate: Extra check of a verdict; returns an error message to reject
            it (the judge then asks again), or None.
        checks: Named sub-checks to attach, from the verdict.
        hundred_point: Also read a ``{"score": 0-100, "issues": [...], "strengths":
            [...]}`` reply (no ``reasoning`` field; see ``HundredPointVerdict``), turned
            into this schema's verdict by this function. None reads the schema only.

    The JSON may be wrapped in code fences or surrounded by chatter. Every
    object in the reply counts, fenced or bare, and so does a verdict object
    nested inside another: two that disagree are a conflict. The verdict's
    ``reasoning``, ``confidence``, ``issues`` and ``strengths`` fields, when the
    schema has them, go to the judgment's reasoning, confidence and metadata.
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
        hundred_point: Callable[[HundredPointVerdict], M] | None = None,
    ) -> None:
        if not (isinstance(schema, type) and issubclass(schema, BaseModel)):
            raise TypeError(f"JsonVerdict schema must be a pydantic model class, got {schema!r}")
        if isinstance(score, str) and score not in schema.model_fields:
            raise ValueError(f"JsonVerdict score field {score!r} is not a field of {schema.__name__}")
        if min >= max:
            raise ValueError(f"JsonVerdict scale is empty: min {min} is not below max {max}")
        check_on_conflict(on_conflict)
        check_threshold(threshold)
        self.schema = schema
        self.score = score
        self.min = float(min)
        self.max = float(max)
        self.on_conflict = on_conflict
        self.threshold = float(threshold)
        self.validate = validate
        self.checks = checks
        self.hundred_point = hundred_point
        # Shared by every judge built on this schema class: generating it costs far more than a judge.
        self.json_schema: Mapping[str, Any] | None = _json_schema(schema)
        self.format_hint = _format_hint(schema)
        self._required = _required(schema)

    def classify(self, text: str) -> Judgment:
        """Read and validate the JSON verdict; ABSTAIN when none is valid or valid ones conflict."""
        return read_verdict(self, text)

    def find(self, text: str) -> Reading:
        """Every valid verdict object in ``text``, nested ones included, in text order."""
        found: list[Found] = []
        problems: list[str] = []
        spans = json_spans(text)
        for start, end, obj in spans:
            for depth, candidate in _dicts(obj):
                if depth and not (self._required <= candidate.keys() or self._hundred_point_shaped(candidate)):
                    continue  # a nested object that cannot be a verdict: not worth validating
                verdict, problem = self._verdict(candidate)
                if verdict is None:
                    if not depth:
                        problems.append(problem)
                    continue
                key = number_text(float(self._raw_score(verdict)))
                found.append(Found(key, text[start:end], start, end, verdict, head=first_member(text, start)))
        if not spans:
            return Reading(found, "no JSON object in the reply")
        return Reading(found, f"the JSON does not match the verdict schema: {'; '.join(problems)}")

    def choose(self, found: Sequence[Found]) -> Found:
        return found[-1]

    def decide(self, found: Found, raw: str, keys: Sequence[str]) -> Judgment:
        # The verdict was read in normal form; what the user reads (reasoning, issues) is the reply as written.
        verdict: M = self._as_written(raw, found.key) or found.value
        try:
            score = self._score(verdict)
        except ValueError as exc:
            return no_verdict(raw, str(exc))
        data = verdict.model_dump(mode="json")
        metadata: dict[str, Any] = {"raw": raw, "verdict": data, "value": _plain(self._raw_score(verdict))}
        if len(keys) > 1:
            metadata["conflict"] = list(keys)
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
        return decide(score, self.threshold, reasoning or f"score {score.normalized():.3g}", metadata, **extra)

    def _verdict(self, candidate: dict[str, Any]) -> tuple[M | None, str]:
        verdict: M | None
        try:
            verdict = self.schema.model_validate(candidate)
        except ValidationError as exc:
            verdict = self._from_hundred_point(candidate)
            if verdict is None:
                return None, _short_errors(exc)
        problem = self.validate(verdict) if self.validate is not None else None
        if problem:
            return None, problem
        try:
            self._raw_score(verdict)
        except ValueError as exc:
            return None, str(exc)
        return verdict, ""

    def _hundred_point_shaped(self, candidate: dict[str, Any]) -> bool:
        return self.hundred_point is not None and candidate.keys() >= _HUNDRED_POINT_KEYS

    def _from_hundred_point(self, candidate: dict[str, Any]) -> M | None:
        """The schema's verdict for a 0-100 reply with issues and strengths, when this reader takes that shape."""
        if self.hundred_point is None or "reasoning" in candidate:
            return None
        try:
            return self.hundred_point(HundredPointVerdict.model_validate(candidate))
        except (ValidationError, ValueError):
            return None

    def _as_written(self, raw: str, key: str) -> M | None:
        if normal_form(raw) == raw:
            return None
        for _, _, obj in json_spans(raw):
            verdict, _ = self._verdict(obj)
            if verdict is not None and number_text(float(self._raw_score(verdict))) == key:
                return verdict
        return None

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


_HUNDRED_POINT_KEYS = frozenset(HundredPointVerdict.model_fields)


def _dicts(obj: dict[str, Any]) -> Iterator[tuple[int, dict[str, Any]]]:
    """``obj`` and every object nested in it (in lists too), with its depth; no recursion."""
    stack: list[tuple[int, Any]] = [(0, obj)]
    while stack:
        depth, item = stack.pop()
        if isinstance(item, dict):
            yield depth, item
            children = list(item.values())
        elif isinstance(item, list):
            children = item
        else:
            continue
        stack.extend((depth + 1, child) for child in reversed(children) if isinstance(child, dict | list))


def _plain(value: float | bool) -> float | bool:
    return value if isinstance(value, bool) else float(value)


def _short_errors(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors()[:5]:
        where = ".".join(str(p) for p in error["loc"]) or "(root)"
        parts.append(f"{where}: {error['msg']}")
    return ", ".join(parts)


@functools.cache
def _required(schema: type[BaseModel]) -> frozenset[str]:
    return frozenset(name for name, field in schema.model_fields.items() if field.is_required())


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
