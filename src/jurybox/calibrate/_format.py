"""Numbers and labels as every renderer shows them, so the console, Markdown and HTML agree."""

from __future__ import annotations

from jurybox.calibrate._result import CalibrationResult, Figure, JudgeCalibration

NAMES = {
    "accuracy": "accuracy",
    "coverage": "decided share",
    "tpr": "TPR (pass found)",
    "tnr": "TNR (fail found)",
    "precision": "precision",
    "recall": "recall",
    "f1": "F1",
    "kappa": "Cohen's kappa",
    "alpha": "Krippendorff's alpha",
    "pearson": "Pearson r",
    "spearman": "Spearman rho",
    "kendall": "Kendall tau-b",
    "accuracy_ab": "accuracy, A first",
    "accuracy_ba": "accuracy, B first",
    "accuracy_mean": "accuracy, mean of orders",
    "positional_agreement": "same winner both orders",
    "kappa_ab": "kappa, A first",
    "kappa_ba": "kappa, B first",
}
"""Readable names; ``accuracy`` of a pairwise judge means both orders right."""
COUNTS = ("n", "decided", "abstain", "error", "unlabelled", "both_undecided", "inconsistent")


def number(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def figure_text(figure: Figure | None, *, interval: bool = True) -> str:
    """``0.82 [0.78, 0.86]``, ``0.82`` without an interval, ``-`` when undefined."""
    if figure is None or figure.value is None:
        return "-"
    if not interval or figure.low is None or figure.high is None:
        return number(figure.value)
    return f"{number(figure.value)} [{number(figure.low)}, {number(figure.high)}]"


def figure_names(result: CalibrationResult) -> list[str]:
    """Every figure any judge has, in report order."""
    names: list[str] = []
    for judge in result.judges:
        for name in judge.overall.figures:
            if name not in names:
                names.append(name)
    return names


def count_names(result: CalibrationResult) -> list[str]:
    present = {name for judge in result.judges for name in judge.overall.counts}
    return [
        name
        for name in COUNTS
        if name in present and (name != "unlabelled" or any(j.overall.counts.get(name) for j in result.judges))
    ]


def usage_rows(judge: JudgeCalibration) -> dict[str, str]:
    usage = judge.usage
    return {
        "tokens": "unknown" if usage.tokens is None else f"{usage.tokens:,}",
        "cost (USD)": "unknown" if usage.cost is None else f"{usage.cost:.4f}",
        "latency / row (s)": "unknown" if usage.latency_mean is None else f"{usage.latency_mean:.2f}",
    }


def human_text(value: str | float | None) -> str:
    if value is None:
        return "(no consensus)"
    return f"{value:g}" if isinstance(value, float) else str(value)


def shorten(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def headline(result: CalibrationResult) -> str:
    raters = f", {len(result.raters)} raters" if result.raters else ""
    level = f"{result.confidence:.0%}"
    return (
        f"{result.dataset}: {result.rows} {result.kind} rows{raters}; "
        f"{level} bootstrap intervals from {result.resamples} resamples (seed {result.seed})"
    )
