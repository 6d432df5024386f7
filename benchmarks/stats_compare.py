"""CPU time of an experiment's statistics: N cases x V variants, every pair compared (issue 30's target: 1 s).

Each case has a pass/fail outcome, a score on a 10-point scale, a tier score and
two judges' scores, so a comparison computes the pass-rate interval and McNemar
test plus four paired mean intervals and Wilcoxon tests.

    python benchmarks/stats_compare.py                 # 10,000 cases x 4 variants (6 pairs), 2,000 resamples
    python benchmarks/stats_compare.py --cases 1000 --variants 3 --continuous
"""

from __future__ import annotations

import argparse
import itertools
import random
import time

from jurybox.stats import CaseSide, adjust_for_many, compare_runs


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


if __name__ == "__main__":
    main()
