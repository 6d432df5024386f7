"""A paired finding in plain words, the one sentence every comparison prints."""

from __future__ import annotations

from typing import Protocol

from jurybox.stats._bootstrap import Interval


def p_text(value: float) -> str:
    """``= 0.004`` or ``< 0.001``: what follows a ``p`` in a sentence."""
    return "< 0.001" if value < 0.001 else f"= {value:.3f}"


class Measured(Protocol):
    """What a sentence needs of a paired difference (``PassRateDifference``, ``BaselineDifference``)."""

    @property
    def significant(self) -> bool: ...

    @property
    def needed(self) -> int | None: ...

    @property
    def detectable(self) -> float: ...


def finding(better: str, measured: Measured, difference: float, interval: Interval, p_value: float, test: str) -> str:
    """``"B passes 8.0 points more than A [2.1, 13.9], p = 0.004 (test)"`` or "no difference this suite can detect".

    ``better`` is the sentence's subject and what it is compared with (``"B passes {} than A"``
    reads with ``{}`` as "8.0 points more"); ``test`` says what the p-value rests on. The
    difference, interval and p-value are passed once known to be there (not None).
    """
    span = f"[{interval.low * 100:+.1f}, {interval.high * 100:+.1f}]"
    if measured.significant:
        way = "more" if difference > 0 else "fewer"
        return f"{better.format(f'{abs(difference) * 100:.1f} points {way}')} {span}, p {p_text(p_value)} ({test})"
    need = (
        f"; about {measured.needed} cases would be needed to see {measured.detectable * 100:.0f} points"
        if measured.needed
        else ""
    )
    found = f"{difference * 100:+.1f} points {span}, p {p_text(p_value)} ({test})"
    return f"no difference this suite can detect: {found}{need}"
