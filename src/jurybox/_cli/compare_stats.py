"""The paired statistics of ``jurybox compare``: is B better than A, by how much, and can it be believed?

Printed after the runs' figures: the pass-rate finding in one sentence (with
the number of pairs it rests on and each side's ERROR and ABSTAIN apart), the
paired mean differences per tier and per judge, the judge-corrected differences
of calibrated judges, and for three runs or more every pair with its
Holm-adjusted p-value. Every table falls back to one block per row at 80 columns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from jurybox._cli.layout import print_fitted, stacked_row
from jurybox.report import terminal_safe
from jurybox.stats import Interval, MeanDifference
from jurybox.store import PairedRuns


def print_paired(out: Console, paired: PairedRuns) -> None:
    """The pass-rate finding, the undecided of each side, the mean differences and the corrected judges."""
    c = paired.comparison
    rate = c.pass_rate
    out.print(Text("Paired by case", style="bold italic"))
    out.print(
        Text(
            f"{rate.pairs} decided pairs of {rate.pairs + len(c.undecided)} cases in both runs; "
            f"left out: {_undecided(paired.undecided_a, 'A')}, {_undecided(paired.undecided_b, 'B')}; "
            f"added {len(c.added)}, removed {len(c.removed)}"
        )
    )
    style = {"better": "bold green", "worse": "bold red"}.get(rate.verdict, "")
    out.print(Text(rate.describe("A", "B"), style=style))
    if c.means:
        print_fitted(out, _means_table(c.means), [_mean_block(m) for m in c.means])
    for fix in paired.corrected:
        out.print(Text("judge-corrected " + terminal_safe(fix.describe())))


def print_many(out: Console, found: Sequence[PairedRuns], letters: Mapping[str, str], alpha: float) -> None:
    """Every pair of three runs or more: the difference, its interval, McNemar's p and Holm's."""
    table = Table(title="Every pair (Holm-adjusted over all pairs)", title_justify="left")
    for column in ("pair", "pairs", "change", "95% interval", "p", "Holm p", "verdict"):
        table.add_column(column, justify="left" if column in ("pair", "verdict") else "right", no_wrap=True)
    blocks = []
    for p in found:
        rate = p.comparison.pass_rate
        verdict = _verdict(
            rate.verdict if p.adjusted_p is None else _adjusted_verdict(rate.difference, p.adjusted_p, alpha)
        )
        pair = f"{letters[p.run_b.id]} vs {letters[p.run_a.id]}"
        cells = (
            pair,
            str(rate.pairs),
            _points(rate.difference),
            _interval(rate.interval),
            _p(rate.p_value),
            _p(p.adjusted_p),
        )
        table.add_row(*cells, verdict)
        labels = ("pairs", "change", "95%", "p", "Holm p")
        details = [Text(f"{label} ", style="dim") + Text(v) for label, v in zip(labels, cells[1:], strict=True)]
        blocks.append(stacked_row(Text(pair, style="bold") + Text(" · ") + verdict, details))
    print_fitted(out, table, blocks)
    for p in found:
        out.print(
            Text(
                f"{letters[p.run_b.id]} vs {letters[p.run_a.id]}: "
                + p.describe(letters[p.run_a.id], letters[p.run_b.id])
            )
        )


def _adjusted_verdict(difference: float | None, adjusted: float, alpha: float) -> str:
    if difference is None:
        return "not enough cases"
    if adjusted >= alpha:
        return "no detectable difference"
    return "better" if difference > 0 else "worse"


def _verdict(text: str) -> Text:
    return Text(text, style={"better": "green", "worse": "bold red"}.get(text, ""))


def _means_table(means: Sequence[MeanDifference]) -> Table:
    table = Table(title="Mean score differences, B - A (paired)", title_justify="left")
    for column in ("what", "pairs", "A", "B", "change", "95% interval", "p"):
        table.add_column(column, justify="left" if column == "what" else "right", no_wrap=True)
    for m in means:
        table.add_row(*_mean_cells(m))
    return table


def _mean_cells(m: MeanDifference) -> tuple[str, ...]:
    return (
        terminal_safe(m.name),
        str(m.pairs),
        f"{m.a_mean:.3f}",
        f"{m.b_mean:.3f}",
        f"{m.difference:+.3f}",
        _interval(m.interval, points=False),
        _p(m.p_value),
    )


def _mean_block(m: MeanDifference) -> Any:
    cells = _mean_cells(m)
    labels = ("pairs", "A", "B", "change", "95%", "p (Wilcoxon)")
    details = [Text(f"{label} ", style="dim") + Text(v) for label, v in zip(labels, cells[1:], strict=True)]
    return stacked_row(Text(cells[0], style="bold"), details)


def _undecided(counts: Mapping[str, int], side: str) -> str:
    return f"{side} {counts.get('error', 0)} error, {counts.get('abstain', 0)} abstain"


def _points(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:+.1f} pts"


def _interval(interval: Interval | None, *, points: bool = True) -> str:
    if interval is None:
        return "-"
    if points:
        return f"[{interval.low * 100:+.1f}, {interval.high * 100:+.1f}]"
    return f"[{interval.low:+.3f}, {interval.high:+.3f}]"


def _p(value: float | None) -> str:
    if value is None:
        return "-"
    return "< 0.001" if value < 0.001 else f"{value:.3f}"
