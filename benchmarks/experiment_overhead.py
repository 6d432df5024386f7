"""An experiment's own overhead per (case, variant), against the same cases run as separate runs (goal: within 5%).

An experiment of V variants over N cases is put together by the run service
(``jurybox.runs``): one planned suite per variant, an experiment id, its plan
in each run's config, the variant's environment. This measures what that costs
beyond the work itself: the same N x V (case, variant) pairs are run once as
one experiment (one ``prepare`` and ``run``) and once as V separate runs of
suites that each declare one variant's agent, and the wall times are compared.
The agent answers at once and a deterministic judge decides, so the figures
are the framework's, not a model's. Runs alternate, and the median of the
repeats is kept. Reading the finished experiment back as its view (the matrix
and the paired statistics) is timed apart.

    .venv/bin/python benchmarks/experiment_overhead.py --cases 500 --variants 3 --repeats 5
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from jurybox import runs
from jurybox.experiments import experiment_view
from jurybox.store import open_store

AGENT = """
class Agent:
    def __init__(self, style: str = "plain") -> None:
        self.style = style

    def respond(self, message: str, session_id: str) -> str:
        return f"{self.style} answer {message.split()[-1]}"


def make_agent(style: str = "plain") -> Agent:
    return Agent(style)
"""


def suite_text(name: str, cases: int, variants: list[str], *, style: str | None = None) -> str:
    listed = "\n".join(
        f"  - name: q{i}\n    prompt: question {i}\n    judges: [{{contains: answer}}]" for i in range(cases)
    )
    options = f"\n  options: {{style: {style}}}" if style else ""
    declared = "".join(f"  - name: {v}\n    options: {{style: {v}}}\n" for v in variants)
    block = f"variants:\n{declared}" if variants else ""
    return f"name: {name}\nagent:\n  python: bench_agent:make_agent{options}\n{block}cases:\n{listed}\n"


def timed_run(suite: Path, store: str) -> tuple[float, float]:
    """(seconds in all, seconds running once the suite is loaded: opening the runs, the cases, closing)."""
    started = time.perf_counter()
    with runs.prepare(runs.RunRequest(suites=(suite,), store=store, concurrency=8)) as prepared:
        loaded = time.perf_counter()
        prepared.run()
        ended = time.perf_counter()
    return ended - started, ended - loaded


def summed(times: list[tuple[float, float]]) -> tuple[float, float]:
    return sum(t[0] for t in times), sum(t[1] for t in times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=500)
    parser.add_argument("--variants", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    names = [f"v{i}" for i in range(args.variants)]
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "bench_agent.py").write_text(AGENT, encoding="utf-8")
        experiment = root / "experiment.yaml"
        experiment.write_text(suite_text("bench", args.cases, names), encoding="utf-8")
        separate = []
        for name in names:
            path = root / f"separate-{name}.yaml"
            path.write_text(suite_text(f"bench-{name}", args.cases, [], style=name), encoding="utf-8")
            separate.append(path)
        store = f"sqlite:///{root / 'store.db'}"
        timed_run(experiment, store)  # warm: imports, the store's schema, the agent module
        as_experiment, as_runs = [], []
        for repeat in range(args.repeats):
            # Alternating which goes first: the store grows as they run, and the machine's load drifts.
            if repeat % 2:
                as_runs.append(summed([timed_run(path, store) for path in separate]))
                as_experiment.append(timed_run(experiment, store))
            else:
                as_experiment.append(timed_run(experiment, store))
                as_runs.append(summed([timed_run(path, store) for path in separate]))
        with open_store(store) as opened:
            started = time.perf_counter()
            view = experiment_view(opened, "last")
            reading = time.perf_counter() - started
    pairs = args.cases * args.variants
    print(f"{args.cases} cases x {args.variants} variants = {pairs} (case, variant) pairs; median of {args.repeats}")
    for label, index in (("in all (load + run)", 0), ("running (suites loaded)", 1)):
        experiment_s = statistics.median(t[index] for t in as_experiment)
        runs_s = statistics.median(t[index] for t in as_runs)
        overhead = (experiment_s - runs_s) / pairs
        relative = (experiment_s / runs_s - 1) * 100
        print(f"  {label}:")
        print(f"    as one experiment:     {experiment_s:8.3f} s  ({experiment_s / pairs * 1e3:.3f} ms a pair)")
        print(f"    as {args.variants} separate runs:    {runs_s:8.3f} s  ({runs_s / pairs * 1e3:.3f} ms a pair)")
        print(f"    experiment's overhead: {overhead * 1e3:+8.3f} ms a pair ({relative:+.1f}%; goal within +5%)")
    shown = f"{len(view.columns)} variants, {len(view.comparisons)} comparisons"
    print(f"  reading its view back:  {reading:8.3f} s  ({shown})")


if __name__ == "__main__":
    main()
