"""The Markdown report, shaped for a CI job summary (GitHub's ``$GITHUB_STEP_SUMMARY``).

Headline, totals, the cases that did not pass first with their reasons, then
every case in a collapsible ``<details>`` section. Untrusted text (agent output,
judge reasoning) is escaped so it can neither inject HTML nor break a table.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterator

from jurybox.core import Status
from jurybox.report import _format as fmt
from jurybox.report._case import CaseSummary, explain, own_verdict
from jurybox.report._formats import ReportFormat, register_report_format
from jurybox.report._model import RunReport

MAX_SUMMARY_BYTES = 1_000_000
"""GitHub refuses a step summary over 1 MiB; the details section is cut to stay under it."""

_ATTENTION_HEADER = (
    "### Cases that need attention\n\n| case | verdict | score | tier | reason |\n| --- | --- | ---: | --- | --- |\n"
)
_ICONS = {Status.PASS: "✅", Status.FAIL: "❌", Status.ERROR: "💥", Status.ABSTAIN: "⚠️"}
# Characters that start emphasis, code, links, images, headings, strikethrough, math or end a table cell.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]#!|~$])")


def md(text: str) -> str:
    """Untrusted text as inert inline Markdown: HTML escaped, Markdown punctuation escaped, one line."""
    one_line = " ".join(fmt.visible(text).split())
    return _MARKDOWN_SPECIAL.sub(r"\\\1", html.escape(one_line, quote=False))


def to_markdown(report: RunReport, *, max_bytes: int = MAX_SUMMARY_BYTES) -> str:
    """The run as a Markdown job summary.

    Args:
        report: The run.
        max_bytes: Size limit in UTF-8 bytes. Past it, cases are dropped from the end
            of the details section first, then from the end of the attention table,
            each time with a note saying how many; headline and totals always stay.
    """
    head = "\n".join(_head(report)) + "\n"
    opening, closing = "<details><summary>All cases</summary>\n\n", "</details>\n"
    budget = max_bytes - _size(head) - _size(opening) - _size(closing)
    attention = ""
    if report.totals.not_passed or report.totals.degraded_cases:
        budget -= _size(_ATTENTION_HEADER) + 1
        body, budget = _fit(
            _needing_attention(report), _attention_row, len(report.cases), budget, "case(s) that need attention"
        )
        attention = _ATTENTION_HEADER + body + "\n"
    details, _ = _fit(iter(report.failing_first()), _details, len(report.cases), budget, "case(s)")
    return head + attention + opening + details + closing


def _fit(
    cases: Iterator[CaseSummary], render: Callable[[CaseSummary], str], most: int, budget: int, what: str
) -> tuple[str, int]:
    """As many rendered ``cases`` as fit in ``budget`` bytes, plus a note on how many were left out.

    Cases past the cut are counted, never rendered, so a big run costs no more than a small one.
    ``most`` bounds how many there can be; the note's room is reserved with it.
    """
    kept: list[str] = []
    for index, case in enumerate(cases):
        part = render(case)
        reserve = _left_out(most - index, what)
        # Reserve room for the note, so a cut section still fits.
        if _size(part) + _size(reserve) > budget:
            note = _left_out(1 + sum(1 for _ in cases), what)
            kept.append(note)
            budget -= _size(note)
            break
        kept.append(part)
        budget -= _size(part)
    return "".join(kept), budget


def _left_out(count: int, what: str) -> str:
    return (
        f"\n*{count} more {what} left out to keep this summary under GitHub's size limit; "
        "see the JSON or HTML report.*\n\n"
    )


def _size(text: str) -> int:
    return len(text.encode())


def _head(report: RunReport) -> list[str]:
    totals = report.totals
    icon = "✅" if report.ok else "❌"
    if report.status != "completed":
        verdict = f"run {report.status}"
    elif not report.records:
        verdict = "no case ran"
    elif report.ok:
        verdict = f"all {totals.cases} case(s) passed"
    else:
        verdict = f"{totals.not_passed} of {totals.cases} case(s) did not pass"
    lines = [f"## {icon} jurybox · {md(report.suite)}: {verdict}", ""]
    meta = [
        f"run `{_code(report.run_id)}`",
        f"judge model {md(report.judge_model) if report.judge_model else '*none configured*'}",
    ]
    if report.started_at:
        meta.append(f"started {fmt.when(report.started_at)}")
    lines += [" · ".join(meta), ""]
    lines += [
        "| cases | ✅ pass | ❌ fail | 💥 error | ⚠️ abstain | pass rate | degraded "
        "| judge calls | tokens | cost | duration |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        f"| {totals.cases} | {totals.passed} | {totals.failed} | {totals.errored} | {totals.abstained} "
        f"| {fmt.rate(totals.pass_rate)} | {totals.degraded_judgments} "
        f"| {fmt.judge_calls_text(totals.judge_calls, totals.judge_cache_hits)} "
        f"| {md(fmt.tokens(totals))} | {md(fmt.cost(totals))} | {fmt.duration(totals.duration)} |",
        "",
    ]
    if totals.tiers:
        lines += [
            "| tier | pass rate | target | passed | ran | decided |",
            "| --- | ---: | ---: | ---: | ---: | ---: |",
        ]
        lines += [
            f"| {md(t.tier)} | {fmt.rate(t.rate)} | {fmt.target(t.target, t.target_met)} "
            f"| {t.passed} | {t.ran} | {t.decided} |"
            for t in totals.tiers.values()
        ]
        lines.append("")
    if report.calibrations:
        lines += ["**Calibrated judges**", "", *(f"- {md(judge.describe())}" for judge in report.calibrations), ""]
    notices = [md(text) for text in report.notices()]
    if notices:
        lines += ["> [!NOTE]", *(f"> {n}  " for n in notices), ""]
    return lines


def _needing_attention(report: RunReport) -> Iterator[CaseSummary]:
    """FAIL, ERROR, ABSTAIN, then degraded PASS cases, in that order."""
    for case in report.failing_first():
        if case.ok and not case.degraded:
            return  # failing-first order: only clean passes remain
        yield case


def _attention_row(c: CaseSummary) -> str:
    return (
        f"| {md(c.name)} | {_verdict(c)} | {fmt.score(c.score)} | {md(c.tier or '—')} "
        f"| {md(fmt.shorten(c.reason, 300))} |\n"
    )


def _details(case: CaseSummary) -> str:
    return "\n".join(_case_details(case)) + "\n"


def _case_details(case: CaseSummary) -> list[str]:
    record = case.record
    lines = [f"#### {_verdict(case)} {md(case.name)}", ""]
    facts = [
        md(fmt.case_score(record.judgment)),
        f"tier {md(case.tier or '—')}",
        f"{fmt.duration(record.duration)}",
        f"judge calls {record.judge_calls}",
        f"cost {md(fmt.case_cost(record.cost))}",
    ]
    lines += [" · ".join(facts), ""]
    if case.reason:
        lines += [f"> {md(case.reason)}", ""]
    for tier, why in case.skipped.items():
        lines.append(f"- *{md(tier)}*: {md(why)}")
    verdicts = [(p, j) for p, j in record.judgment.walk() if p]
    for path, judgment in verdicts:
        flags = " (degraded)" if judgment.degraded else ""
        lines.append(
            f"- `{_code(path)}` {_ICONS[judgment.status]} {judgment.status.value}{flags} "
            f"{md(fmt.judgment_score(judgment))}: {md(fmt.shorten(judgment.reasoning, 300))}"
        )
        lines += [f"  - check `{_code(c.name)}`: {md(c.message)}" for c in judgment.checks if not c.passed]
    if case.skipped or verdicts:
        lines.append("")
    shown = [r for r in record.rounds if own_verdict(record, r) or r.follow_ups]
    for round_ in shown:
        judgment = round_.judgment
        head = f"- round {round_.index + 1}: *{md(fmt.shorten(round_.prompt, 200))}*"
        if own_verdict(record, round_):
            head += (
                f" {_ICONS[judgment.status]} {judgment.status.value} {fmt.score(judgment.value)}: "
                f"{md(fmt.shorten(explain(judgment), 300))}"
            )
        lines.append(head)
        for question, reply in round_.follow_ups:
            lines.append(f"  - agent asked: {md(fmt.shorten(question, 200))} → replied: {md(fmt.shorten(reply, 200))}")
    if shown:
        lines.append("")
    return lines


def _verdict(case: CaseSummary) -> str:
    text = f"{_ICONS[case.status]} {case.status.value.upper()}"
    return text + " (degraded)" if case.degraded else text


def _code(text: str) -> str:
    # Inside a code span nothing is interpreted except a backtick (ends it) and a pipe (ends a table cell).
    return " ".join(fmt.visible(text).split()).replace("`", "'").replace("|", "¦")


register_report_format(
    "markdown",
    ReportFormat(".md", lambda report: (to_markdown(report),)),  # bounded by GitHub's summary size limit
    summary="a job summary for GitHub Actions ($GITHUB_STEP_SUMMARY)",
)
