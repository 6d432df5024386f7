"""The HTML report: one self-contained page, no script, every value escaped.

Each judge gets a confusion-matrix picture and a score-distribution plot as
inline SVG. Everything that came from a file (ids, labels, reasoning, judge
names) goes through ``html.escape``, attributes included.
"""

from __future__ import annotations

from html import escape

from jurybox.calibrate._format import (
    NAMES,
    count_names,
    figure_names,
    figure_text,
    headline,
    human_text,
    shorten,
    usage_rows,
)
from jurybox.calibrate._result import CalibrationResult, Confusion, Distribution

DISAGREEMENTS_SHOWN = 20
_COLOURS = ("#2b7a3d", "#b3261e", "#1f5fa8", "#8a5a00", "#6b3fa0", "#00707a")
_STYLE = """
body{font-family:system-ui,sans-serif;margin:2rem;color:#1d1d1f;max-width:72rem}
table{border-collapse:collapse;margin:.5rem 0 1.5rem}
th,td{border:1px solid #d0d0d5;padding:.3rem .6rem;text-align:right;vertical-align:top}
th:first-child,td:first-child{text-align:left}
td.text{text-align:left;max-width:40rem}
.muted{color:#666}
figure{display:inline-block;margin:0 2rem 1rem 0}
"""


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _table(header: list[str], rows: list[list[str]], text_columns: tuple[int, ...] = ()) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="text">{_e(c)}</td>' if i in text_columns else f"<td>{_e(c)}</td>" for i, c in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _svg(width: float, height: float, label: str) -> str:
    return f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" aria-label="{label}">'


def _text(x: float, y: float, text: object, size: int = 11, anchor: str = "start", fill: str = "#1d1d1f") -> str:
    """An SVG text element; the text is escaped."""
    place = f'x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" fill="{fill}"'
    return f"<text {place}>{_e(text)}</text>"


def _rect(x: float, y: float, width: float, height: float, fill: str, title: str = "") -> str:
    tip = f"<title>{_e(title)}</title>" if title else ""
    return f'<rect x="{x:.1f}" y="{y:.1f}" width="{width:.1f}" height="{height:.1f}" fill="{fill}">{tip}</rect>'


def confusion_svg(confusion: Confusion) -> str:
    """The confusion matrix as a heat map: darker cells hold more rows."""
    cell, left, top = 56, 110, 70
    width = left + cell * len(confusion.columns) + 10
    height = top + cell * len(confusion.rows) + 10
    biggest = max((c for row in confusion.counts for c in row), default=0) or 1
    parts = [_svg(width, height, "confusion matrix"), _text(left, 14, "judge", 12), _text(4, top - 8, "people", 12)]
    for j, column in enumerate(confusion.columns):
        parts.append(_text(left + j * cell + cell / 2, top - 10, shorten(column, 9), anchor="middle"))
    for i, (row, counts) in enumerate(zip(confusion.rows, confusion.counts, strict=True)):
        y = top + i * cell
        parts.append(_text(left - 6, y + cell / 2 + 4, shorten(row, 14), anchor="end"))
        for j, count in enumerate(counts):
            shade = count / biggest
            x = left + j * cell
            parts.append(
                _rect(
                    x,
                    y,
                    cell - 2,
                    cell - 2,
                    f"rgba(31,95,168,{0.08 + 0.85 * shade:.3f})",
                    f"{row} / {confusion.columns[j]}",
                )
            )
            ink = "#fff" if shade > 0.55 else "#1d1d1f"
            parts.append(_text(x + cell / 2 - 1, y + cell / 2 + 4, count, 13, "middle", ink))
    parts.append("</svg>")
    return "".join(parts)


def distribution_svg(distribution: Distribution) -> str:
    """The judge's numbers as a histogram per human label (bars side by side within each bin)."""
    width, height, left, bottom, top = 420, 200, 36, 30, 24
    bins = len(distribution.edges) - 1
    groups = list(distribution.counts)
    biggest = max((c for counts in distribution.counts.values() for c in counts), default=0) or 1
    slot = (width - left - 10) / max(bins, 1)
    bar = max(slot / max(len(groups), 1) - 1, 1)
    plot = height - bottom - top
    parts = [_svg(width, height, "score distribution")]
    for g, group in enumerate(groups):
        colour = _COLOURS[g % len(_COLOURS)]
        parts.append(_rect(left + g * 90, 4, 10, 10, colour))
        parts.append(_text(left + g * 90 + 14, 13, f"people: {shorten(group, 10)}"))
        for b, count in enumerate(distribution.counts[group]):
            h = plot * count / biggest
            parts.append(_rect(left + b * slot + g * bar, top + plot - h, bar, h, colour, f"{group}: {count}"))
    base = top + plot
    parts.append(f'<line x1="{left}" y1="{base}" x2="{width - 10}" y2="{base}" stroke="#888"/>')
    for b in (0, bins):
        parts.append(_text(left + b * slot, base + 16, f"{distribution.edges[b]:g}", anchor="middle"))
    parts.append(_text(left - 4, top + 8, biggest, anchor="end"))
    parts.append("</svg>")
    return "".join(parts)


def to_html(result: CalibrationResult, *, disagreements: int = DISAGREEMENTS_SHOWN) -> str:
    """The calibration as one self-contained HTML page."""
    names = [j.name for j in result.judges]
    rows = [[NAMES.get(n, n), *(figure_text(j.figure(n)) for j in result.judges)] for n in figure_names(result)]
    rows += [[n, *(str(j.overall.counts.get(n, "-")) for j in result.judges)] for n in count_names(result)]
    usage = [usage_rows(j) for j in result.judges]
    rows += [[n, *(u[n] for u in usage)] for n in usage[0]]
    body = [f"<h1>Judge calibration</h1><p>{_e(headline(result))}</p>"]
    if "alpha" in result.humans:
        ceiling = _e(figure_text(result.humans["alpha"]))
        body.append(f"<p>People among themselves: Krippendorff's alpha {ceiling} (the ceiling).</p>")
    body.append(_table(["figure", *names], rows))
    for judge in result.judges:
        body.append(f"<h2>{_e(judge.name)}</h2>")
        who = judge.identity
        body.append(f'<p class="muted">identity {_e(who.key)}; model {_e(who.model)}; kind {_e(who.kind)}</p>')
        if judge.overall.confusion is not None:
            caption = "<figcaption>people (rows) x judge (columns)</figcaption>"
            body.append(f"<figure>{confusion_svg(judge.overall.confusion)}{caption}</figure>")
        if judge.distribution is not None:
            caption = "<figcaption>the judge's numbers by human label</figcaption>"
            body.append(f"<figure>{distribution_svg(judge.distribution)}{caption}</figure>")
        for field, values in judge.slices.items():
            shown = [n for n in ("accuracy", "kappa", "tnr", "spearman") if n in judge.overall.figures][:2]
            body.append(f"<h3>By {_e(field)}</h3>")
            body.append(
                _table(
                    [field, "n", *(NAMES.get(n, n) for n in shown)],
                    [
                        [v, str(f.counts["n"]), *(figure_text(f.figures.get(n)) for n in shown)]
                        for v, f in values.items()
                    ],
                )
            )
        if judge.disagreement_count and disagreements:
            body.append(f"<h3>{judge.disagreement_count} disagreement(s), most confident first</h3>")
            body.append(
                _table(
                    ["id", "people", "judge", "confidence", "judge's reasoning", "output"],
                    [
                        [
                            d.id,
                            human_text(d.human),
                            d.judge,
                            "-" if d.confidence is None else f"{d.confidence:.2f}",
                            shorten(d.reasoning, 600),
                            shorten(d.output, 300),
                        ]
                        for d in judge.disagreements[:disagreements]
                    ],
                    text_columns=(4, 5),
                )
            )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        f"<title>Judge calibration: {_e(result.dataset)}</title><style>{_STYLE}</style></head><body>"
        + "".join(body)
        + "</body></html>\n"
    )
