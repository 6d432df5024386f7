"""The experiment as text: the console's 80-column matrix, and Markdown for a pull-request comment.

Both say the same things in the same order: each variant's pass rate with its
interval, counts (ERROR and ABSTAIN apart), cost and latency; the cases where
the variants disagree, with each variant's status; then each variant against
the baseline in plain words, with the number of pairs each finding rests on.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence

from jurybox.core import Status
from jurybox.experiments._outcomes import CaseOutcome
from jurybox.experiments._view import ExperimentView, VariantColumn
from jurybox.stats import p_text

WIDTH = 80
LABEL = 18
CELL = 15
PER_BLOCK = (WIDTH - LABEL) // CELL
"""Variants side by side in one block of the console matrix (4 at 80 columns)."""
DEFAULT_CASE_ROWS = 30
"""Disagreeing cases the console lists at most (the JSON, Markdown and HTML have them all)."""


def percent(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def interval(low: float, high: float) -> str:
    return f"[{low * 100:.1f}, {high * 100:.1f}]"


def money(value: float | None) -> str:
    """A cost; "unknown" when no case reported one (never shown as zero)."""
    return "unknown" if value is None else f"${value:.4f}"


def seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f} s"


def status_cell(outcome: CaseOutcome | None) -> str:
    """A case's status in a cell; with trials, how many of them passed."""
    if outcome is None:
        return "(missing)"
    word = outcome.status.value.upper()
    return f"{word} {outcome.passed}/{outcome.count}" if outcome.rule is not None else word


def matrix_rows(
    view: ExperimentView, columns: Sequence[VariantColumn], *, runs: bool = True
) -> list[tuple[str, list[str]]]:
    """The matrix: one row per figure, one cell per variant (the run ids last, unless ``runs`` is False)."""
    rows = [
        ("pass rate", [percent(c.pass_rate) for c in columns]),
        ("95% interval", [interval(*c.interval) for c in columns]),
        ("passed / decided", [f"{c.count(Status.PASS)} / {c.decided}" for c in columns]),
        ("error / abstain", [f"{c.count(Status.ERROR)} / {c.count(Status.ABSTAIN)}" for c in columns]),
        ("cost", [money(c.cost) for c in columns]),
        ("latency (median)", [seconds(c.latency) for c in columns]),
    ]
    if any(c.status != "completed" for c in view.columns):  # an unfinished variant's figures are partial
        rows.insert(0, ("run status", [c.status for c in columns]))
    return [*rows, ("run", [c.run_id for c in columns])] if runs else rows


def heading(view: ExperimentView) -> str:
    cases = len(view.cases)
    base = view.columns[0].name if view.columns else "-"
    return f"Experiment {view.id} of suite {view.suite}: {len(view.columns)} variants, {cases} cases, baseline {base}"


def findings(view: ExperimentView) -> list[str]:
    """Each comparison in plain words, then how many pairs were left out as undecided."""
    lines = []
    for comparison in view.comparisons:
        lines.append(f"{comparison.paired.b}: {comparison.describe()}")
        paired = comparison.paired
        apart = [f"{len(paired.undecided)} left out (ERROR or ABSTAIN)"] if paired.undecided else []
        apart += [f"{len(paired.added)} only in {paired.b}"] if paired.added else []
        apart += [f"{len(paired.removed)} only in {paired.a}"] if paired.removed else []
        if apart:
            lines.append(f"{paired.b}: pairs not compared: {', '.join(apart)}")
        rates = paired.mean("trials")
        if rates is not None and rates.interval is not None and rates.p_value is not None:
            lines.append(
                f"{paired.b}: per-case pass probability {rates.difference * 100:+.1f} points "
                f"[{rates.interval.low * 100:+.1f}, {rates.interval.high * 100:+.1f}], p {p_text(rates.p_value)} "
                f"(Wilcoxon signed-rank over {rates.pairs} cases' trials)"
            )
    return lines


def probability(outcome: CaseOutcome | None) -> str:
    """A repeated case's pass probability and its Wilson interval, in 14 characters or fewer."""
    if outcome is None or outcome.rule is None:
        return status_cell(outcome)
    if outcome.pass_probability is None:
        return "undecided"
    low, high = outcome.interval
    return f"{outcome.pass_probability * 100:.0f}% [{low * 100:.0f}-{high * 100:.0f}]"


def console_text(view: ExperimentView, *, rows: int | None = DEFAULT_CASE_ROWS) -> str:
    """The experiment in at most 80 columns."""
    out = [*textwrap.wrap(heading(view), WIDTH), ""]
    if view.missing:
        out += [f"not run yet: {', '.join(view.missing)} (finish with --resume {view.id})", ""]
    for start in range(0, len(view.columns), PER_BLOCK):
        block = view.columns[start : start + PER_BLOCK]
        out.append(_line("", [_fit(c.name, CELL - 1) for c in block]))
        out += [_line(label, cells) for label, cells in matrix_rows(view, block, runs=False)]
        out.append("")
    runs = ", ".join(f"{c.name} {c.run_id}" for c in view.columns)
    out += [*textwrap.wrap(f"runs: {runs}", WIDTH, subsequent_indent="  "), ""]
    out += _disagreement_lines(view, rows)
    out += _probability_lines(view, rows)
    if view.comparisons:
        out.append(f"Against {view.columns[0].name}, case by case:")
        for line in findings(view):
            out += textwrap.wrap(line, WIDTH - 2, initial_indent="  ", subsequent_indent="    ")
    return "\n".join(out).rstrip() + "\n"


def _disagreement_lines(view: ExperimentView, rows: int | None) -> list[str]:
    cases = view.disagreements()
    if len(view.columns) < 2:
        cases = [c for c in view.cases if view.columns[0].cases[c].rule is not None]
        title = f"Cases ({len(cases)}), pass probability of their trials:"
    else:
        title = f"Cases where the variants disagree ({len(cases)} of {len(view.cases)}):"
    if not cases:
        return ["The variants agree on every case.", ""] if len(view.columns) > 1 else []
    shown = cases if rows is None else cases[:rows]
    out = [title]
    for start in range(0, len(view.columns), PER_BLOCK):
        block = view.columns[start : start + PER_BLOCK]
        out.append(_line("case", [_fit(c.name, CELL - 1) for c in block]))
        for case in shown:
            out.append(_line(_fit(case, LABEL - 1), [_cell(c.cases.get(case)) for c in block]))
    if len(shown) < len(cases):
        out.append(f"... and {len(cases) - len(shown)} more (--rows 0 shows all)")
    return [*out, ""]


def _probability_lines(view: ExperimentView, rows: int | None) -> list[str]:
    """With trials: each case's pass probability with its Wilson interval, disagreeing cases first."""
    if not view.has_trials:
        return []
    disagree = view.disagreements()
    cases = disagree + [c for c in view.cases if c not in set(disagree)]
    shown = cases if rows is None else cases[:rows]
    out = ["Pass probability of each case's trials (Wilson 95% interval):"]
    for start in range(0, len(view.columns), PER_BLOCK):
        block = view.columns[start : start + PER_BLOCK]
        out.append(_line("case", [_fit(c.name, CELL - 1) for c in block]))
        out += [_line(_fit(case, LABEL - 1), [probability(c.cases.get(case)) for c in block]) for case in shown]
    if len(shown) < len(cases):
        out.append(f"... and {len(cases) - len(shown)} more (--rows 0 shows all)")
    return [*out, ""]


def _cell(outcome: CaseOutcome | None) -> str:
    text = status_cell(outcome)
    return _fit(text, CELL - 1)


def _line(label: str, cells: Sequence[str]) -> str:
    return (label.ljust(LABEL) + "".join(cell.ljust(CELL) for cell in cells)).rstrip()


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def markdown_text(view: ExperimentView) -> str:
    """The experiment as Markdown, for a pull-request comment: the same figures as the console."""
    esc: Callable[[str], str] = lambda text: text.replace("|", "\\|")  # noqa: E731
    names = [esc(c.name) for c in view.columns]
    out = [f"### {esc(heading(view))}", ""]
    if view.missing:
        out += [f"Not run yet: {', '.join(view.missing)}.", ""]
    out += ["| | " + " | ".join(f"**{n}**" for n in names) + " |", "|---|" + "---|" * len(names)]
    for label, cells in matrix_rows(view, view.columns):
        out.append(f"| {label} | " + " | ".join(esc(c) for c in cells) + " |")
    out.append("")
    if view.comparisons:
        out.append(f"**Against {esc(view.columns[0].name)}**, case by case:")
        out.append("")
        out += [f"- {esc(line)}" for line in findings(view)]
        out.append("")
    cases = view.disagreements() if len(view.columns) > 1 else view.cases
    if cases:
        title = "Cases where the variants disagree" if len(view.columns) > 1 else "Cases"
        out += [f"<details><summary>{title} ({len(cases)} of {len(view.cases)})</summary>", ""]
        out += ["| case | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
        for case in cases:
            cells = [_md_cell(c.cases.get(case)) for c in view.columns]
            out.append(f"| {esc(case)} | " + " | ".join(cells) + " |")
        out += ["", "</details>", ""]
    return "\n".join(out)


def _md_cell(outcome: CaseOutcome | None) -> str:
    text = status_cell(outcome)
    if outcome is not None and outcome.rule is not None:
        text += " " + interval(*outcome.interval)
    return text
