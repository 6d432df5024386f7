"""How numbers and texts look in every report, so the formats agree to the character."""

from __future__ import annotations

import re
from datetime import datetime

from jurybox.core import CategoricalScore, Judgment, NumericScore, Status, deciding_judgment, pass_mark
from jurybox.report._model import Totals

_SPACE = re.compile(r"\s+")
# Control characters (except tab, newline and carriage return), lone surrogates and non-characters: they
# cannot appear in XML 1.0, are parse errors in HTML, and an ESC in agent output
# would drive the reader's terminal. Every report shows them as visible escapes.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]")


def visible(text: str) -> str:
    """``text`` with control characters shown as ``\\xNN`` / ``\\uNNNN`` escapes; tab, newline and CR kept."""
    return _CONTROL.sub(_escape_char, text)


def _escape_char(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def shorten(text: str, width: int = 120) -> str:
    """One line of at most ``width`` characters: whitespace collapsed, cut with an ellipsis."""
    line = _SPACE.sub(" ", visible(text)).strip()
    return line if len(line) <= width else line[: max(width - 1, 0)].rstrip() + "…"


def score(value: float | None) -> str:
    """A 0..1 score with two decimals, or an em dash when the verdict has none."""
    return "—" if value is None else f"{value:.2f}"


def case_score(judgment: Judgment) -> str:
    """A case's score as the judge that decided it gave it, against its pass mark.

    ``correctness 0.10 < 0.70`` (failed its mark), ``contains 1.00`` (no mark), or
    ``score —`` for a verdict with no score (ABSTAIN, ERROR).
    """
    decider = deciding_judgment(judgment)
    value = decider.value if judgment.status in (Status.PASS, Status.FAIL) else None
    if value is None:
        return "score —"
    name = decider.judge if decider is not judgment and decider.judge else "score"
    mark = pass_mark(decider)
    if mark is None:
        return f"{name} {value:.2f}"
    return f"{name} {value:.2f} {'<' if value < mark - 1e-9 else '≥'} {mark:.2f}"


def judgment_score(judgment: Judgment) -> str:
    """The score of a verdict as the judge gave it (``7/10``, ``B``, ``true``) plus its 0..1 value."""
    raw = judgment.score
    if raw is None:
        return "—"
    value = f"{judgment.value:.2f}"
    if isinstance(raw, NumericScore) and (raw.min, raw.max) != (0.0, 1.0):
        return f"{raw.value:g} on {raw.min:g}..{raw.max:g} ({value})"
    if isinstance(raw, CategoricalScore):
        return f"{raw.value} ({value})"
    return value


def rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def target(value: float | None, met: bool | None) -> str:
    """A tier's target pass rate and whether it was reached: ``95% met``, ``80% missed``, or ``-``."""
    if value is None:
        return "-"
    return f"{value:.0%}" + ("" if met is None else " met" if met else " missed")


def tokens(totals: Totals) -> str:
    """Known token total, saying how many cases did not report theirs."""
    if totals.tokens is None:
        return "unknown" if totals.cases else "0"
    text = f"{totals.tokens:,}"
    return f"{text} (+{totals.tokens_unknown} unknown)" if totals.tokens_unknown else text


def usd(value: float) -> str:
    if value == 0:
        return "$0.00"
    # Judge calls cost fractions of a cent; two decimals would show most runs as $0.00.
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def cost(totals: Totals) -> str:
    """Known cost total; an unknown cost is shown as unknown, never as $0."""
    known = totals.cost or 0.0
    return cost_text(known, totals.cost_unknown if totals.cost is not None else totals.cases, "case")


def cost_text(known: float, unpriced: int, noun: str = "call", *, unknown_cases: int = 0) -> str:
    """The one wording of a cost every report and the command line use; unknown is never shown as zero.

    ``$0.0123`` when every ``noun`` had a known price; ``≥ $0.0123 (price unknown for 2 calls)``
    when some had none; ``unknown (price unknown for 45 calls)`` when nothing known was spent.
    ``unknown_cases`` adds cases stored with no cost at all (``... for 2 calls and 3 cases``).
    """
    what = cost_gaps(unpriced, unknown_cases, noun)
    if not what:
        return usd(known)
    return f"≥ {usd(known)} ({what})" if known > 0 else f"unknown ({what})"


def cost_gaps(unpriced: int | None, unknown_cases: int | None = 0, noun: str = "call") -> str:
    """What a cost leaves out: ``price unknown for 2 calls and 3 cases``, or ``""`` when nothing."""
    counts = ((unpriced, noun), (unknown_cases, "case"))
    missing = [f"{count} {word}{'' if count == 1 else 's'}" for count, word in counts if count]
    return f"price unknown for {' and '.join(missing)}" if missing else ""


def judge_calls_text(calls: int, cache_hits: int | None, *more: str) -> str:
    """``45 (12 from cache)``: how many judge calls, and how many the response cache answered.

    ``more`` adds to the parenthesis (``45 (12 from cache; 50 attempts, 5 retries, 0 failed)``);
    an unknown ``cache_hits`` (a run stored before they were counted) is left out.
    """
    parts = [*([f"{cache_hits} from cache"] if calls and cache_hits is not None else []), *more]
    return f"{calls} ({'; '.join(parts)})" if parts else str(calls)


def case_cost(value: float | None) -> str:
    return "unknown" if value is None else usd(value)


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "unknown"
    if seconds < 60:
        return f"{seconds:.2f}s"
    minutes, rest = divmod(seconds, 60)
    if minutes < 60:
        return f"{int(minutes)}m {rest:04.1f}s"
    hours, minutes = divmod(minutes, 60)
    return f"{int(hours)}h {int(minutes):02d}m {int(rest):02d}s"


def when(moment: datetime | None) -> str:
    return "unknown" if moment is None else moment.isoformat(sep=" ", timespec="seconds")
