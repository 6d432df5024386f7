"""CPU time of an experiment's statistics: N cases x V variants, every pair compared (issue 30's target: 1 s).

Each case has a pass/fail outcome, a score on a 10-point scale, a tier score and
two judges' scores, so a comparison computes the pass-rate interval and McNemar
test plus four paired mean intervals and Wilcoxon tests.

    python benchmarks/stats_compare.py                 # 10,000 cases x 4 variants (6 pairs), 2,000 resamples
    python benchmarks/stats_compare.py --cases 1000 --variants 3 --continuous
    python benchmarks/stats_compare.py --store         # also through a SQLite store: jurybox compare A B C D

With ``--store`` the same cases are written as runs of a SQLite store (cascade
verdicts: a deterministic tier with one judge, an LLM tier with two), and
``store.paired.compare_many`` is timed: reading each run (two queries) plus the
statistics, what ``jurybox compare A B C D`` and the dashboard spend; then
``check_significance`` on the last run against the three before it (the gate).
"""

from __future__ import annotations

import argparse
import itertools
import random
import tempfile
import time
from pathlib import Path

from jurybox.core import Judgment
from jurybox.stats import CaseSide, adjust_for_many, compare_runs
from jurybox.store import CaseRecord, RegressionPolicy, check_significance, open_store


def variant(rng: random.Random, cases: int, lift: float, continuous: bool) -> dict[str, CaseSide]:
    sides: dict[str, CaseSide] = {}
    for i in range(cases):
        quality = min(1.0, max(0.0, rng.gauss(0.6 + lift, 0.25)))
        score = quality if continuous else round(quality * 10) / 10
        undecided = rng.random() < 0.01
        sides[f"case-{i}"] = CaseSide(
            None if undecided else score >= 0.5,
            score,
            {"deterministic": 1.0 if rng.random() < 0.95 else 0.0, "llm_judge": score},
            {"correctness": score, "relevance": round(min(1.0, score + 0.1) * 10) / 10},
        )
    return sides


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--variants", type=int, default=4)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--continuous", action="store_true", help="scores with many distinct values")
    parser.add_argument("--store", action="store_true", help="also time the comparison through a SQLite store")
    args = parser.parse_args()
    rng = random.Random(1)
    variants = [variant(rng, args.cases, 0.02 * v, args.continuous) for v in range(args.variants)]
    pairs = list(itertools.combinations(range(args.variants), 2))
    started, cpu = time.perf_counter(), time.process_time()
    comparisons = [
        compare_runs(variants[i], variants[j], a_name=f"v{i}", b_name=f"v{j}", resamples=args.resamples)
        for i, j in pairs
    ]
    adjust_for_many(comparisons)
    cpu = time.process_time() - cpu
    wall = time.perf_counter() - started
    print(f"{args.cases:,} cases x {args.variants} variants: {len(pairs)} pairs, {args.resamples:,} resamples each")
    print(f"cpu {cpu:.3f} s  wall {wall:.3f} s  ({cpu / len(pairs) * 1000:.0f} ms per pair)")
    for comparison in comparisons[:3]:
        print(" ", comparison.pass_rate.describe(comparison.a, comparison.b))
        print(
            "   intervals:", ", ".join(f"{m.name} {m.interval.method if m.interval else '-'}" for m in comparison.means)
        )
    if args.store:
        through_store(variants, args.resamples)


def record_of(name: str, side: CaseSide) -> CaseRecord:
    """A cascade verdict with the side's outcome: a deterministic tier, then an LLM tier of two judges."""
    tiers, judges = side.tiers, side.judges

    def node(name: str, value: float, children: dict[str, Judgment] | None = None) -> Judgment:
        made = Judgment.passed if value >= 0.5 else Judgment.failed
        return made(value, "", judge=name, children=children or {})

    det = node("deterministic", tiers["deterministic"], {"contains": node("contains", tiers["deterministic"])})
    llm = node(
        "llm_judge",
        tiers["llm_judge"],
        {key: node(key, value) for key, value in judges.items()},
    )
    if side.passed is None:
        root = Judgment.errored("judge model unreachable", judge="cascade")
    else:
        made = Judgment.passed if side.passed else Judgment.failed
        verdict = made(side.score, "", judge="cascade")
        children = {"deterministic": det, "llm_judge": llm}
        root = Judgment(verdict.status, score=verdict.score, judge="cascade", children=children, decided_by="llm_judge")
    return CaseRecord(case=name, judgment=root, duration=0.1)


def through_store(variants: list[dict[str, CaseSide]], resamples: int) -> None:
    with tempfile.TemporaryDirectory(prefix="jbx-stats-bench-") as where:
        _time_store(Path(where) / "bench.db", variants, resamples)


def _time_store(path: Path, variants: list[dict[str, CaseSide]], resamples: int) -> None:
    with open_store(f"sqlite:///{path}") as store:
        started = time.perf_counter()
        ids = []
        for sides in variants:
            run_id = store.runs.begin("bench", cases={name: {"prompt": name} for name in sides})
            records = [record_of(name, side) for name, side in sides.items()]
            for at in range(0, len(records), 500):
                store.results.record_many(run_id, records[at : at + 500])
            store.finish_run(run_id)
            ids.append(run_id)
        print(f"store: wrote {len(ids)} runs in {time.perf_counter() - started:.1f} s")
        runs = [store.runs.get(run_id) for run_id in ids]
        cpu = time.process_time()
        read = store.paired.sides(runs[0].id)
        read_cpu = time.process_time() - cpu
        cpu, wall = time.process_time(), time.perf_counter()
        found = store.paired.compare_many(runs, resamples=resamples)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        print(
            f"store.paired.compare_many: {len(found)} pairs of {len(read.sides):,}-case runs: cpu {cpu:.3f} s, "
            f"wall {wall:.3f} s (reading one run: {read_cpu * 1000:.0f} ms cpu, two queries)"
        )
        print(" ", found[0].describe())
        policy = RegressionPolicy(baseline="all")
        cpu, wall = time.process_time(), time.perf_counter()
        gate = check_significance(store, ids[-1], policy)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        print(f"check_significance against {len(gate.baseline)} baseline runs: cpu {cpu:.3f} s, wall {wall:.3f} s")
        print(" ", gate.metrics[0].describe())


if __name__ == "__main__":
    main()
