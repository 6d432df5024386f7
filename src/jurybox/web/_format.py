"""How numbers, money, durations and times read on the dashboard (Jinja filters).

Unknown is never zero: a missing cost prints ``unknown``, a missing rate ``—``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from jurybox.core import Judgment
from jurybox.report import cost_gaps
from jurybox.report import judgment_score as report_judgment_score

DASH = "—"


def pct(value: float | None, digits: int = 1) -> str:
    """``0.853`` -> ``85.3%``."""
    return DASH if value is None else f"{value:.{digits}%}"


def points(value: float | None) -> str:
    """A difference of two rates in percentage points, signed."""
    return DASH if value is None else f"{value * 100:+.1f} pts"


def money(value: float | None) -> str:
    """USD with enough digits for per-case judge costs; ``unknown`` when nothing reported a cost."""
    return "unknown" if value is None else f"${value:.4f}"


def cost_label(known: float | None, unpriced_calls: int | None = None, unknown_cases: int | None = None) -> str:
    """A cost as the command line words it: ``$0.0123``; ``≥ $0.0123 (price unknown for 5 calls)`` when only
    part of it is known; ``unknown (...)`` when nothing known was spent. Never ``$0.0000`` for an unknown cost.

    ``unknown_cases`` counts cases whose cost is unknown altogether (stored with none).
    """
    value, note = cost_parts(known, unpriced_calls, unknown_cases)
    return f"{value} ({note})" if note else value


def cost_parts(
    known: float | None, unpriced_calls: int | None = None, unknown_cases: int | None = None
) -> tuple[str, str]:
    """``cost_label`` in two: the figure (``≥ $0.0123``, ``unknown``) and what is missing from it, or ``""``."""
    what = cost_gaps(unpriced_calls, unknown_cases)
    if not what:
        return money(known), ""
    return (f"≥ {money(known)}" if known else "unknown"), what


def money_delta(value: float | None) -> str:
    return DASH if value is None else f"{'+' if value >= 0 else '-'}${abs(value):.4f}"


def seconds(value: float | None) -> str:
    """``0.42s``, ``12.3s``, ``4m 05s``, ``2h 03m``."""
    if value is None:
        return DASH
    if value < 60:
        return f"{value:.2f}s" if value < 10 else f"{value:.1f}s"
    minutes, secs = divmod(round(value), 60)
    if minutes < 60:
        return f"{minutes}m {secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"


def seconds_delta(value: float | None) -> str:
    return DASH if value is None else f"{value:+.2f}s"


def score(value: float | None) -> str:
    return DASH if value is None else f"{value:.2f}"


def judgment_score(judgment: Judgment) -> str | None:
    """A verdict's score as the judge gave it (``7 on 1..10 (0.67)``, ``B (0.50)``, ``0.85``), or None.

    The reports' wording, so a page and a report never show one score two ways; None (not a
    dash) when there is no score, so the page leaves the field out.
    """
    return None if judgment.score is None else report_judgment_score(judgment)


def interval(value: Mapping[str, Any] | None, scale: str = "points") -> str:
    """An interval's JSON form (``{"low": ..., "high": ...}``) as ``[+2.1, +13.9]`` (points) or ``[-0.050, +0.120]``."""
    if not value:
        return DASH
    low, high = value["low"], value["high"]
    if scale == "points":
        return f"[{low * 100:+.1f}, {high * 100:+.1f}]"
    return f"[{low:+.3f}, {high:+.3f}]"


def p_value(value: float | None) -> str:
    """A p-value as a report prints it: ``0.004``, ``< 0.001``."""
    if value is None:
        return DASH
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def signed(value: float | None) -> str:
    return DASH if value is None else f"{value:+.2f}"


def count(value: int | None) -> str:
    return "unknown" if value is None else f"{value:,}"


def count_change(value: int | None) -> str:
    """A signed change of a count, ``+1,204``."""
    return DASH if value is None else f"{value:+,}"


def direction(change: float | None) -> str:
    """The CSS class of a change: ``up``, ``down``, or nothing when it did not move (or is unknown)."""
    if change is None or change == 0:
        return ""
    return "up" if change > 0 else ("down" if change < 0 else "")


def when(value: datetime | str | None) -> str:
    """A UTC timestamp to the second, the way ``jurybox history`` shows it."""
    if value is None:
        return DASH
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return f"{value.astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC"


def iso(value: datetime | None) -> str | None:
    """The JSON form of a timestamp."""
    return None if value is None else value.astimezone(UTC).isoformat()


def short(text: str | None, limit: int = 160) -> str:
    """One line of at most ``limit`` characters."""
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def pretty_json(value: Any) -> str:
    """Indented JSON of stored data (text stays text); escaping is the template's job."""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False, default=str, sort_keys=False)


def compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


FILTERS: dict[str, Callable[..., Any]] = {
    "pct": pct,
    "points": points,
    "money": money,
    "cost_label": cost_label,
    "money_delta": money_delta,
    "seconds": seconds,
    "seconds_delta": seconds_delta,
    "score": score,
    "signed": signed,
    "interval": interval,
    "p_value": p_value,
    "count": count,
    "count_change": count_change,
    "direction": direction,
    "when": when,
    "short": short,
    "pretty_json": pretty_json,
    "compact_json": compact_json,
}
"""Every filter the templates use, by name."""
