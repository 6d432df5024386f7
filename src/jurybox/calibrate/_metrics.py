"""Agreement figures, computed on many resamples at once.

Every function takes its data with a leading resample axis: a confusion table
is ``(B, rows, columns)`` counts, row weights are ``(B, n)`` counts (how many
times each row was drawn). The point estimate is the same function with B = 1
and every weight 1, so the figure and its bootstrap interval can never be
computed two different ways. A figure that is undefined on a resample (no
human-fail row, so no TNR) is NaN there, never 0.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


def _ratio(numerator: Floats, denominator: Floats) -> Floats:
    """numerator / denominator, NaN where the denominator is 0 (an undefined figure, not a zero one)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out: Floats = np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1.0), np.nan)
    return out


def accuracy(table: Floats, classes: int) -> Floats:
    """Share of all rows where the judge gave the human's label (undecided columns never match).

    Args:
        table: ``(B, classes, columns)`` counts; the first ``classes`` columns are the human classes.
        classes: How many human classes there are.
    """
    agree = np.trace(table[:, :, :classes], axis1=1, axis2=2)
    return _ratio(agree, table.sum(axis=(1, 2)))


def cohen_kappa(table: Floats, classes: int) -> Floats:
    """Cohen's kappa of the judge's columns against the human rows.

    Undecided columns (abstain, error, a label people never gave) count as
    disagreement and have no human counterpart, as in sklearn's
    ``cohen_kappa_score`` over the union of labels.
    """
    n = table.sum(axis=(1, 2))
    observed = _ratio(np.trace(table[:, :, :classes], axis1=1, axis2=2), n)
    rows = table.sum(axis=2)
    columns = table.sum(axis=1)[:, :classes]
    expected = _ratio((rows * columns).sum(axis=1), n * n)
    return _ratio(observed - expected, 1.0 - expected)


def binary_rates(table: Floats) -> dict[str, Floats]:
    """TPR, TNR, precision, recall and F1 of a pass/fail table (row and column 0: pass, 1: fail).

    An undecided judgment on a human-pass row is not a true positive, so it
    lowers TPR; on a human-fail row it lowers TNR. It never enters precision,
    which is about the judge's own PASS verdicts.
    """
    true_pass = table[:, 0, 0]
    false_pass = table[:, 1, 0]
    human_pass = table[:, 0, :].sum(axis=1)
    human_fail = table[:, 1, :].sum(axis=1)
    tpr = _ratio(true_pass, human_pass)
    tnr = _ratio(table[:, 1, 1], human_fail)
    precision = _ratio(true_pass, true_pass + false_pass)
    f1 = _ratio(2 * precision * tpr, precision + tpr)
    return {"tpr": tpr, "tnr": tnr, "precision": precision, "recall": tpr, "f1": f1}


def pearson(x: Floats, y: Floats, weights: Floats) -> Floats:
    """Pearson's r of x and y with each row counted ``weights[b, i]`` times."""
    total = weights.sum(axis=1)
    mean_x = _ratio(weights @ x, total)
    mean_y = _ratio(weights @ y, total)
    cov = _ratio(weights @ (x * y), total) - mean_x * mean_y
    var_x = _ratio(weights @ (x * x), total) - mean_x**2
    var_y = _ratio(weights @ (y * y), total) - mean_y**2
    return _ratio(cov, np.sqrt(np.clip(var_x, 0, None) * np.clip(var_y, 0, None)))


def _pearson_rowwise(rx: Floats, ry: Floats, weights: Floats) -> Floats:
    total = weights.sum(axis=1)
    mean_x = _ratio((weights * rx).sum(axis=1), total)
    mean_y = _ratio((weights * ry).sum(axis=1), total)
    dx = rx - mean_x[:, None]
    dy = ry - mean_y[:, None]
    cov = (weights * dx * dy).sum(axis=1)
    var = (weights * dx * dx).sum(axis=1) * (weights * dy * dy).sum(axis=1)
    # Rounding can leave a constant column a variance of 1e-30; that is no variance.
    var = np.where(var > 1e-18, var, 0.0)
    return _ratio(cov, np.sqrt(var))


def _groups(values: Floats) -> tuple[Ints, Ints]:
    """(order that sorts ``values``, each sorted position's group index among equal values)."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts = np.concatenate(([True], ordered[1:] != ordered[:-1]))
    return order.astype(np.int64), (np.cumsum(starts) - 1).astype(np.int64)


def _group_weights(values: Floats, weights: Floats) -> tuple[Floats, Ints]:
    """Per resample, the weight of each group of equal values, and each row's group."""
    order, group_sorted = _groups(values)
    starts = np.flatnonzero(np.concatenate(([True], group_sorted[1:] != group_sorted[:-1])))
    sums: Floats = np.add.reduceat(weights[:, order], starts, axis=1)
    group = np.empty_like(group_sorted)
    group[order] = group_sorted
    return sums, group


def _average_ranks(values: Floats, weights: Floats) -> Floats:
    """Each row's 1-based average rank within every resample, ties sharing their mean rank."""
    sums, group = _group_weights(values, weights)
    ends = np.cumsum(sums, axis=1)
    ranks = ends - (sums - 1.0) / 2.0
    out: Floats = ranks[:, group]
    return out


def spearman(x: Floats, y: Floats, weights: Floats) -> Floats:
    """Spearman's rho: Pearson's r of average ranks, ranks taken within each resample."""
    return _pearson_rowwise(_average_ranks(x, weights), _average_ranks(y, weights), weights)


def kendall_tau_b(x: Floats, y: Floats, weights: Floats) -> Floats:
    """Kendall's tau-b (scipy's default), in O(n log n) per row and vectorised over resamples.

    Rows are walked in x order with a Fenwick tree over y ranks holding, for
    every resample at once, the weight of the rows seen so far; rows tied in x
    are all queried before any is added, so x-ties are neither concordant nor
    discordant. Copies of one row drawn twice are tied in both x and y.
    """
    resamples, n = weights.shape
    if n == 0:
        return np.full(resamples, np.nan)
    order = np.lexsort((y, x))
    xs, w = x[order], weights[:, order]
    _, y_group_sorted = _groups(y)
    y_rank = np.empty(n, dtype=np.int64)
    y_rank[_groups(y)[0]] = y_group_sorted
    ranks = y_rank[order] + 1  # Fenwick indices start at 1
    size = int(ranks.max())
    tree = np.zeros((size + 1, resamples))
    seen = np.zeros(resamples)
    concordant = np.zeros(resamples)
    discordant = np.zeros(resamples)
    columns = np.ascontiguousarray(w.T)

    def prefix(index: int) -> Floats:
        total = np.zeros(resamples)
        while index > 0:
            total += tree[index]
            index -= index & -index
        return total

    start = 0
    while start < n:
        end = start + 1
        while end < n and xs[end] == xs[start]:
            end += 1
        for j in range(start, end):
            below = prefix(int(ranks[j]) - 1)
            not_above = prefix(int(ranks[j]))
            concordant += columns[j] * below
            discordant += columns[j] * (seen - not_above)
        for j in range(start, end):
            index = int(ranks[j])
            while index <= size:
                tree[index] += columns[j]
                index += index & -index
            seen += columns[j]
        start = end
    total = weights.sum(axis=1)
    pairs = total * (total - 1) / 2
    x_sums, _ = _group_weights(x, weights)
    y_sums, _ = _group_weights(y, weights)
    x_ties = (x_sums * (x_sums - 1) / 2).sum(axis=1)
    y_ties = (y_sums * (y_sums - 1) / 2).sum(axis=1)
    return _ratio(concordant - discordant, np.sqrt(np.clip((pairs - x_ties) * (pairs - y_ties), 0, None)))


def krippendorff_nominal(counts: Floats, weights: Floats) -> Floats:
    """Krippendorff's alpha for nominal values.

    Args:
        counts: ``(units, categories)``: how many raters gave each category to
            each unit; units with fewer than two values must be left out.
        weights: ``(B, units)`` resample counts.
    """
    pairable = counts.sum(axis=1)
    disagreement = _ratio(pairable**2 - (counts**2).sum(axis=1), pairable - 1)
    observed = weights @ disagreement
    totals = weights @ counts
    n = totals.sum(axis=1)
    expected = n**2 - (totals**2).sum(axis=1)
    return 1.0 - _ratio((n - 1) * observed, expected)


def krippendorff_interval(sums: Floats, weights: Floats) -> Floats:
    """Krippendorff's alpha for interval values (squared difference).

    Args:
        sums: ``(units, 3)``: each unit's count of values, their sum and sum of squares.
        weights: ``(B, units)`` resample counts.
    """
    m, s1, s2 = sums[:, 0], sums[:, 1], sums[:, 2]
    within = _ratio(2 * m * s2 - 2 * s1**2, m - 1)
    observed = weights @ within
    n = weights @ m
    t1 = weights @ s1
    t2 = weights @ s2
    expected = 2 * n * t2 - 2 * t1**2
    return 1.0 - _ratio((n - 1) * observed, expected)


def kappa_of(first: Sequence[Hashable], second: Sequence[Hashable]) -> float | None:
    """Cohen's kappa of two label sequences over the union of their labels (as sklearn computes it).

    Labels are compared as given: ``1`` and ``"1"`` are different labels, which is
    exactly how a kappa of predictions coded 0/1 against labels coded 1/2 goes wrong.
    None when it is undefined (both raters always give the same single label).
    """
    if len(first) != len(second):
        raise ValueError(f"kappa needs two sequences of the same length, got {len(first)} and {len(second)}")
    labels = list(dict.fromkeys([*first, *second]))
    index = {label: i for i, label in enumerate(labels)}
    table = np.zeros((1, len(labels), len(labels)))
    for a, b in zip(first, second, strict=True):
        table[0, index[a], index[b]] += 1
    value = float(cohen_kappa(table, len(labels))[0])
    return value if np.isfinite(value) else None
