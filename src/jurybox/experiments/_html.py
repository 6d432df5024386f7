"""The experiment as one HTML page: the matrix, the comparisons, and per case the variants side by side.

Each case shows every variant's status, reply and reasoning next to each other.
Cases the variants agree on are hidden until "show every case" is ticked (CSS
only: the page works offline, with no script). Every text from an agent or a
judge is escaped: a reply is data, never markup.
"""

from __future__ import annotations

from html import escape

from jurybox.experiments._outcomes import CaseOutcome
from jurybox.experiments._text import findings, heading, interval, matrix_rows, status_cell
from jurybox.experiments._view import ExperimentView

_STYLE = """
body{font-family:system-ui,sans-serif;margin:2rem;color:#222}
table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #ccc;padding:.3rem .6rem;vertical-align:top}
th{background:#f4f4f4;text-align:left}.pass{color:#1a7f37}.fail{color:#cf222e}.error,.abstain{color:#9a6700}
pre{white-space:pre-wrap;max-width:40rem;margin:0;font-size:.85rem}
#all:not(:checked)~table tr.agree{display:none}
"""


def html_page(view: ExperimentView) -> str:
    """The experiment as one page: matrix, comparisons, and each case's variants side by side (escaped)."""
    names = [c.name for c in view.columns]
    head = "".join(f"<th>{escape(n)}</th>" for n in names)
    matrix = "".join(
        f"<tr><th>{escape(label)}</th>" + "".join(f"<td>{escape(c)}</td>" for c in cells) + "</tr>"
        for label, cells in matrix_rows(view, view.columns)
    )
    found = "".join(f"<li>{escape(line)}</li>" for line in findings(view)) or "<li>one variant: nothing to compare</li>"
    disagree = set(view.disagreements())
    rows = "".join(_case_row(view, case, case in disagree) for case in view.cases)
    missing = f"<p>Not run yet: {escape(', '.join(view.missing))}</p>" if view.missing else ""
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{escape(heading(view))}</title>"
        f"<style>{_STYLE}</style></head><body><h1>{escape(heading(view))}</h1>{missing}"
        f"<table><tr><th></th>{head}</tr>{matrix}</table>"
        f"<h2>Against {escape(names[0] if names else '-')}</h2><ul>{found}</ul>"
        f"<h2>Cases ({len(disagree)} of {len(view.cases)} disagree)</h2>"
        "<input type='checkbox' id='all'><label for='all'> show every case</label>"
        f"<table><tr><th>case</th>{head}</tr>{rows}</table></body></html>"
    )


def _case_row(view: ExperimentView, case: str, disagrees: bool) -> str:
    cells = "".join(_case_cell(c.cases.get(case)) for c in view.columns)
    kind = "disagree" if disagrees or len(view.columns) < 2 else "agree"
    return f"<tr class='{kind}'><th>{escape(case)}</th>{cells}</tr>"


def _case_cell(outcome: CaseOutcome | None) -> str:
    if outcome is None:
        return "<td>(missing)</td>"
    trials = f" {escape(interval(*outcome.interval))}" if outcome.rule is not None else ""
    return (
        f"<td><b class='{outcome.status.value}'>{escape(status_cell(outcome))}</b>{trials}"
        f"<pre>{escape(outcome.reply)}</pre><small>{escape(outcome.reasoning)}</small></td>"
    )
