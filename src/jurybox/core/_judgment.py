"""What a judge says about one execution."""

from __future__ import annotations

import traceback
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field, fields, replace
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from jurybox.core._context import freeze_mapping
from jurybox.core._scores import BooleanScore, CategoricalScore, NumericScore, Score, normalize


class Status(StrEnum):
    """The four outcomes of a judgment.

    ABSTAIN means the judge ran but could not decide (no verdict in the model's
    reply, a budget with no data). ERROR means the judge itself failed (an
    exception, a provider outage, a misconfiguration). Neither is ever a pass.
    """

    PASS = "pass"
    FAIL = "fail"
    ABSTAIN = "abstain"
    ERROR = "error"

    @property
    def decided(self) -> bool:
        """True for PASS and FAIL: the judge reached a verdict."""
        return self in (Status.PASS, Status.FAIL)


@dataclass(frozen=True)
class Check:
    """A named sub-check inside a judgment, e.g. one expected tool call."""

    name: str
    passed: bool
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "passed": self.passed, "message": self.message}


@dataclass(frozen=True)
class ErrorInfo:
    """A judge's exception, kept in a form that survives serialization."""

    type: str
    message: str
    traceback: str = ""

    @classmethod
    def from_exception(cls, exc: BaseException) -> ErrorInfo:
        text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        return cls(type=type(exc).__name__, message=str(exc), traceback=text)

    def to_dict(self) -> dict[str, str]:
        return {"type": self.type, "message": self.message, "traceback": self.traceback}


ScoreLike = Score | bool | float | int


@dataclass(frozen=True)
class Judgment:
    """A frozen verdict on one execution.

    Attributes:
        status: PASS, FAIL, ABSTAIN or ERROR.
        score: The judge's own score (boolean, numeric with bounds or
            categorical), or None when it has none. ``value`` gives it in 0..1.
        reasoning: Why, in words.
        checks: Named sub-checks, each passed or not with a message.
        judge: Name of the judge that gave it.
        confidence: How sure the judge is, 0..1, when it says.
        degraded: True when a fallback policy produced the verdict (for
            example a neutral score after a parse failure); reports flag it.
        error: The exception of an ERROR judgment.
        children: Judgments of the members of a jury or the tiers of a
            cascade, by name.
        decided_by: For a cascade, the tier that decided.
        metadata: Anything else (tokens, cost, raw model output, votes...).
    """

    status: Status
    score: Score | None = None
    reasoning: str = ""
    checks: tuple[Check, ...] = ()
    judge: str = ""
    confidence: float | None = None
    degraded: bool = False
    error: ErrorInfo | None = None
    children: Mapping[str, Judgment] = field(default_factory=dict)
    decided_by: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._settle(_FIELDS)

    def _settle(self, names: Collection[str]) -> None:
        """Check and freeze the fields in ``names`` (a new judgment's, or the ones ``with_changes`` set)."""
        if "status" in names and not isinstance(self.status, Status):
            object.__setattr__(self, "status", Status(self.status))
        if (
            "score" in names
            and self.score is not None
            and not isinstance(self.score, BooleanScore | NumericScore | CategoricalScore)
        ):
            object.__setattr__(self, "score", to_score(self.score))
        if "confidence" in names and self.confidence is not None and not 0.0 <= self.confidence <= 1.0:
            raise ValueError(f"confidence must be in 0..1, got {self.confidence!r}")
        if "checks" in names:
            object.__setattr__(self, "checks", tuple(self.checks))
        if "children" in names:
            object.__setattr__(self, "children", MappingProxyType(dict(self.children)))
        if "metadata" in names:
            object.__setattr__(self, "metadata", freeze_mapping(self.metadata))

    # Factories, one per status, so call sites read as the verdict they give.
    @classmethod
    def passed(cls, score: ScoreLike | None = 1.0, reasoning: str = "", **kwargs: Any) -> Judgment:
        return cls(Status.PASS, score=to_score(score), reasoning=reasoning, **kwargs)

    @classmethod
    def failed(cls, score: ScoreLike | None = 0.0, reasoning: str = "", **kwargs: Any) -> Judgment:
        return cls(Status.FAIL, score=to_score(score), reasoning=reasoning, **kwargs)

    @classmethod
    def abstained(cls, reasoning: str, **kwargs: Any) -> Judgment:
        return cls(Status.ABSTAIN, reasoning=reasoning, **kwargs)

    @classmethod
    def errored(cls, reasoning: str, exception: BaseException | None = None, **kwargs: Any) -> Judgment:
        if exception is not None and "error" not in kwargs:
            kwargs["error"] = ErrorInfo.from_exception(exception)
        return cls(Status.ERROR, reasoning=reasoning, **kwargs)

    @property
    def value(self) -> float | None:
        """The score normalized to 0..1, or None when the judgment has no score."""
        return None if self.score is None else normalize(self.score)

    @property
    def ok(self) -> bool:
        return self.status is Status.PASS

    def named(self, judge: str) -> Judgment:
        """This judgment attributed to ``judge`` (kept when already named)."""
        return self if self.judge else replace(self, judge=judge)

    def with_changes(self, **changes: Any) -> Judgment:
        """A copy with ``changes`` (as ``dataclasses.replace``): only the changed fields are checked and frozen again.

        ``replace`` rebuilds the whole judgment through ``__init__``, copying its children and
        metadata once more; the runner changes a judgment or two on every case.
        """
        if type(self) is not Judgment or changes.keys() - _FIELDS:
            # A subclass may check more in its own __post_init__; an unknown name gets replace's TypeError.
            return replace(self, **changes)
        changed = object.__new__(type(self))
        state = changed.__dict__
        state.update(self.__dict__)
        state.update(changes)
        changed._settle(changes.keys())
        return changed

    def walk(self, path: str = "") -> Iterator[tuple[str, Judgment]]:
        """Yield (path, judgment) for this judgment and every nested one, depth first.

        The root's path is ``""``; a child's is its key, a grandchild's ``"key/key"``.
        """
        yield path, self
        for name, child in self.children.items():
            yield from child.walk(f"{path}/{name}" if path else name)

    def find(self, name: str) -> Judgment | None:
        """The first nested judgment whose key or judge name is ``name``."""
        for path, judgment in self.walk():
            if path and (path.rsplit("/", 1)[-1] == name or judgment.judge == name):
                return judgment
        return None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of the whole judgment tree."""
        return {
            "status": self.status.value,
            "value": self.value,
            "score": score_to_dict(self.score),
            "reasoning": self.reasoning,
            "checks": [c.to_dict() for c in self.checks],
            "judge": self.judge,
            "confidence": self.confidence,
            "degraded": self.degraded,
            "error": self.error.to_dict() if self.error else None,
            "children": {name: child.to_dict() for name, child in self.children.items()},
            "decided_by": self.decided_by,
            "metadata": dict(self.metadata),
        }


_FIELDS = frozenset(f.name for f in fields(Judgment))  # a new judgment settles them all


def to_score(value: ScoreLike | None) -> Score | None:
    """Wrap a bare bool or 0..1 number as a score; pass scores and None through."""
    if value is None or isinstance(value, BooleanScore | NumericScore | CategoricalScore):
        return value
    if isinstance(value, bool):
        return BooleanScore(value)
    if isinstance(value, int | float):
        return NumericScore(float(value))
    raise TypeError(f"not a score: {value!r}")


def score_to_dict(score: Score | None) -> dict[str, Any] | None:
    if score is None:
        return None
    if isinstance(score, BooleanScore):
        return {"kind": "boolean", "value": score.value}
    if isinstance(score, NumericScore):
        return {"kind": "numeric", "value": score.value, "min": score.min, "max": score.max}
    return {"kind": "categorical", "value": score.value, "categories": dict(score.categories)}
