"""One judge's figures on a set of rows: counts, the confusion matrix, and every figure with its interval."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from jurybox.calibrate import _metrics as m
from jurybox.calibrate._bootstrap import Bootstrap, resampled_rows
from jurybox.calibrate._labels import LabelledRow
from jurybox.calibrate._metrics import Floats
from jurybox.calibrate._result import Confusion, Figure, Figures
from jurybox.calibrate._verdicts import ABSTAIN, ERROR, SCORED, UNDECIDED, RowVerdict

PAIR_OUTCOMES = ("a", "b", "tie", ABSTAIN, ERROR)
"""Columns of a pairwise order: the winner, or why there is none."""

FIGURES_BY_KIND: dict[str, tuple[str, ...]] = {
    "binary": ("accuracy", "coverage", "tpr", "tnr", "precision", "recall", "f1", "kappa", "alpha"),
    "category": ("accuracy", "coverage", "kappa", "alpha"),
    "numeric": ("coverage", "pearson", "spearman", "kendall"),
    "preference": (
        "accuracy", "accuracy_ab", "accuracy_ba", "accuracy_mean", "positional_agreement", "coverage",
        "kappa_ab", "kappa_ba", "alpha",
    ),
}  # fmt: skip
"""The figures each label kind has, in report order (``--fail-under`` accepts these names)."""


def figures(
    kind: str,
    classes: Sequence[str],
    rows: Sequence[LabelledRow],
    verdicts: Sequence[RowVerdict],
    bootstrap: Bootstrap,
    key: str,
) -> Figures:
    """Counts, confusion matrix and figures (each with its bootstrap interval) of one judge on ``rows``."""
    labelled = [(row, verdict) for row, verdict in zip(rows, verdicts, strict=True) if row.label is not None]
    counts = {
        "n": len(rows),
        "unlabelled": len(rows) - len(labelled),
        "decided": sum(1 for v in verdicts if v.outcome not in UNDECIDED),
        "abstain": sum(1 for v in verdicts if v.outcome == ABSTAIN),
        "error": sum(1 for v in verdicts if v.outcome == ERROR),
    }
    out: dict[str, Figure] = {}
    confusion: Confusion | None = None
    if kind == "numeric":
        out.update(_correlations(labelled, bootstrap, key))
    elif kind == "preference":
        table = _pair_table(labelled)
        out.update(_from_table(table, bootstrap, key, _pair_figures))
        counts.update(_pair_counts(verdicts))
        out["coverage"] = _share(counts["both_decided"], len(rows))
        confusion = _combined_confusion(labelled)
    else:
        columns = _columns(classes, verdicts)
        table = np.zeros((len(classes), len(columns)))
        index = {name: i for i, name in enumerate(columns)}
        row_of = {name: i for i, name in enumerate(classes)}
        for row, verdict in labelled:
            table[row_of[str(row.label)], index[verdict.outcome]] += 1
        k = len(classes)

        def tabled(t: Floats) -> dict[str, Floats]:
            found = {"accuracy": m.accuracy(t, k), "kappa": m.cohen_kappa(t, k)}
            if kind == "binary":
                found.update(m.binary_rates(t))
            return found

        out.update(_from_table(table, bootstrap, key, tabled))
        out["coverage"] = _share(counts["decided"], len(rows))
        confusion = Confusion(tuple(classes), tuple(columns), tuple(tuple(int(c) for c in r) for r in table))
    if kind != "numeric" and any(row.raters for row, _ in labelled):
        out["alpha"] = _alpha_with_judge(classes, labelled, bootstrap, key)
    ordered = {name: out[name] for name in FIGURES_BY_KIND[kind] if name in out}
    return Figures(counts=counts, figures=ordered, confusion=confusion)


def _share(part: int, whole: int) -> Figure:
    """A plain share with no interval: coverage is a count the report shows, not an estimate."""
    return Figure(part / whole if whole else None)


def _columns(classes: Sequence[str], verdicts: Sequence[RowVerdict]) -> list[str]:
    """The human classes, then labels only the judge used (never matching), then the undecided outcomes."""
    extra = sorted({v.outcome for v in verdicts} - set(classes) - set(UNDECIDED))
    return [*classes, *extra, ABSTAIN, ERROR]


def _from_table(
    table: Floats, bootstrap: Bootstrap, key: str, compute: Callable[[Floats], dict[str, Floats]]
) -> dict[str, Figure]:
    point = compute(table[None, ...])
    drawn = compute(bootstrap.tables(table, key)) if table.sum() > 0 else {}
    out = {}
    for name, values in point.items():
        value = float(values[0])
        low, high = bootstrap.interval(drawn[name]) if name in drawn else (None, None)
        out[name] = Figure(value if np.isfinite(value) else None, low, high)
    return out


def _pair_table(labelled: Sequence[tuple[LabelledRow, RowVerdict]]) -> Floats:
    """(human label a/b/tie) x (order ab outcome) x (order ba outcome) counts."""
    index = {name: i for i, name in enumerate(PAIR_OUTCOMES)}
    table = np.zeros((3, len(PAIR_OUTCOMES), len(PAIR_OUTCOMES)))
    for row, verdict in labelled:
        assert verdict.orders is not None
        table[index[str(row.label)], index[verdict.orders[0]], index[verdict.orders[1]]] += 1
    return table


def _total(parts: list[Floats]) -> Floats:
    out: Floats = np.sum(np.stack(parts), axis=0)
    return out


def _pair_figures(t: Floats) -> dict[str, Floats]:
    n = t.sum(axis=(1, 2, 3))
    right_ab = _total([t[:, c, c, :].sum(axis=1) for c in range(3)])
    right_ba = _total([t[:, c, :, c].sum(axis=1) for c in range(3)])
    both = _total([t[:, c, c, c] for c in range(3)])
    same = _total([t[:, :, c, c].sum(axis=1) for c in range(3)])
    by_ab = t.sum(axis=3)  # label x order-ab outcome
    by_ba = t.sum(axis=2)
    accuracy_ab = m._ratio(right_ab, n)
    accuracy_ba = m._ratio(right_ba, n)
    return {
        "accuracy": m._ratio(both, n),
        "accuracy_ab": accuracy_ab,
        "accuracy_ba": accuracy_ba,
        "accuracy_mean": (accuracy_ab + accuracy_ba) / 2,
        "positional_agreement": m._ratio(same, n),
        "kappa_ab": m.cohen_kappa(by_ab, 3),
        "kappa_ba": m.cohen_kappa(by_ba, 3),
    }


def _pair_counts(verdicts: Sequence[RowVerdict]) -> dict[str, int]:
    """Per-order undecided counts, and how often the two orders agree."""
    counts = {"abstain_ab": 0, "error_ab": 0, "abstain_ba": 0, "error_ba": 0}
    both_decided = consistent = both_undecided = ties = 0
    for verdict in verdicts:
        assert verdict.orders is not None
        for order, outcome in zip(("ab", "ba"), verdict.orders, strict=True):
            if outcome in UNDECIDED:
                counts[f"{outcome}_{order}"] += 1
        decided = [o not in UNDECIDED for o in verdict.orders]
        both_decided += all(decided)
        both_undecided += not any(decided)
        consistent += all(decided) and verdict.orders[0] == verdict.orders[1]
        ties += verdict.orders.count("tie")
    counts.update(
        both_decided=both_decided,
        consistent=consistent,
        inconsistent=both_decided - consistent,
        both_undecided=both_undecided,
        tie_verdicts=ties,
    )
    return counts


def _combined_confusion(labelled: Sequence[tuple[LabelledRow, RowVerdict]]) -> Confusion:
    columns = ("a", "b", "tie", "inconsistent", ABSTAIN, ERROR)
    rows = ("a", "b", "tie")
    table = [[0] * len(columns) for _ in rows]
    for row, verdict in labelled:
        table[rows.index(str(row.label))][columns.index(verdict.outcome)] += 1
    return Confusion(rows, columns, tuple(tuple(r) for r in table))


def _correlations(
    labelled: Sequence[tuple[LabelledRow, RowVerdict]], bootstrap: Bootstrap, key: str
) -> dict[str, Figure]:
    pairs = [(float(row.label), v.value) for row, v in labelled if v.outcome == SCORED and v.value is not None]  # type: ignore[arg-type]
    out = {"coverage": Figure(len(pairs) / len(labelled) if labelled else None)}
    if len(pairs) < 2:
        return {**out, "pearson": Figure(None), "spearman": Figure(None), "kendall": Figure(None)}
    x = np.array([p[0] for p in pairs])
    y = np.array([p[1] for p in pairs])

    def compute(weights: Floats) -> dict[str, Floats]:
        return {
            "pearson": m.pearson(x, y, weights),
            "spearman": m.spearman(x, y, weights),
            "kendall": m.kendall_tau_b(x, y, weights),
        }

    point = compute(np.ones((1, len(pairs))))
    drawn = resampled_rows(bootstrap, len(pairs), key, compute)
    for name, values in point.items():
        value = float(values[0])
        low, high = bootstrap.interval(drawn[name]) if name in drawn else (None, None)
        out[name] = Figure(value if np.isfinite(value) else None, low, high)
    return out


def nominal_alpha(units: Sequence[Sequence[str]], bootstrap: Bootstrap, key: str) -> Figure:
    """Krippendorff's alpha (nominal) of units, each the labels its raters gave; units with < 2 are left out."""
    kept = [unit for unit in units if len(unit) >= 2]
    categories = sorted({label for unit in kept for label in unit})
    if not kept or len(categories) < 2:
        return Figure(None)
    index = {c: i for i, c in enumerate(categories)}
    counts = np.zeros((len(kept), len(categories)))
    for u, unit in enumerate(kept):
        for label in unit:
            counts[u, index[label]] += 1
    point = float(m.krippendorff_nominal(counts, np.ones((1, len(kept))))[0])
    drawn = resampled_rows(bootstrap, len(kept), key, lambda w: {"alpha": m.krippendorff_nominal(counts, w)})
    low, high = bootstrap.interval(drawn["alpha"]) if drawn else (None, None)
    return Figure(point if np.isfinite(point) else None, low, high)


def interval_alpha(units: Sequence[Sequence[float]], bootstrap: Bootstrap, key: str) -> Figure:
    """Krippendorff's alpha (interval) of numeric units; units with < 2 values are left out."""
    kept = [unit for unit in units if len(unit) >= 2]
    if not kept:
        return Figure(None)
    sums = np.array([[len(u), sum(u), sum(v * v for v in u)] for u in kept], dtype=np.float64)
    point = float(m.krippendorff_interval(sums, np.ones((1, len(kept))))[0])
    drawn = resampled_rows(bootstrap, len(kept), key, lambda w: {"alpha": m.krippendorff_interval(sums, w)})
    low, high = bootstrap.interval(drawn["alpha"]) if drawn else (None, None)
    return Figure(point if np.isfinite(point) else None, low, high)


def _alpha_with_judge(
    classes: Sequence[str], labelled: Sequence[tuple[LabelledRow, RowVerdict]], bootstrap: Bootstrap, key: str
) -> Figure:
    """Alpha of the raters with the judge as one more rater (an undecided judge is a missing value)."""
    units = []
    for row, verdict in labelled:
        unit = [str(v) for v in row.raters.values()] or [str(row.label)]
        if verdict.outcome not in UNDECIDED and verdict.outcome != "inconsistent":
            unit.append(verdict.outcome)
        units.append(unit)
    return nominal_alpha(units, bootstrap, key + "/alpha")
