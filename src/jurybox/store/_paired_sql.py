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
from typing import Any

from sqlalchemy import and_, case, exists, func, literal, select
from sqlalchemy.engine import Connection
from sqlalchemy.sql.elements import ColumnElement

from jurybox.core import Status
from jurybox.stats import MIN_PAIRS, MeanDifference, PairedComparison, mean_of_counts, pass_rate_of_counts
from jurybox.store._schema import judgments_table, results_table

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


def paired_from_sql(
    connection: Connection, run_a: str, run_b: str, *, alpha: float, resamples: int, seed: int
) -> tuple[PairedComparison, dict[str, int], dict[str, int]]:
    """Run B against run A from aggregates (``compare_runs``'s figures), and each run's ERROR and ABSTAIN counts."""
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
    pass_rate = pass_rate_of_counts(*(int(v) for v in table), alpha=alpha, resamples=resamples, seed=seed)
    undecided = connection.execute(
        select(ra.c.case_name).select_from(pairs).where(ra.c.run_id == run_a, ~both).order_by(ra.c.case_name)
    ).scalars()
    means: list[MeanDifference] = []
    score = _score_deltas(connection, run_a, run_b)
    found = mean_of_counts("score", *score, resamples=resamples, seed=seed) if score[0] else None
    if found is not None:
        means.append(found)
    nodes = _node_deltas(connection, run_a, run_b)
    # Tiers, then judges, each by path: compare_runs's order.
    for kind, path in sorted(nodes, key=lambda key: (key[0] != "tier", key[1])):
        figures = nodes[(kind, path)]
        if figures[0] >= MIN_PAIRS:
            node = mean_of_counts(f"{kind}:{path}", *figures, resamples=resamples, seed=seed)
            if node is not None:
                means.append(node)
    trials = _trial_rates(connection, run_a, run_b)
    if trials:
        fsum_a, fsum_b = math.fsum(x for x, _ in trials), math.fsum(y for _, y in trials)
        deltas: dict[float, int] = {}
        for x, y in trials:
            deltas[y - x] = deltas.get(y - x, 0) + 1
        rates = mean_of_counts("trials", len(trials), fsum_a, fsum_b, deltas, resamples=resamples, seed=seed)
        if rates is not None:
            means.append(rates)
    comparison = PairedComparison(
        run_a,
        run_b,
        pass_rate,
        tuple(means),
        _only(connection, run_b, run_a),
        _only(connection, run_a, run_b),
        tuple(undecided),
    )
    return comparison, _undecided(connection, run_a), _undecided(connection, run_b)


def _score_deltas(connection: Connection, run_a: str, run_b: str) -> tuple[int, float, float, dict[float, int]]:
    ra, rb = results_table.alias("ra"), results_table.alias("rb")
    delta = (rb.c.score - ra.c.score).label("delta")
    rows = connection.execute(
        select(delta, func.count(), func.sum(ra.c.score), func.sum(rb.c.score))
        .select_from(ra.join(rb, and_(rb.c.run_id == run_b, rb.c.case_name == ra.c.case_name)))
        .where(ra.c.run_id == run_a, ra.c.score.is_not(None), rb.c.score.is_not(None))
        .group_by(delta)
    ).all()
    return _figures(rows)


def _figures(rows: Any) -> tuple[int, float, float, dict[float, int]]:
    """(pairs, A's sum, B's sum, {difference: pairs}) of ``(difference, pairs, A's sum, B's sum)`` groups."""
    counts: dict[float, int] = {}
    for delta, count, _, _ in rows:
        counts[float(delta)] = counts.get(float(delta), 0) + int(count)
    total = sum(counts.values())
    return total, math.fsum(float(r[2]) for r in rows), math.fsum(float(r[3]) for r in rows), counts


def _node_deltas(
    connection: Connection, run_a: str, run_b: str
) -> dict[tuple[str, str], tuple[int, float, float, dict[float, int]]]:
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
    present: ColumnElement[bool]
    if connection.dialect.name == "postgresql":
        present = r.c.extra.op("?")(TRIALS_KEY)
    else:
        present = func.json_type(r.c.extra, f"$.{TRIALS_KEY}") == "object"
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
