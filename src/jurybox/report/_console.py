"""The console report: a rich table of cases, then the totals and the run's notes."""

from __future__ import annotations

from rich.console import Console, Group
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from jurybox.core import RoundRecord, Status
from jurybox.report import _format as fmt
from jurybox.report._calibrations import CalibratedJudge
from jurybox.report._case import CaseSummary, explain, own_verdict
from jurybox.report._model import RunReport, Totals

STATUS_STYLES = {
    Status.PASS: "bold green",
    Status.FAIL: "bold red",
    Status.ERROR: "bold white on red",
    Status.ABSTAIN: "bold black on yellow",
}
"""ERROR and ABSTAIN are drawn as blocks so they never read as an ordinary FAIL (or PASS)."""

DEGRADED_STYLE = "yellow"
SKIPPED_STYLE = "dim cyan"


def render_console(
    report: RunReport, console: Console, *, verbose: bool = False, width: int = 100, limit: int | None = None
) -> None:
    """Print the run to a rich console.

    One row per case (verdict, score, shortened reasoning, the tier that decided,
    tiers skipped for it); multi-round cases add a row per round and its follow-up
    exchanges. Then the totals line, per-tier pass rates and the run's notes.

    Args:
        report: The run.
        console: Where to print (``Console(record=True)`` to capture it).
        verbose: Show reasoning in full instead of shortened to ``width`` characters.
        width: Length reasoning is shortened to when not verbose.
        limit: Show at most this many cases, failing first, and say how many were
            left out (a table of thousands of rows helps nobody); None shows all in
            suite order.
    """
    table = Table(
        title=f"jurybox · {escape(fmt.visible(report.suite))} · run {escape(fmt.visible(report.run_id))}",
        title_justify="left",
        expand=False,
    )
    table.add_column("case", overflow="fold")
    table.add_column("verdict", no_wrap=True)
    table.add_column("score", justify="right", no_wrap=True)
    table.add_column("reasoning", overflow="fold", ratio=1)
    table.add_column("tier", overflow="fold")
    shown = report.cases if limit is None else report.failing_first()[: max(limit, 0)]
    for case in shown:
        _case_rows(table, case, verbose, width)
    console.print(table)
    hidden = len(report.cases) - len(shown)
    if hidden:
        not_passed = report.totals.not_passed - sum(1 for case in shown if not case.ok)
        console.print(
            Text(
                f"… {hidden} more case(s) not shown ({not_passed} of them not passed); see the JSON or HTML report",
                style="dim",
            )
        )
    console.print(_totals_line(report))
    rates = _tier_line(report)
    if rates is not None:
        console.print(rates)
    for judge in report.calibrations:
        console.print(_calibration_line(judge))
    notices = _notices(report)
    if notices:
        console.print(Panel(Group(*notices), title="notes", title_align="left", border_style="yellow", expand=False))


def verdict_text(case: CaseSummary) -> Text:
    """The verdict cell: the status, plus a visible flag when a fallback policy produced it."""
    text = Text(f" {case.status.value.upper()} ", style=STATUS_STYLES[case.status])
    if case.degraded:
        text.append(" degraded", style=f"bold {DEGRADED_STYLE}")
    return text


def _case_rows(table: Table, case: CaseSummary, verbose: bool, width: int) -> None:
    record = case.record
    reason = fmt.visible(case.reason) if verbose else fmt.shorten(case.reason, width)
    reasoning = Text(reason, style="red" if record.status is Status.ERROR else "")
    tier = Text(fmt.visible(case.tier or "—"))
    for skipped, why in case.skipped.items():
        label = "not needed" if why.startswith("not needed") else "skipped"
        tier.append(f"\n{label}: {fmt.visible(skipped)}", style=SKIPPED_STYLE)
    name = Text(fmt.visible(record.case), style="bold")
    if record.tags:
        name.append("\n" + fmt.visible(" ".join(f"#{t}" for t in record.tags)), style="dim")
    table.add_row(name, verdict_text(case), fmt.score(case.score), reasoning, tier)
    for round_ in record.rounds:
        if own_verdict(record, round_):
            _round_row(table, round_, verbose, width)
        for question, reply in round_.follow_ups:
            exchange = Text("asked: ", style="dim italic")
            exchange.append(fmt.visible(question) if verbose else fmt.shorten(question, width), style="italic")
            exchange.append("\nreplied: ", style="dim italic")
            exchange.append(fmt.visible(reply) if verbose else fmt.shorten(reply, width), style="italic")
            table.add_row(Text("    ↳ follow-up", style="dim italic"), "", "", exchange, "")


def _round_row(table: Table, round_: RoundRecord, verbose: bool, width: int) -> None:
    judgment = round_.judgment
    why = explain(judgment)
    verdict = Text(f" {judgment.status.value.upper()} ", style=STATUS_STYLES[judgment.status])
    if judgment.degraded:
        verdict.append(" degraded", style=DEGRADED_STYLE)
    table.add_row(
        Text(f"  round {round_.index + 1}: {fmt.shorten(round_.prompt, 60)}", style="dim"),
        verdict,
        fmt.score(judgment.value),
        Text(fmt.visible(why) if verbose else fmt.shorten(why, width), style="dim"),
        Text(fmt.visible(judgment.decided_by or "—"), style="dim"),
    )


def _totals_line(report: RunReport) -> Text:
    totals = report.totals
    line = Text()
    if report.status != "completed":
        headline = "INCOMPLETE"
    elif not report.records:
        headline = "NO CASES RAN"
    else:
        headline = "PASSED" if report.ok else "FAILED"
    line.append(f"{headline} ", style="bold green" if report.ok else "bold red")
    line.append(f"{totals.passed}/{totals.cases} passed ({fmt.rate(totals.pass_rate)})")
    for status, count in (
        (Status.FAIL, totals.failed),
        (Status.ERROR, totals.errored),
        (Status.ABSTAIN, totals.abstained),
    ):
        if count:
            line.append(" · ")
            line.append(f"{count} {status.value}", style=STATUS_STYLES[status])
    if totals.degraded_judgments:
        line.append(" · ")
        line.append(f"{totals.degraded_judgments} degraded verdict(s)", style=DEGRADED_STYLE)
    line.append(
        f" · judge calls {totals.judge_calls}{_faults(totals, 'judge')} · tokens {fmt.tokens(totals)}"
        f" · cost {fmt.cost(totals)} · {fmt.duration(totals.duration)}"
    )
    agent = _faults(totals, "agent")
    if agent:
        line.append(f" · agent{agent}")
    if report.judge_model:
        line.append(f" · judge {fmt.visible(report.judge_model)}", style="dim")
    return line


def _faults(totals: Totals, who: str) -> str:
    """`` (N attempts, R retries, F failed)`` when ``who``'s calls met faults; empty when none did."""
    counts = totals.calls.get(who, {})
    retries, failures = counts.get("retries", 0), counts.get("failures", 0)
    if not retries and not failures:
        return ""
    return f" ({counts.get('attempts', 0)} attempts, {retries} retries, {failures} failed)"


def _tier_line(report: RunReport) -> Text | None:
    tiers = report.totals.tiers
    if not tiers:
        return None
    line = Text("tiers: ", style="dim")
    for index, tier in enumerate(tiers.values()):
        if index:
            line.append(" · ", style="dim")
        line.append(f"{fmt.visible(tier.tier)} {fmt.rate(tier.rate)} ({tier.passed}/{tier.ran})")
    return line


def _calibration_line(judge: CalibratedJudge) -> Text:
    line = Text("calibration: ", style="dim")
    # Only a correction is good news; every other status says the pass rate cannot be corrected.
    line.append(fmt.visible(judge.describe()), style="" if judge.status == "corrected" else DEGRADED_STYLE)
    return line


def _notices(report: RunReport) -> list[Text]:
    notices = report.notices()
    incomplete = report.status != "completed"
    return [
        Text(
            fmt.visible(text),
            style="bold red" if incomplete and index == 0 else ("" if text in report.notes else SKIPPED_STYLE),
        )
        for index, text in enumerate(notices)
    ]
