"""``jurybox compare A B [C ...]``: what changed between runs, and whether it is more than noise, at any width."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from jurybox._cli.common import StoreOption, console, fail, opened_store, pct, seconds
from jurybox._cli.compare_stats import print_many, print_paired
from jurybox._cli.layout import print_fitted, stacked_row
from jurybox.report import cost_gaps, cost_text, terminal_safe
from jurybox.stats import ALPHA
from jurybox.store import PairedRuns, RunComparison, RunInfo, compare_runs, resolve_runs

FIRST_LINE_CHARS = 1000
"""A reason's first line is shown whole up to this length (a pathological one-line reply is not)."""


def compare(
    runs: Annotated[
        list[str],
        typer.Argument(
            help="Two runs or more: ids, unique id prefixes, 'last' or 'last~N' (N runs before the latest); "
            "one run is compared with 'last'. A (the earlier) first; with three or more, every pair is compared.",
            show_default=False,
        ),
    ],
    store_url: StoreOption = None,
    limit: Annotated[int, typer.Option(help="Rows shown per table.")] = 20,
    alpha: Annotated[float, typer.Option(help="Significance level differences are called at.")] = ALPHA,
    json_output: Annotated[bool, typer.Option("--json", help="Print the figures as JSON instead of tables.")] = False,
) -> None:
    """Compare runs: cases paired by name, the pass-rate difference with its interval and McNemar test, flips.

    Two runs: cases that flipped, score deltas, new errors, cost and latency, then the
    paired statistics (pass rate, mean scores per tier and judge, judge-corrected
    differences of calibrated judges). Three or more: every pair, Holm-adjusted.
    """
    if len(runs) == 1:
        runs = [*runs, "last"]
    if not 0.0 < alpha < 1.0:
        raise typer.BadParameter(f"must be strictly between 0 and 1, got {alpha}", param_hint="--alpha")
    out = console()
    with opened_store(store_url) as store:
        infos = resolve_runs(store, list(runs))
        if len({info.id for info in infos}) < len(infos):
            fail(
                "compare needs two runs or more, all different; got the same run twice "
                f"({', '.join(info.id for info in infos)}): e.g. `jurybox compare last~1 last`"
            )
        if len(infos) > 2:
            found = store.paired.compare_many(infos, alpha=alpha)
            result = None
        else:
            result = compare_runs(store, infos[0].id, infos[1].id)
            found = [store.paired.compare(infos[0], infos[1], alpha=alpha)]
    if result is None:
        _print_many(out, infos, found, alpha, json_output)
        return
    if json_output:
        typer.echo(json.dumps(comparison_json(result, found[0]), indent=2))
        return
    a, b = result.run_a, result.run_b
    # The ids on lines of their own: as column headers they would be cut at 80 columns.
    out.print(Text(f"A = run {a.id} ({a.suite}, {a.status})"))
    out.print(Text(f"B = run {b.id} ({b.suite}, {b.status})"))
    summary = Table(title="Runs", title_justify="left")
    summary.add_column("", no_wrap=True)
    summary.add_column("A", justify="right", no_wrap=True)
    summary.add_column("B", justify="right", no_wrap=True)
    summary.add_column("change", justify="right", no_wrap=True)
    rate_change = None if a.pass_rate is None or b.pass_rate is None else b.pass_rate - a.pass_rate
    summary.add_row("suite", a.suite, b.suite, "")
    summary.add_row("status", a.status, b.status, "")
    summary.add_row("cases", str(a.recorded), str(b.recorded), f"{b.recorded - a.recorded:+d}")
    summary.add_row("pass rate", pct(a.pass_rate), pct(b.pass_rate), _points(rate_change))
    summary.add_row("errors", str(a.errored), str(b.errored), f"{b.errored - a.errored:+d}")
    (cost_a, gaps_a), (cost_b, gaps_b) = _cost(a), _cost(b)
    summary.add_row("cost", cost_a, cost_b, _money_delta(result.cost_delta))
    summary.add_row("tokens", _int(a.tokens), _int(b.tokens), _int_delta(a.tokens, b.tokens))
    for label, la, lb in (
        ("latency mean", result.latency_a.mean, result.latency_b.mean),
        ("latency p95", result.latency_a.p95, result.latency_b.p95),
    ):
        delta = None if la is None or lb is None else lb - la
        summary.add_row(label, seconds(la), seconds(lb), "-" if delta is None else f"{delta:+.2f}s")
    out.print(summary)
    for side, gaps in (("A", gaps_a), ("B", gaps_b)):
        if gaps:
            out.print(Text(f"{side}'s cost is a lower bound ({gaps})"))
    print_paired(out, found[0])

    flipped = result.flipped
    if flipped:
        table = _case_table(f"Flipped ({len(flipped)})", ("case", "A", "B", ""), "reason in B")
        stacked = []
        for change in flipped[:limit]:
            assert change.before is not None and change.after is not None
            arrow = Text("fixed", style="green") if change.fixed else Text("broke", style="bold red")
            reason = _first_line(change.after.error or change.after.reasoning)
            before, after = change.before.status.value, change.after.status.value
            table.add_row(Text(terminal_safe(change.case)), before, after, arrow, reason)
            head = arrow + Text(" ") + Text(terminal_safe(change.case), style="bold") + Text(f" · {before} → {after}")
            stacked.append(stacked_row(head, [reason]))
        print_fitted(out, table, stacked)
    else:
        out.print("No case flipped between pass and not-pass.")

    errors = result.new_errors
    if errors:
        table = _case_table(f"New errors ({len(errors)})", ("case",), "error")
        stacked = []
        for change in errors[:limit]:
            assert change.after is not None
            error = _first_line(change.after.error or change.after.reasoning)
            table.add_row(Text(terminal_safe(change.case)), error)
            stacked.append(stacked_row(Text(terminal_safe(change.case), style="bold"), [error]))
        print_fitted(out, table, stacked)

    moved = result.score_changes
    if moved:
        table = Table(title=f"Score changes ({len(moved)}, largest first)", title_justify="left")
        for column in ("case", "A", "B", "delta"):
            table.add_column(column, justify="left" if column == "case" else "right", no_wrap=True)
        stacked = []
        for change in moved[:limit]:
            assert change.before is not None and change.after is not None
            delta = change.score_delta or 0.0
            shift = Text(f"{delta:+.2f}", style="green" if delta > 0 else "red")
            before, after = f"{change.before.score:.2f}", f"{change.after.score:.2f}"
            table.add_row(Text(terminal_safe(change.case)), before, after, shift)
            stacked.append(
                Text(terminal_safe(change.case), style="bold") + Text(f" · {before} → {after} (") + shift + Text(")")
            )
        print_fitted(out, table, stacked)
    # Text, not markup: a case name is the suite author's, and "[x]" in it must print as typed.
    if result.only_in_a:
        names = terminal_safe(", ".join(result.only_in_a[:limit]))
        out.print(Text(f"Only in A ({len(result.only_in_a)}): {names}"))
    if result.only_in_b:
        names = terminal_safe(", ".join(result.only_in_b[:limit]))
        out.print(Text(f"Only in B ({len(result.only_in_b)}): {names}"))


def _print_many(
    out: Any, infos: Sequence[RunInfo], found: Sequence[PairedRuns], alpha: float, json_output: bool
) -> None:
    if json_output:
        data = {"runs": [_run_json(info) for info in infos], "comparisons": [p.to_dict() for p in found]}
        typer.echo(json.dumps(data, indent=2))
        return
    letters = {info.id: _letter(i) for i, info in enumerate(infos)}
    for info in infos:
        out.print(
            Text(f"{letters[info.id]} = run {info.id} ({info.suite}, {info.status}, pass rate {pct(info.pass_rate)})")
        )
    print_many(out, found, letters, alpha)


def _letter(index: int) -> str:
    return chr(ord("A") + index) if index < 26 else f"R{index + 1}"


def _run_json(info: RunInfo) -> dict[str, Any]:
    return {
        "id": info.id,
        "suite": info.suite,
        "status": info.status,
        "cases": info.recorded,
        "passed": info.passed,
        "failed": info.failed,
        "errored": info.errored,
        "abstained": info.abstained,
        "pass_rate": info.pass_rate,
        "cost": info.cost,
        "cost_exact": info.cost_exact,
        "unpriced_calls": info.unpriced_calls,
        "cost_unknown": info.cost_unknown,
        "tokens": info.tokens,
    }


def _cost(info: RunInfo) -> tuple[str, str]:
    """The run's cost for a table cell (``$0.0040``, ``≥ $0.0030``, ``unknown``) and what it leaves out, or ``""``.

    A lower bound says so and an unknown cost is never $0; the note goes under the table so the
    cell fits a narrow terminal.
    """
    gaps = cost_gaps(info.unpriced_calls, info.cost_unknown)
    if not gaps:
        return ("-" if info.cost is None else cost_text(info.cost, 0)), ""
    return (f"≥ {cost_text(info.cost, 0)}" if info.cost else "unknown"), gaps


def comparison_json(result: RunComparison, paired: PairedRuns) -> dict[str, Any]:
    """What ``compare A B --json`` prints: both runs, the paired statistics, and the cases by kind of change."""
    return {
        "a": _run_json(result.run_a),
        "b": _run_json(result.run_b),
        "paired": paired.to_dict(),
        "latency": {
            "a": {"mean": result.latency_a.mean, "p50": result.latency_a.p50, "p95": result.latency_a.p95},
            "b": {"mean": result.latency_b.mean, "p50": result.latency_b.p50, "p95": result.latency_b.p95},
        },
        "cost_change": result.cost_delta,
        "broke": [c.case for c in result.flipped if c.broke],
        "fixed": [c.case for c in result.flipped if c.fixed],
        "new_errors": [c.case for c in result.new_errors],
        "only_in_a": result.only_in_a,
        "only_in_b": result.only_in_b,
    }


def _points(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:+.1f} pts"


def _money_delta(value: float | None) -> str:
    return "-" if value is None else f"{'+' if value >= 0 else '-'}${abs(value):.4f}"


def _int(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def _int_delta(a: int | None, b: int | None) -> str:
    return "-" if a is None or b is None else f"{b - a:+,}"


def _case_table(title: str, columns: Sequence[str], reason: str) -> Table:
    """Case name and statuses whole; the reason takes the room left and wraps between words."""
    table = Table(title=title, title_justify="left")
    for column in columns:
        table.add_column(column, no_wrap=True)
    table.add_column(reason, ratio=1, overflow="fold", min_width=30)
    return table


def _first_line(text: str | None, limit: int = FIRST_LINE_CHARS) -> Text:
    """The first line of a reason, whole (up to ``limit``), then how much more the run holds."""
    lines = (text or "").strip().splitlines() or [""]
    first = lines[0].strip()
    rest = len((text or "").strip()) - len(first)
    if len(first) > limit:
        rest += len(first) - limit
        first = first[:limit]
    line = Text(terminal_safe(first))
    if rest > 0:
        line.append(f" … (+{rest} characters: jurybox serve shows the case)", style="dim")
    return line
