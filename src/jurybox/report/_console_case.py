"""One case on the console: the compact block of a case that did not pass, and the row of one that did.

Everything shown here comes from the agent, the judges or the suite file, so it
is hostile: it is drawn as ``Text`` (never parsed as rich markup) and passed
through ``terminal_safe`` first, so a reply cannot move the cursor, clear the
screen or retitle the window of the person reading the report.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from jurybox.core import REPLY_SHOWN, Context, Judgment, RoundRecord, Status, undecided_reply
from jurybox.report import _format as fmt
from jurybox.report._case import CaseSummary, explain, own_verdict

STATUS_STYLES = {
    Status.PASS: "bold green",
    Status.FAIL: "bold red",
    Status.ERROR: "bold white on red",
    Status.ABSTAIN: "bold black on yellow",
}
"""ERROR and ABSTAIN are drawn as blocks so they never read as an ordinary FAIL (or PASS)."""

DEGRADED_STYLE = "yellow"
SKIPPED_STYLE = "dim cyan"
REPLY_LINES = 6
"""Lines of the agent's reply a failing case shows; the reports have the rest."""
REPLY_CHARS = 400
REASON_CHARS = 600
"""Reasoning beyond its first line is cut here; the first line is always shown whole (up to FIRST_LINE_CHARS)."""
FIRST_LINE_CHARS = 2000
INDENT = 4

# ESC-introduced sequences: CSI (colours, cursor moves, screen clears), OSC (window titles, links), and
# the two-byte ones. Dropped: they are terminal commands, not text. Other control characters are shown
# as escapes by fmt.visible.
_SEQUENCE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])|\x9b[0-?]*[ -/]*[@-~]")


def terminal_safe(text: str) -> str:
    """``text`` that cannot drive a terminal: escape sequences dropped, a lone CR and other controls shown."""
    text = _SEQUENCE.sub("", text).replace("\r\n", "\n").replace("\r", "\\r")
    return fmt.visible(text)


def bounded(text: str, *, lines: int, chars: int, first_line_whole: bool = False) -> tuple[str, int]:
    """At most ``lines`` lines and ``chars`` characters of ``text``, and how many characters were left out.

    With ``first_line_whole`` the first line is kept entire (up to FIRST_LINE_CHARS) even past ``chars``:
    it is the line a person acts on.
    """
    text = terminal_safe(text).strip()
    kept = text.split("\n")[:lines]
    shown = "\n".join(line.rstrip() for line in kept)
    limit = max(chars, min(len(kept[0]), FIRST_LINE_CHARS)) if first_line_whole else chars
    if len(shown) > limit:
        shown = shown[:limit].rstrip()
    left = len(text) - len(shown)
    return shown, max(left, 0)


def verdict_text(case: CaseSummary) -> Text:
    """The verdict cell: the status, plus a visible flag when a fallback policy produced it."""
    text = Text(f" {case.status.value.upper()} ", style=STATUS_STYLES[case.status])
    if case.degraded:
        text.append(" degraded", style=f"bold {DEGRADED_STYLE}")
    return text


def case_header(case: CaseSummary) -> Text:
    """``STATUS name · score · decided by tier · #tags``: the name and status are words, never split."""
    record = case.record
    line = verdict_text(case)
    line.append(" ")
    line.append(terminal_safe(record.case), style="bold")
    details = [terminal_safe(fmt.case_score(record.judgment))]
    if case.tier:
        details.append(f"decided by {terminal_safe(case.tier)}")
    details.extend(f"{_skip_label(why)}: {terminal_safe(tier)}" for tier, why in case.skipped.items())
    if record.tags:
        details.append(" ".join(f"#{terminal_safe(tag)}" for tag in record.tags))
    line.append(" · " + " · ".join(details), style="dim")
    return line


def _skip_label(why: str) -> str:
    return "not needed" if why.startswith("not needed") else "skipped"


def failure_block(case: CaseSummary) -> RenderableType:
    """A case that did not pass: why (whole first line), what the agent said, the tools it called vs expected."""
    record = case.record
    lines: list[Text] = [_labelled("why", case.reason, REASON_CHARS, style="red", first_line_whole=True)]
    replied = undecided_reply(record.judgment)
    if replied is not None:  # an undecided judge's own words: why it could not decide is often plain in them
        lines.append(_labelled("judge replied", replied, REPLY_SHOWN + 1, lines=REPLY_LINES))
    for label, context, judgment in _failing_parts(case):
        if label:
            heading = Text(f"{label}: ", style="bold")
            heading.append(f" {judgment.status.value.upper()} ", style=STATUS_STYLES[judgment.status])
            heading.append(" " + terminal_safe(fmt.shorten(explain(judgment), FIRST_LINE_CHARS)))
            lines.append(heading)
        if context is not None:
            lines.append(_labelled("reply", context.output or "(no reply)", REPLY_CHARS, lines=REPLY_LINES))
            tools = _tools_line(context, judgment)
            if tools is not None:
                lines.append(tools)
    for round_ in record.rounds:
        for question, reply in round_.follow_ups:
            lines.append(_follow_up(round_, question, reply))
    if record.lessons:  # stored lessons the agent and opted-in judges were handed (`jurybox lessons list`)
        lines.append(Text("lessons seen: " + ", ".join(f"#{lesson}" for lesson in record.lessons), style="dim"))
    return Group(case_header(case), Padding(Group(*lines), (0, 0, 0, INDENT), expand=False))


def _failing_parts(case: CaseSummary) -> Iterator[tuple[str, Context | None, Judgment]]:
    """(label, context, verdict) to show: each round that failed on its own, else the whole case."""
    record = case.record
    failed_rounds = [r for r in record.rounds if own_verdict(record, r) and r.judgment.status is not Status.PASS]
    if failed_rounds:
        for round_ in failed_rounds:
            prompt = fmt.shorten(terminal_safe(round_.prompt), 60)
            yield f"round {round_.index + 1} ({prompt})", round_.context, round_.judgment
        return
    context = record.context if record.context is not None else (record.rounds[-1].context if record.rounds else None)
    yield "", context, record.judgment


def _labelled(
    label: str, text: str, chars: int, *, lines: int = 40, style: str = "", first_line_whole: bool = False
) -> Text:
    shown, left = bounded(text, lines=lines, chars=chars, first_line_whole=first_line_whole)
    line = Text(f"{label}: ", style="dim")
    line.append(shown, style=style)
    if left:
        line.append(f" … ({left} more characters, see the HTML or JSON report)", style="dim")
    return line


def _tools_line(context: Context, judgment: Judgment) -> Text | None:
    """``tools: made a(x=1), b · expected a, c`` (expected only when a tool-call judge says so)."""
    expected = _expected_tools(judgment)
    if not context.tool_calls and expected is None:
        return None
    made = ", ".join(_call(call.name, dict(call.arguments)) for call in context.tool_calls) or "no calls"
    line = Text("tools: ", style="dim")
    line.append(f"made {terminal_safe(made)}")
    if expected is not None:
        line.append(" · expected " + (terminal_safe(", ".join(expected)) or "no calls"))
    return line


def _call(name: str, arguments: dict[str, object]) -> str:
    args = ", ".join(f"{key}={value!r}" for key, value in arguments.items())
    return fmt.shorten(f"{name}({args})", 120)


def _expected_tools(judgment: Judgment) -> list[str] | None:
    """The calls the tool-call judges expected (their ``expected #N name`` checks); None without such a judge."""
    found: list[str] | None = None
    for _, leaf in judgment.walk():
        for check in leaf.checks:
            if check.name.startswith("expected #"):
                found = found if found is not None else []
                name = check.name.split(" ", 2)[-1]
                found.append(name if check.passed else f"{name} ({check.message})")
    return found


def _follow_up(round_: RoundRecord, question: str, reply: str) -> Text:
    line = Text(f"round {round_.index + 1} asked: ", style="dim italic")
    line.append(fmt.shorten(terminal_safe(question), 200), style="italic")
    line.append(" · replied: ", style="dim italic")
    line.append(fmt.shorten(terminal_safe(reply), 200), style="italic")
    return line


def case_table(cases: list[CaseSummary]) -> Table:
    """The wide layout of passing cases: the name and verdict whole, the reasoning folds into the room left."""
    table = Table(expand=False, show_edge=False, pad_edge=False, box=None, show_header=True)
    table.add_column("case", no_wrap=True, style="bold")
    table.add_column("verdict", no_wrap=True)
    table.add_column("score", justify="right", no_wrap=True)
    table.add_column("tier", no_wrap=True)
    table.add_column("reasoning", overflow="fold", ratio=1, min_width=20)
    for case in cases:
        record = case.record
        table.add_row(
            terminal_safe(record.case),
            verdict_text(case),
            fmt.score(case.score),
            _tier_cell(case),
            _reason(case.reason),
        )
        for round_ in record.rounds:
            if own_verdict(record, round_):
                judgment = round_.judgment
                verdict = Text(f" {judgment.status.value.upper()} ", style=STATUS_STYLES[judgment.status])
                prompt = fmt.shorten(terminal_safe(round_.prompt), 60)
                table.add_row(
                    Text(f"  round {round_.index + 1}", style="dim"),
                    verdict,
                    fmt.score(judgment.value),
                    Text(terminal_safe(judgment.decided_by or "—"), style="dim"),
                    Text(f"({prompt}) ", style="dim italic") + _reason(explain(judgment)),
                )
            for question, reply in round_.follow_ups:
                table.add_row("", "", "", "", _follow_up(round_, question, reply))
    return table


def _tier_cell(case: CaseSummary) -> Text:
    tier = Text(terminal_safe(case.tier or "—"))
    for skipped, why in case.skipped.items():
        tier.append(f"\n{_skip_label(why)}: {terminal_safe(skipped)}", style=SKIPPED_STYLE)
    return tier


def case_line(case: CaseSummary) -> RenderableType:
    """The narrow layout of a passing case: its header line, the reasoning indented under it."""
    record = case.record
    lines: list[RenderableType] = [_reason(case.reason)]
    for round_ in record.rounds:
        if own_verdict(record, round_):
            prompt = fmt.shorten(terminal_safe(round_.prompt), 60)
            line = Text(f"round {round_.index + 1} ({prompt}): ", style="dim")
            line.append(f" {round_.judgment.status.value.upper()} ", style=STATUS_STYLES[round_.judgment.status])
            line.append(" ")
            lines.append(line + _reason(explain(round_.judgment)))
        for question, reply in round_.follow_ups:
            lines.append(_follow_up(round_, question, reply))
    return Group(case_header(case), Padding(Group(*lines), (0, 0, 0, INDENT), expand=False))


def _reason(text: str) -> Text:
    return Text(terminal_safe(text))
