"""Line charts as server-rendered SVG: no JavaScript, no library, nothing fetched.

This module computes geometry only (numbers and the texts to show); the
``chart`` macro in ``templates/macros.html`` writes the SVG, so every text in a
chart (run ids, suite and tier names, tooltips) goes through Jinja's escaping
like the rest of the page.

A 1,000-run chart stays small: a line is one SVG path whose x unit is one run
(the path is scaled to the plot, its stroke kept at screen width), drawn with
relative steps of whole pixels (``l1 -2 1 0 1 3``: about 4 bytes a point
instead of 10 for absolute ``x,y`` pairs), and beyond ``MARK_LIMIT`` runs only
some points get a linked dot (every few runs, and every one not ``ok``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

WIDTH = 760
HEIGHT = 200
LEFT, RIGHT, TOP, BOTTOM = 52, 12, 12, 26
MARK_LIMIT = 120
"""Linked dots per series at most (plus every point whose gate state is not ``ok``)."""


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
    path: str
    """SVG path data in run units across (x = the run's position) and pixels down; gaps start a new ``M``."""
    x_scale: float
    """Pixels per run: the path's ``transform`` maps run positions onto the plot."""
    x_offset: float


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
        mark_every_point: False keeps only markers of points whose state is not ``ok``/``warmup``;
            True marks every point up to ``MARK_LIMIT`` runs, then every few runs and the last
            (a dot per run of a 1,000-run chart would weigh hundreds of kilobytes).
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
    # Beyond MARK_LIMIT points a dot every `stride` runs keeps the chart light; the rest are still on the line.
    stride = 1 if count <= MARK_LIMIT else -(-count // MARK_LIMIT)
    x_scale = 1.0 if count == 1 else (x1 - x0) / (count - 1)
    for s in series:
        path = _path([None if v is None else round(y_at(v)) for v in s.values], joined=s.joined)
        lines.append(Line(s.css, s.dashed, path, round(x_scale, 4), round(x_at(0), 1)))
        if not s.markers:
            continue
        for index, value in enumerate(s.values):
            if value is None:
                continue
            state = states[index] if states is not None else "ok"
            sampled = mark_every_point and (index % stride == 0 or index == count - 1)
            if not sampled and state in ("ok", "warmup", ""):
                continue
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


def _path(ys: Sequence[int | None], *, joined: bool = False) -> str:
    """SVG path data for whole-pixel ``ys`` at x = 0, 1, 2...: ``M`` at each stretch's start, then relative steps.

    A gap (None) starts a new stretch, unless ``joined``: then the line runs on over it (a production
    series has no value at the CI runs between its points, yet is one line).
    """
    stretches: list[list[tuple[int, int]]] = []
    current: list[tuple[int, int]] = []
    for index, y in enumerate(ys):
        if y is None:
            if current and not joined:
                stretches.append(current)
                current = []
            continue
        current.append((index, y))
    if current:
        stretches.append(current)
    return "".join(_stretch(points) for points in stretches)


def _stretch(points: list[tuple[int, int]]) -> str:
    (x, y), rest = points[0], points[1:]
    if not rest:
        return f"M{x} {y}"
    numbers = []
    for (px, py), (nx, ny) in zip(points, rest, strict=False):
        numbers.append(nx - px)
        numbers.append(ny - py)
    # Numbers are space-separated except before a minus sign (it separates them): one join, one replace,
    # instead of a test per number (a 1,000-run trend draws 14 lines of 1,000 points each).
    return f"M{x} {y}l" + " ".join(map(str, numbers)).replace(" -", "-")
