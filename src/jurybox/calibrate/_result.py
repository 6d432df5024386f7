"""A calibration's result: plain data that serialises to JSON and reads back, for reports and the store."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from jurybox.calibrate._specs import JudgeIdentity
from jurybox.calibrate._verdicts import RowVerdict

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Figure:
    """A figure and its bootstrap interval; None where it is undefined (e.g. TNR with no human-fail row)."""

    value: float | None
    low: float | None = None
    high: float | None = None

    def to_dict(self) -> dict[str, float | None]:
        return {"value": self.value, "low": self.low, "high": self.high}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Figure:
        return cls(data.get("value"), data.get("low"), data.get("high"))


@dataclass(frozen=True)
class Confusion:
    """Counts of human label (rows) against judge outcome (columns), undecided columns included."""

    rows: tuple[str, ...]
    columns: tuple[str, ...]
    counts: tuple[tuple[int, ...], ...]

    def to_dict(self) -> dict[str, Any]:
        return {"rows": list(self.rows), "columns": list(self.columns), "counts": [list(r) for r in self.counts]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Confusion:
        return cls(tuple(data["rows"]), tuple(data["columns"]), tuple(tuple(int(c) for c in r) for r in data["counts"]))


@dataclass(frozen=True)
class Figures:
    """What one judge scored on a set of rows (all rows, or one slice)."""

    counts: Mapping[str, int]
    figures: Mapping[str, Figure]
    confusion: Confusion | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "counts": dict(self.counts),
            "figures": {name: figure.to_dict() for name, figure in self.figures.items()},
            "confusion": self.confusion.to_dict() if self.confusion else None,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Figures:
        confusion = data.get("confusion")
        return cls(
            counts={k: int(v) for k, v in data["counts"].items()},
            figures={k: Figure.from_dict(v) for k, v in data["figures"].items()},
            confusion=Confusion.from_dict(confusion) if confusion else None,
        )


@dataclass(frozen=True)
class Disagreement:
    """A row where the judge and the people disagree."""

    id: str
    human: str | float | None
    judge: str
    value: float | None
    orders: tuple[str, str] | None
    confidence: float | None
    reasoning: str
    raw: str | None
    input: str
    output: str
    tags: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "human": self.human,
            "judge": self.judge,
            "value": self.value,
            "orders": list(self.orders) if self.orders else None,
            "confidence": self.confidence,
            "reasoning": self.reasoning,
            "raw": self.raw,
            "input": self.input,
            "output": self.output,
            "tags": list(self.tags),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Disagreement:
        orders = data.get("orders")
        return cls(
            id=str(data["id"]),
            human=data.get("human"),
            judge=str(data["judge"]),
            value=data.get("value"),
            orders=(orders[0], orders[1]) if orders else None,
            confidence=data.get("confidence"),
            reasoning=str(data.get("reasoning") or ""),
            raw=data.get("raw"),
            input=str(data.get("input") or ""),
            output=str(data.get("output") or ""),
            tags=tuple(data.get("tags") or ()),
        )


@dataclass(frozen=True)
class Usage:
    """What the judge spent over the set. A total is None when any row's figure is unknown."""

    tokens: int | None = None
    cost: float | None = None
    latency: float | None = None
    latency_mean: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"tokens": self.tokens, "cost": self.cost, "latency": self.latency, "latency_mean": self.latency_mean}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Usage:
        return cls(data.get("tokens"), data.get("cost"), data.get("latency"), data.get("latency_mean"))


@dataclass(frozen=True)
class Distribution:
    """The judge's numbers binned by human label, for the score-distribution plot."""

    edges: tuple[float, ...]
    counts: Mapping[str, tuple[int, ...]]

    def to_dict(self) -> dict[str, Any]:
        return {"edges": list(self.edges), "counts": {k: list(v) for k, v in self.counts.items()}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Distribution:
        return cls(tuple(data["edges"]), {k: tuple(v) for k, v in data["counts"].items()})


@dataclass(frozen=True)
class JudgeCalibration:
    """One judge measured against the people.

    Attributes:
        identity: Who the judge is (the key a stored calibration is filed under).
        overall: Its figures on every row.
        slices: Its figures per slice: field -> value -> figures.
        disagreements: The rows where it disagrees with people, most confident first (capped).
        disagreement_count: How many such rows there are in all.
        usage: Tokens, cost and latency.
        distribution: Its numbers by human label, when it gave numbers.
        verdicts: Its verdict on every row (kept in memory; in JSON only when asked).
    """

    identity: JudgeIdentity
    overall: Figures
    slices: Mapping[str, Mapping[str, Figures]] = field(default_factory=dict)
    disagreements: tuple[Disagreement, ...] = ()
    disagreement_count: int = 0
    usage: Usage = field(default_factory=Usage)
    distribution: Distribution | None = None
    verdicts: tuple[RowVerdict, ...] = ()

    @property
    def name(self) -> str:
        return self.identity.name

    def figure(self, name: str) -> Figure | None:
        """The overall figure called ``name``, or None when this judge has none by that name."""
        return self.overall.figures.get(name)

    def to_dict(self, *, rows: bool = False) -> dict[str, Any]:
        data: dict[str, Any] = {
            "identity": self.identity.to_dict(),
            "overall": self.overall.to_dict(),
            "slices": {k: {v: f.to_dict() for v, f in values.items()} for k, values in self.slices.items()},
            "disagreements": [d.to_dict() for d in self.disagreements],
            "disagreement_count": self.disagreement_count,
            "usage": self.usage.to_dict(),
            "distribution": self.distribution.to_dict() if self.distribution else None,
        }
        if rows:
            data["verdicts"] = [v.to_dict() for v in self.verdicts]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> JudgeCalibration:
        distribution = data.get("distribution")
        return cls(
            identity=JudgeIdentity.from_dict(data["identity"]),
            overall=Figures.from_dict(data["overall"]),
            slices={
                k: {v: Figures.from_dict(f) for v, f in values.items()} for k, values in data.get("slices", {}).items()
            },
            disagreements=tuple(Disagreement.from_dict(d) for d in data.get("disagreements", [])),
            disagreement_count=int(data.get("disagreement_count", 0)),
            usage=Usage.from_dict(data.get("usage") or {}),
            distribution=Distribution.from_dict(distribution) if distribution else None,
            verdicts=tuple(RowVerdict.from_dict(v) for v in data.get("verdicts", [])),
        )


@dataclass(frozen=True)
class CalibrationResult:
    """Every judge of one calibration, side by side.

    Attributes:
        dataset: The labelled set's source.
        kind: The label kind.
        rows: Number of labelled rows.
        classes: The human classes, in order.
        raters: Raters named in the set.
        humans: Agreement among the raters themselves (``alpha``): the ceiling a judge can reach.
        judges: One calibration per judge, in the order given.
        resamples: Bootstrap resamples behind each interval.
        seed: The bootstrap seed.
        confidence: The intervals' level (0.95).
    """

    dataset: str
    kind: str
    rows: int
    classes: tuple[str, ...]
    raters: tuple[str, ...]
    humans: Mapping[str, Figure]
    judges: tuple[JudgeCalibration, ...]
    resamples: int
    seed: int
    confidence: float

    def judge(self, name: str) -> JudgeCalibration:
        for item in self.judges:
            if item.name == name:
                return item
        raise KeyError(f"no judge {name!r}; judges: {', '.join(j.name for j in self.judges)}")

    def to_dict(self, *, rows: bool = False) -> dict[str, Any]:
        """Plain JSON data; ``rows=True`` adds every row's verdict."""
        return {
            "schema": SCHEMA_VERSION,
            "dataset": self.dataset,
            "kind": self.kind,
            "rows": self.rows,
            "classes": list(self.classes),
            "raters": list(self.raters),
            "humans": {k: v.to_dict() for k, v in self.humans.items()},
            "judges": [j.to_dict(rows=rows) for j in self.judges],
            "resamples": self.resamples,
            "seed": self.seed,
            "confidence": self.confidence,
        }

    def to_json(self, *, rows: bool = False, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(rows=rows), indent=indent, ensure_ascii=False, allow_nan=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CalibrationResult:
        if data.get("schema") != SCHEMA_VERSION:
            raise ValueError(f"unknown calibration schema {data.get('schema')!r}; this jurybox reads {SCHEMA_VERSION}")
        return cls(
            dataset=str(data["dataset"]),
            kind=str(data["kind"]),
            rows=int(data["rows"]),
            classes=tuple(data["classes"]),
            raters=tuple(data["raters"]),
            humans={k: Figure.from_dict(v) for k, v in data["humans"].items()},
            judges=tuple(JudgeCalibration.from_dict(j) for j in data["judges"]),
            resamples=int(data["resamples"]),
            seed=int(data["seed"]),
            confidence=float(data["confidence"]),
        )
