"""Two runs' paired statistics from SQL aggregates: no case read one by one, whatever the runs' size.

``PairedRepository.sides`` reads every case of both runs (two 100,000-case runs:
about 600,000 rows of results and verdicts) to hand ``compare_runs`` one
``CaseSide`` per case. Every statistic it computes needs far less:

- the pass-rate difference, its interval and McNemar: the 2x2 table of decided pairs;
- a mean difference (score, tier, judge): the pairs, each side's sum and how many
  pairs have each difference (B - A). The bootstrap and the Wilcoxon test work on
  those counts (``jurybox.stats.mean_of_counts``); B - A is computed by the database
  in the same floating point as Python;
- added, removed and undecided cases: names only, of those cases alone.

So both runs' results are joined on the case name and aggregated in SQL. What this
cannot do, ``compare_many`` leaves to the case-by-case path: runs whose config groups
trials (``trials`` rules) and judges with a stored calibration (the corrected
difference needs each case's verdicts).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, case, exists, func, literal, select, text
from sqlalchemy.engine import Connection
from sqlalchemy.sql.elements import ColumnElement

from jurybox.core import Status
from jurybox.stats import (
    MIN_PAIRS,
    Interval,
    MeanDifference,
    PairedComparison,
    PassRateDifference,
    mean_of_counts,
    pass_rate_of_counts,
)
from jurybox.store._schema import TRIALS_ROWS, judgments_table, results_table

STATISTICS_VERSION = "paired-1"
"""Bumped when a kept statistic would come out differently (a test, a resampling order): older ones are redone."""


_PASS, _FAIL, _ERROR, _ABSTAIN = (s.value for s in (Status.PASS, Status.FAIL, Status.ERROR, Status.ABSTAIN))
_DECIDED = (_PASS, _FAIL)
TRIALS_KEY = "trials"


def _count(condition: ColumnElement[bool]) -> Any:
    return func.coalesce(func.sum(case((condition, 1), else_=0)), 0)


def _kind(j: Any) -> Any:
    """What a verdict-tree node is to the statistics: a cascade tier, a judge, or neither (NULL)."""
    return case(
        (and_(j.c.tier.is_not(None), j.c.depth == 1), literal("tier")),
        (and_(j.c.tier.is_not(None), j.c.depth == 2), literal("judge")),
        (and_(j.c.tier.is_(None), j.c.depth == 1), literal("judge")),
        else_=None,
    )


Figures = tuple[int, float, float, dict[float, int]]
"""A mean difference's aggregates: (pairs, A's sum, B's sum, {B - A: pairs})."""


@dataclass(frozen=True)
class PairedFigures:
    """Everything the paired statistics of two runs are computed from, as SQL aggregates it.

    Small whatever the runs' size (a few thousand differences' counts at most per mean), and
    independent of the level, resamples and seed, so it can be kept (``run_comparisons``) and
    the statistics computed again from it, the same as from the rows.

    Attributes:
        table: The 2x2 table of decided pairs: (pairs, A passed, B passed, only A passed, only B passed).
        undecided: Cases both runs have that either could not decide, by name.
        score: The cases' scores' figures.
        nodes: Each tier's and judge's figures by (``tier`` or ``judge``, path).
        trials: (A's, B's) pass rate of trials of the cases both ran repeatedly.
        added: Cases only B has.
        removed: Cases only A has.
        undecided_a: A's ERROR and ABSTAIN counts.
        undecided_b: B's.
    """

    table: tuple[int, int, int, int, int]
    undecided: tuple[str, ...]
    score: Figures
    nodes: Mapping[tuple[str, str], Figures]
    trials: tuple[tuple[float, float], ...]
    added: tuple[str, ...]
    removed: tuple[str, ...]
    undecided_a: Mapping[str, int]
    undecided_b: Mapping[str, int]

    def to_json(self) -> dict[str, Any]:
        """The figures as JSON (floats as Python writes them: read back bit for bit)."""
        return {
            "v": FIGURES_VERSION,
            "table": list(self.table),
            "undecided": list(self.undecided),
            "score": _figures_json(self.score),
            "nodes": [[kind, path, *_figures_json(found)] for (kind, path), found in self.nodes.items()],
            "trials": [list(pair) for pair in self.trials],
            "added": list(self.added),
            "removed": list(self.removed),
            "undecided_a": dict(self.undecided_a),
            "undecided_b": dict(self.undecided_b),
        }

    @classmethod
    def from_json(cls, data: Any) -> PairedFigures | None:
        """The figures of ``to_json``'s output, or None when of another version or malformed."""
        if not isinstance(data, dict) or data.get("v") != FIGURES_VERSION:
            return None
        try:
            pairs, a_passed, b_passed, only_a, only_b = (int(v) for v in data["table"])
            return cls(
                (pairs, a_passed, b_passed, only_a, only_b),
                tuple(str(name) for name in data["undecided"]),
                _figures_of(data["score"]),
                {(str(kind), str(path)): _figures_of(rest) for kind, path, *rest in data["nodes"]},
                tuple((float(x), float(y)) for x, y in data["trials"]),
                tuple(str(name) for name in data["added"]),
                tuple(str(name) for name in data["removed"]),
                _undecided_of(data["undecided_a"]),
                _undecided_of(data["undecided_b"]),
            )
        except (KeyError, TypeError, ValueError):
            return None


FIGURES_VERSION = 1
"""Bumped when the kept form changes: figures of another version are computed again."""


def _undecided_of(data: Any) -> dict[str, int]:
    # In _undecided's order: JSONB keeps an object's keys in an order of its own.
    return {"error": int(data["error"]), "abstain": int(data["abstain"])}


def _figures_json(found: Figures) -> list[Any]:
    pairs, sum_a, sum_b, deltas = found
    return [pairs, sum_a, sum_b, [[delta, count] for delta, count in deltas.items()]]


def _figures_of(data: Any) -> Figures:
    pairs, sum_a, sum_b, deltas = data
    return int(pairs), float(sum_a), float(sum_b), {float(delta): int(count) for delta, count in deltas}


def statistics_json(
    comparison: PairedComparison,
    undecided_a: Mapping[str, int],
    undecided_b: Mapping[str, int],
    *,
    alpha: float,
    resamples: int,
    seed: int,
) -> dict[str, Any]:
    """Statistics computed from figures, with what they were computed at (kept beside the figures)."""
    return {
        "made_by": STATISTICS_VERSION,
        "alpha": alpha,
        "resamples": resamples,
        "seed": seed,
        "comparison": comparison.to_dict(),
        "undecided_a": dict(undecided_a),
        "undecided_b": dict(undecided_b),
    }


def statistics_of(
    data: Any, *, alpha: float, resamples: int, seed: int
) -> tuple[PairedComparison, dict[str, int], dict[str, int]] | None:
    """The kept statistics when computed at this level, resamples and seed by this jurybox, else None.

    Statistics kept under another ``STATISTICS_VERSION`` are computed again from the figures.
    """
    if not isinstance(data, dict):
        return None
    if (data.get("made_by"), data.get("alpha"), data.get("resamples"), data.get("seed")) != (
        STATISTICS_VERSION,
        alpha,
        resamples,
        seed,
    ):
        return None
    try:
        found = data["comparison"]
        comparison = PairedComparison(
            str(found["a"]),
            str(found["b"]),
            _pass_rate_of(found["pass_rate"]),
            tuple(_mean_of(m) for m in found["means"]),
            tuple(str(name) for name in found["added"]),
            tuple(str(name) for name in found["removed"]),
            tuple(str(name) for name in found["undecided"]),
        )
        return comparison, _undecided_of(data["undecided_a"]), _undecided_of(data["undecided_b"])
    except (KeyError, TypeError, ValueError):
        return None


def _interval_of(data: Any) -> Interval | None:
    if data is None:
        return None
    return Interval(float(data["low"]), float(data["high"]), float(data["confidence"]), str(data["method"]))


def _optional(value: Any) -> float | None:
    return None if value is None else float(value)


def _pass_rate_of(data: Any) -> PassRateDifference:
    needed = data["needed"]
    return PassRateDifference(
        int(data["pairs"]),
        int(data["a_passed"]),
        int(data["b_passed"]),
        int(data["only_a"]),
        int(data["only_b"]),
        _optional(data["difference"]),
        _interval_of(data["interval"]),
        _optional(data["p_value"]),
        None if needed is None else int(needed),
        float(data["detectable"]),
        float(data["alpha"]),
    )


def _mean_of(data: Any) -> MeanDifference:
    return MeanDifference(
        str(data["name"]),
        int(data["pairs"]),
        float(data["a_mean"]),
        float(data["b_mean"]),
        float(data["difference"]),
        _interval_of(data["interval"]),
        _optional(data["p_value"]),
        _optional(data["adjusted_p"]),
    )


def paired_from_sql(
    connection: Connection, run_a: str, run_b: str, *, alpha: float, resamples: int, seed: int
) -> tuple[PairedComparison, dict[str, int], dict[str, int]]:
    """Run B against run A from aggregates (``compare_runs``'s figures), and each run's ERROR and ABSTAIN counts."""
    return paired_of_figures(
        paired_figures(connection, run_a, run_b), run_a, run_b, alpha=alpha, resamples=resamples, seed=seed
    )


def paired_figures(connection: Connection, run_a: str, run_b: str) -> PairedFigures:
    """The aggregates of run B against run A: both runs' results joined on the case name, counted in SQL."""
    ra, rb = results_table.alias("ra"), results_table.alias("rb")
    pairs = ra.join(rb, and_(rb.c.run_id == run_b, rb.c.case_name == ra.c.case_name))
    both = and_(ra.c.status.in_(_DECIDED), rb.c.status.in_(_DECIDED))
    a_pass, b_pass = ra.c.status == _PASS, rb.c.status == _PASS
    table = connection.execute(
        select(
            func.count(),
            _count(a_pass),
            _count(b_pass),
            _count(and_(a_pass, rb.c.status == _FAIL)),
            _count(and_(b_pass, ra.c.status == _FAIL)),
        )
        .select_from(pairs)
        .where(ra.c.run_id == run_a, both)
    ).one()
    undecided = connection.execute(
        select(ra.c.case_name).select_from(pairs).where(ra.c.run_id == run_a, ~both).order_by(ra.c.case_name)
    ).scalars()
    pairs_, a_passed, b_passed, only_a, only_b = (int(v) for v in table)
    return PairedFigures(
        (pairs_, a_passed, b_passed, only_a, only_b),
        tuple(undecided),
        _score_deltas(connection, run_a, run_b),
        _node_deltas(connection, run_a, run_b),
        tuple(_trial_rates(connection, run_a, run_b)),
        _only(connection, run_b, run_a),
        _only(connection, run_a, run_b),
        _undecided(connection, run_a),
        _undecided(connection, run_b),
    )


def paired_of_figures(
    figures: PairedFigures, run_a: str, run_b: str, *, alpha: float, resamples: int, seed: int
) -> tuple[PairedComparison, dict[str, int], dict[str, int]]:
    """The paired statistics of ``figures`` (computed now, or kept): the same whichever."""
    pass_rate = pass_rate_of_counts(*figures.table, alpha=alpha, resamples=resamples, seed=seed)
    means: list[MeanDifference] = []
    score = figures.score
    found = mean_of_counts("score", *score, resamples=resamples, seed=seed) if score[0] else None
    if found is not None:
        means.append(found)
    nodes = figures.nodes
    # Tiers, then judges, each by path: compare_runs's order.
    for kind, path in sorted(nodes, key=lambda key: (key[0] != "tier", key[1])):
        node_figures = nodes[(kind, path)]
        if node_figures[0] >= MIN_PAIRS:
            node = mean_of_counts(f"{kind}:{path}", *node_figures, resamples=resamples, seed=seed)
            if node is not None:
                means.append(node)
    trials = figures.trials
    if trials:
        fsum_a, fsum_b = math.fsum(x for x, _ in trials), math.fsum(y for _, y in trials)
        deltas: dict[float, int] = {}
        for x, y in trials:
            deltas[y - x] = deltas.get(y - x, 0) + 1
        rates = mean_of_counts("trials", len(trials), fsum_a, fsum_b, deltas, resamples=resamples, seed=seed)
        if rates is not None:
            means.append(rates)
    comparison = PairedComparison(
        run_a, run_b, pass_rate, tuple(means), figures.added, figures.removed, figures.undecided
    )
    return comparison, dict(figures.undecided_a), dict(figures.undecided_b)


def _score_deltas(connection: Connection, run_a: str, run_b: str) -> Figures:
    ra, rb = results_table.alias("ra"), results_table.alias("rb")
    delta = (rb.c.score - ra.c.score).label("delta")
    rows = connection.execute(
        select(delta, func.count(), func.sum(ra.c.score), func.sum(rb.c.score))
        .select_from(ra.join(rb, and_(rb.c.run_id == run_b, rb.c.case_name == ra.c.case_name)))
        .where(ra.c.run_id == run_a, ra.c.score.is_not(None), rb.c.score.is_not(None))
        .group_by(delta)
    ).all()
    return _figures(rows)


def _figures(rows: Any) -> Figures:
    """(pairs, A's sum, B's sum, {difference: pairs}) of ``(difference, pairs, A's sum, B's sum)`` groups."""
    counts: dict[float, int] = {}
    for delta, count, _, _ in rows:
        counts[float(delta)] = counts.get(float(delta), 0) + int(count)
    total = sum(counts.values())
    return total, math.fsum(float(r[2]) for r in rows), math.fsum(float(r[3]) for r in rows), counts


def _node_deltas(connection: Connection, run_a: str, run_b: str) -> dict[tuple[str, str], Figures]:
    """Each tier's and judge's paired figures: the nodes of both runs' verdict trees joined by case and path."""
    ra, rb = results_table.alias("ra"), results_table.alias("rb")
    ja, jb = judgments_table.alias("ja"), judgments_table.alias("jb")
    kind_a, kind_b = _kind(ja), _kind(jb)
    delta = (jb.c.score - ja.c.score).label("delta")
    joined = (
        ra.join(rb, and_(rb.c.run_id == run_b, rb.c.case_name == ra.c.case_name))
        .join(ja, ja.c.result_id == ra.c.id)
        .join(jb, and_(jb.c.result_id == rb.c.id, jb.c.path == ja.c.path))
    )
    rows = connection.execute(
        select(kind_a.label("kind"), ja.c.path, delta, func.count(), func.sum(ja.c.score), func.sum(jb.c.score))
        .select_from(joined)
        .where(
            ra.c.run_id == run_a,
            ja.c.run_id == run_a,
            jb.c.run_id == run_b,
            ja.c.round_index.is_(None),
            jb.c.round_index.is_(None),
            ja.c.depth.in_((1, 2)),
            jb.c.depth.in_((1, 2)),
            ja.c.score.is_not(None),
            jb.c.score.is_not(None),
            kind_a.is_not(None),
            kind_a == kind_b,
        )
        .group_by(kind_a, ja.c.path, delta)
    ).all()
    grouped: dict[tuple[str, str], list[Any]] = {}
    for kind, path, *rest in rows:
        grouped.setdefault((str(kind), str(path)), []).append(rest)
    return {key: _figures(found) for key, found in grouped.items()}


def _trial_rates(connection: Connection, run_a: str, run_b: str) -> list[tuple[float, float]]:
    """(A's, B's) per-case pass rate of trials for the cases both ran repeatedly (few or none: only those are read)."""
    r = results_table
    # The partial index's own text: the planner uses the index only when it sees the condition implies it.
    present = text(TRIALS_ROWS["postgresql" if connection.dialect.name == "postgresql" else "sqlite"])
    found: dict[str, dict[str, tuple[int, int]]] = {run_a: {}, run_b: {}}
    for run_id, name, value in connection.execute(
        select(r.c.run_id, r.c.case_name, r.c.extra[TRIALS_KEY]).where(r.c.run_id.in_((run_a, run_b)), present)
    ):
        counted = trial_counts(value)
        if counted is not None:
            found[run_id][name] = counted
    a, b = found[run_a], found[run_b]
    return [(x[0] / x[1], b[name][0] / b[name][1]) for name, x in sorted(a.items()) if name in b]


def _only(connection: Connection, run_id: str, other: str) -> tuple[str, ...]:
    """Cases of ``run_id`` that ``other`` does not have, by name."""
    r, o = results_table.alias("r"), results_table.alias("o")
    missing = ~exists(select(o.c.id).where(o.c.run_id == other, o.c.case_name == r.c.case_name))
    return tuple(
        connection.execute(select(r.c.case_name).where(r.c.run_id == run_id, missing).order_by(r.c.case_name)).scalars()
    )


def _undecided(connection: Connection, run_id: str) -> dict[str, int]:
    r = results_table
    counts: Mapping[str, int] = dict(
        connection.execute(
            select(r.c.status, func.count())
            .where(r.c.run_id == run_id, r.c.status.in_((_ERROR, _ABSTAIN)))
            .group_by(r.c.status)
        ).all()
    )
    return {"error": int(counts.get(_ERROR, 0)), "abstain": int(counts.get(_ABSTAIN, 0))}


def trial_counts(found: Any) -> tuple[int, int] | None:
    """(passes, trials) from a result's ``metadata["trials"]``, or None; anything malformed is no trial count."""
    if not isinstance(found, Mapping):
        return None
    passes, trials = found.get("passes"), found.get("trials")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (passes, trials)):
        return None
    assert isinstance(passes, int) and isinstance(trials, int)
    return (passes, trials) if 0 <= passes <= trials and trials > 0 else None
