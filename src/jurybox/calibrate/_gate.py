"""``--fail-under kappa=0.6,tnr=0.8``: a judge below the bar fails the build like a failing test."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from jurybox.calibrate._figures import FIGURES_BY_KIND
from jurybox.calibrate._result import CalibrationResult


@dataclass(frozen=True)
class Shortfall:
    """A judge whose figure is below the bar (or undefined, which cannot clear it)."""

    judge: str
    figure: str
    value: float | None
    bar: float

    def __str__(self) -> str:
        shown = "undefined" if self.value is None else f"{self.value:.3f}"
        return f"{self.judge}: {self.figure} {shown} < {self.bar:g}"


def parse_bars(text: str, kind: str) -> dict[str, float]:
    """``"kappa=0.6,tnr=0.8"`` -> ``{"kappa": 0.6, "tnr": 0.8}``, checked against the figures of ``kind``.

    Raises:
        ValueError: a malformed item, an unknown figure or one the label kind does not have, or a bad number.
    """
    bars: dict[str, float] = {}
    known = FIGURES_BY_KIND[kind]
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        name, sep, number = item.partition("=")
        name = name.strip().lower()
        if not sep:
            raise ValueError(f"--fail-under item {item!r}: write figure=value, e.g. kappa=0.6")
        if name not in known:
            every = sorted({f for names in FIGURES_BY_KIND.values() for f in names})
            hint = f"{kind} labels have: {', '.join(known)}" if name in every else f"figures: {', '.join(every)}"
            raise ValueError(f"--fail-under: unknown figure {name!r} for {kind} labels; {hint}")
        try:
            bars[name] = float(number)
        except ValueError:
            raise ValueError(f"--fail-under {name}: {number.strip()!r} is not a number") from None
    if not bars:
        raise ValueError("--fail-under needs at least one figure=value")
    return bars


def shortfalls(result: CalibrationResult, bars: Mapping[str, float]) -> list[Shortfall]:
    """Every (judge, figure) below its bar, in judge order; an undefined figure never clears a bar."""
    found = []
    for judge in result.judges:
        for name, bar in bars.items():
            figure = judge.figure(name)
            value = figure.value if figure is not None else None
            if value is None or value < bar:
                found.append(Shortfall(judge.name, name, value, bar))
    return found
