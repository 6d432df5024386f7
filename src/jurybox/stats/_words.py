"""A paired finding in plain words, the one sentence every comparison prints."""

from __future__ import annotations

from jurybox.stats._bootstrap import Interval


def p_text(value: float) -> str:
    """``= 0.004`` or ``< 0.001``: what follows a ``p`` in a sentence."""
    return "< 0.001" if value < 0.001 else f"= {value:.3f}"


def finding(
    better: str,
    difference: float,
    interval: Interval,
    p_value: float,
    *,
    significant: bool,
    test: str,
    needed: int | None,
    detectable: float,
) -> str:
    """``"B passes 8.0 points more than A [2.1, 13.9], p = 0.004 (test)"`` or "no difference this suite can detect".

    ``better`` is the sentence's subject and what it is compared with (``"B passes {} than A"``
    reads with ``{}`` as "8.0 points more"); ``test`` says what the p-value rests on.
    """
    span = f"[{interval.low * 100:+.1f}, {interval.high * 100:+.1f}]"
    if significant:
        way = "more" if difference > 0 else "fewer"
        return f"{better.format(f'{abs(difference) * 100:.1f} points {way}')} {span}, p {p_text(p_value)} ({test})"
    need = f"; about {needed} cases would be needed to see {detectable * 100:.0f} points" if needed else ""
    found = f"{difference * 100:+.1f} points {span}, p {p_text(p_value)} ({test})"
    return f"no difference this suite can detect: {found}{need}"
