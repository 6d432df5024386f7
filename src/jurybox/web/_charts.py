"""Line charts as server-rendered SVG: no JavaScript, no library, nothing fetched.

This module computes geometry only (numbers and the texts to show); the
``chart`` macro in ``templates/macros.html`` writes the SVG, so every text in a
chart (run ids, suite and tier names, tooltips) goes through Jinja's escaping
like the rest of the page. Coordinates are rounded to one decimal to keep a
1,000-point chart small.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

WIDTH = 760
HEIGHT = 200
LEFT, RIGHT, TOP, BOTTOM = 52, 12, 12, 26


@dataclass(frozen=True)
class Series:
    """One line: a value per run (None where the run has none, which breaks the line)."""

    name: str
    values: Sequence[float | None]
    css: str
    dashed: bool = False
    markers: bool = False
    """Draw a linked dot per point (the chart's main series)."""
    joined: bool = False
    """Draw the line over a None to the next value (a series of some of the runs: production beside CI)."""


@dataclass(frozen=True)
class Marker:
    x: float
    y: float
    href: str
    title: str
    css: str


@dataclass(frozen=True)
class Line:
    css: str
    dashed: bool
    segments: tuple[str, ...]
    """SVG ``points`` strings, one per unbroken stretch."""


@dataclass(frozen=True)
class Chart:
    title: str
    width: int
    height: int
    lines: tuple[Line, ...]
    markers: tuple[Marker, ...]
    y_ticks: tuple[tuple[float, str], ...]
    x_ticks: tuple[tuple[float, str], ...]
    legend: tuple[tuple[str, str, bool], ...]
    empty: bool
    plot: tuple[float, float, float, float] = field(default=(LEFT, TOP, WIDTH - RIGHT, HEIGHT - BOTTOM))


def line_chart(
    title: str,
    *,
    labels: Sequence[str],
    hrefs: Sequence[str],
    ticks: Sequence[str] | None = None,
    series: Sequence[Series],
    y_format: Callable[[float], str],
    y_range: tuple[float, float] | None = None,
    states: Sequence[str] | None = None,
    mark_every_point: bool = True,
) -> Chart:
    """A chart of ``series`` over runs (x is the run's position, oldest left).

    Args:
        title: Shown above the chart.
        labels: One label per run (its tooltip).
        hrefs: One link per run: each marker opens its run.
        ticks: One short label per run for the x axis (the first, middle and last are drawn); ``labels`` if None.
        series: The lines; a ``markers`` series gets a dot per point.
        y_format: Formats an axis tick or tooltip value.
        y_range: Fixed bounds (0..1 for rates); otherwise from the data, starting at 0.
        states: Gate state per run (``regression`` points are drawn red and larger).
        mark_every_point: False keeps only markers of points whose state is not ``ok``/``warmup``
            (a 1,000-run chart would otherwise weigh hundreds of kilobytes).
    """
    count = len(labels)
    values = [v for s in series for v in s.values if v is not None]
    if not values or count == 0:
        return Chart(title, WIDTH, HEIGHT, (), (), (), (), (), True)
    low, high = y_range if y_range is not None else (0.0, max(values))
    if high <= low:
        high = low + 1.0
    x0, y0, x1, y1 = LEFT, TOP, WIDTH - RIGHT, HEIGHT - BOTTOM

    def x_at(index: int) -> float:
        return (x0 + x1) / 2 if count == 1 else x0 + (x1 - x0) * index / (count - 1)

    def y_at(value: float) -> float:
        clipped = min(max(value, low), high)
        return y1 - (y1 - y0) * (clipped - low) / (high - low)

    lines = []
    markers: list[Marker] = []
    for s in series:
        segments: list[str] = []
        current: list[str] = []
        for index, value in enumerate(s.values):
            if value is None:
                if current and not s.joined:
                    segments.append(" ".join(current))
                    current = []
                continue
            current.append(f"{x_at(index):.1f},{y_at(value):.1f}")
            if s.markers:
                state = states[index] if states is not None else "ok"
                if mark_every_point or state not in ("ok", "warmup"):
                    note = f" · {state}" if state not in ("ok", "") else ""
                    markers.append(
                        Marker(
                            round(x_at(index), 1),
                            round(y_at(value), 1),
                            hrefs[index],
                            f"{labels[index]} · {s.name} {y_format(value)}{note}",
                            f"{s.css} state-{state}",
                        )
                    )
        if current:
            segments.append(" ".join(current))
        lines.append(Line(s.css, s.dashed, tuple(segments)))
    steps = 4
    y_ticks = tuple(
        (round(y_at(low + (high - low) * i / steps), 1), y_format(low + (high - low) * i / steps))
        for i in range(steps + 1)
    )
    # First and last run, and the middle one when there is room between them.
    picks = sorted({0, count // 2, count - 1}) if count >= 5 else sorted({0, count - 1})
    names = ticks if ticks is not None else labels
    x_ticks = tuple((round(x_at(i), 1), names[i]) for i in picks)
    legend = tuple((s.css, s.name, s.dashed) for s in series)
    return Chart(title, WIDTH, HEIGHT, tuple(lines), tuple(markers), y_ticks, x_ticks, legend, False)
