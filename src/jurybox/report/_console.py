"""The console report: the cases that did not pass (each in a compact block), the passing ones, the totals.

Failing cases come first, as in the HTML and Markdown reports: FAIL, then ERROR,
then ABSTAIN, each with the agent's reply, the tools it called against the ones
expected and the deciding judges' reasoning (see ``_console_case``). Passing
cases are one line unless ``verbose``. The layout follows the console's width:
names, statuses and the first line of a reason are never cut or split; what
does not fit moves to the next line.
"""

from __future__ import annotations

from rich.console import Console, Group
from rich.panel import Panel
from rich.text import Text

from jurybox.core import KIND_REPORT, PluginRegistry, Status
from jurybox.report import _format as fmt
from jurybox.report._calibrations import CalibratedJudge
from jurybox.report._case import CaseSummary
from jurybox.report._console_case import (
    DEGRADED_STYLE,
    SKIPPED_STYLE,
    STATUS_STYLES,
    case_line,
    case_table,
    failure_block,
    terminal_safe,
    verdict_text,
)
from jurybox.report._formats import ReportFormat
from jurybox.report._model import RunReport, Totals

__all__ = ["DEGRADED_STYLE", "SKIPPED_STYLE", "STATUS_STYLES", "render_console", "verdict_text"]

PASSED_NAMES = 20
"""Passing cases named in the one-line summary; ``verbose`` lists every one."""
WIDE = 100
"""From this many columns, passing cases (``verbose``) are a table; below, a stacked list."""


def render_console(
    report: RunReport, console: Console, *, verbose: bool = False, width: int = 100, limit: int | None = None
) -> None:
    """Print the run to a rich console.

    The cases that did not pass first (FAIL, ERROR, ABSTAIN, then degraded passes),
    each as a block: status, name, score and deciding tier on one line, then why
    (its first line whole), the agent's reply (bounded), the tools it called vs the
    ones expected, and any failing round and follow-up exchange. Passing cases are
    named on one line, or (``verbose``) shown one per row with their reasoning.
    Then the totals line, per-tier pass rates, calibrations and the run's notes.

    Args:
        report: The run.
        console: Where to print (``Console(record=True)`` to capture it); its width picks the layout.
        verbose: List every passing case with its reasoning, and show reasoning in full.
        width: No longer used: reasons wrap to the console's width instead of being cut (kept so
            existing calls work).
        limit: Show at most this many cases in blocks and rows, failing first, and say how many
            were left out (a list of thousands of rows helps nobody); None shows all.
    """
    console.print(
        Text(f"jurybox · {terminal_safe(report.suite)} · run {terminal_safe(report.run_id)}", style="bold"),
        soft_wrap=False,
    )
    ordered = report.failing_first()
    # A slice of a streamed report rebuilds only those cases from the store.
    head = ordered if limit is None else ordered[: max(limit, 0)]
    passing: list[CaseSummary] = []
    shown_not_passed = shown_passed = 0
    for case in head:
        if case.ok and not case.degraded:
            passing.append(case)
            continue
        # A degraded pass is shown whole: a fallback policy decided it, which a person should read.
        console.print(failure_block(case) if not case.ok else case_line(case))
        shown_not_passed += not case.ok
        shown_passed += case.ok
    unlisted = report.totals.passed - shown_passed  # passing cases not drawn as a block above
    hidden_passed = 0
    if verbose:
        _print_passing(console, passing)
        hidden_passed = unlisted - len(passing)
    elif unlisted:
        console.print(_passing_line(unlisted, passing))
    hidden_not_passed = report.totals.not_passed - shown_not_passed
    if hidden_not_passed + hidden_passed:
        console.print(
            Text(
                f"… {hidden_not_passed + hidden_passed} more case(s) not shown ({hidden_not_passed} of them not "
                "passed); see the JSON or HTML report",
                style="dim",
            )
        )
    console.print(_totals_line(report))
    endpoints = _endpoint_line(report)
    if endpoints is not None:
        console.print(endpoints)
    rates = _tier_line(report)
    if rates is not None:
        console.print(rates)
    for judge in report.calibrations:
        console.print(_calibration_line(judge))
    notices = _notices(report)
    if notices:
        console.print(Panel(Group(*notices), title="notes", title_align="left", border_style="yellow", expand=False))


def _print_passing(console: Console, cases: list[CaseSummary]) -> None:
    if console.width >= WIDE:
        console.print(case_table(cases))
        return
    for case in cases:
        console.print(case_line(case))


def _passing_line(count: int, named: list[CaseSummary]) -> Text:
    """`` PASS  N case(s): a, b, … and K more (-v lists each)``: names wrap between words, never inside one."""
    line = Text(f" {Status.PASS.value.upper()} ", style=STATUS_STYLES[Status.PASS])
    names = [terminal_safe(case.name) for case in named[:PASSED_NAMES]]
    line.append(f" {count} case(s)" + (": " + ", ".join(names) if names else ""))
    more = count - len(names)
    if names and more > 0:
        line.append(f" and {more} more")
    line.append(" (-v lists each with its reasoning)", style="dim")
    return line


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
        f" · judge calls {fmt.judge_calls_text(totals.judge_calls, totals.judge_cache_hits, *_faults(totals, 'judge'))}"
        f" · tokens {fmt.tokens(totals)}"
        f" · cost {fmt.cost(totals)} · {fmt.duration(totals.duration)}"
    )
    agent = _faults(totals, "agent")
    if agent:
        line.append(f" · agent ({agent[0]})")
    if report.judge_model:
        line.append(f" · judge {fmt.visible(report.judge_model)}", style="dim")
    return line


def _faults(totals: Totals, who: str) -> tuple[str, ...]:
    """``N attempts, R retries, F failed`` when ``who``'s calls met faults; nothing when none did."""
    counts = totals.calls.get(who, {})
    retries, failures = counts.get("retries", 0), counts.get("failures", 0)
    if not retries and not failures:
        return ()
    return (f"{counts.get('attempts', 0)} attempts, {retries} retries, {failures} failed",)


def _endpoint_line(report: RunReport) -> Text | None:
    """``judge endpoints: URL N calls (E errors) · ...`` for a judge fleet; None without one."""
    endpoints = report.totals.judge_endpoints
    if not endpoints:
        return None
    line = Text("judge endpoints: ", style="dim")
    for index, (url, counts) in enumerate(sorted(endpoints.items())):
        if index:
            line.append(" · ", style="dim")
        errors = counts.get("errors", 0)
        line.append(f"{fmt.visible(url)} {counts.get('calls', 0)} calls")
        if errors:
            line.append(f" ({errors} errors)", style="yellow")
    return line


def _tier_line(report: RunReport) -> Text | None:
    tiers = report.totals.tiers
    if not tiers:
        return None
    line = Text("tiers: ", style="dim")
    for index, tier in enumerate(tiers.values()):
        if index:
            line.append(" · ", style="dim")
        line.append(f"{fmt.visible(tier.tier)} {fmt.rate(tier.rate)} ({tier.passed}/{tier.ran})")
        if tier.target is not None:  # the tiers' targets: deterministic 95%, llm_operations 80%, llm_judge 70%
            line.append(f" target {fmt.target(tier.target, tier.target_met)}", style="dim")
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


# Printed, never a file: write_reports prints it with render_console (register_report_format takes file formats).
PluginRegistry.default().register(KIND_REPORT, "console", ReportFormat(""), summary="the table on the terminal")
