"""The Markdown report: the same tables as the console, for a pull request or a wiki page."""

from __future__ import annotations

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
from jurybox.calibrate._result import CalibrationResult

DISAGREEMENTS_SHOWN = 10


def _cell(text: str) -> str:
    """Table-safe text: pipes escaped, line breaks flattened, HTML-looking text neutralised."""
    return " ".join(text.split()).replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(_cell(h) for h in header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return [*lines, ""]


def to_markdown(result: CalibrationResult, *, disagreements: int = DISAGREEMENTS_SHOWN) -> str:
    """The calibration as Markdown."""
    names = [j.name for j in result.judges]
    lines = ["# Judge calibration", "", _cell(headline(result)), ""]
    if "alpha" in result.humans:
        lines += [
            f"People among themselves: Krippendorff's alpha {figure_text(result.humans['alpha'])} (the ceiling).",
            "",
        ]
    rows = [[NAMES.get(n, n), *(figure_text(j.figure(n)) for j in result.judges)] for n in figure_names(result)]
    rows += [[n, *(str(j.overall.counts.get(n, "-")) for j in result.judges)] for n in count_names(result)]
    usage = [usage_rows(j) for j in result.judges]
    rows += [[n, *(u[n] for u in usage)] for n in usage[0]]
    lines += _table(["figure", *names], rows)
    for judge in result.judges:
        lines += [
            f"## {_cell(judge.name)}",
            "",
            f"Identity key `{judge.identity.key}` (model: {_cell(str(judge.identity.model))}).",
            "",
        ]
        confusion = judge.overall.confusion
        if confusion is not None:
            lines += ["People (rows) against the judge (columns):", ""]
            lines += _table(
                ["", *confusion.columns],
                [[r, *map(str, c)] for r, c in zip(confusion.rows, confusion.counts, strict=True)],
            )
        for field, values in judge.slices.items():
            shown = [n for n in ("accuracy", "kappa", "tnr", "spearman") if n in judge.overall.figures][:2]
            lines += [f"By {_cell(field)}:", ""]
            lines += _table(
                [field, "n", *(NAMES.get(n, n) for n in shown)],
                [[v, str(f.counts["n"]), *(figure_text(f.figures.get(n)) for n in shown)] for v, f in values.items()],
            )
        if judge.disagreement_count and disagreements:
            lines += [f"{judge.disagreement_count} disagreement(s), most confident first:", ""]
            lines += _table(
                ["id", "people", "judge", "confidence", "judge's reasoning"],
                [
                    [
                        d.id,
                        human_text(d.human),
                        d.judge,
                        "-" if d.confidence is None else f"{d.confidence:.2f}",
                        shorten(d.reasoning, 300),
                    ]
                    for d in judge.disagreements[:disagreements]
                ],
            )
    return "\n".join(lines).rstrip() + "\n"
