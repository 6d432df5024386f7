"""A stand-in for the suite runner, run as a subprocess by the resume and concurrency tests.

    python resume_driver.py URL SUITE N [--new | --run RUN_ID]

Default: resume the suite's latest run when unfinished, stop when it is
complete, or begin a run of N cases when the suite has none;
``--new`` always begins a new run; ``--run`` writes the given run. It records
every missing case through the Store (one transaction each), printing one line
per case so a test can SIGKILL it at a chosen point, then finishes the run.
"""

from __future__ import annotations

import sys

# Run as a script, this file's folder is on sys.path, so the shared test kit imports.
from store_testkit import make_record

from jurybox.store import open_store


def main(argv: list[str]) -> int:
    url, suite, count = argv[0], argv[1], int(argv[2])
    mode = argv[3] if len(argv) > 3 else ""
    store = open_store(url)
    cases = {f"case-{i:04d}": {"prompt": f"question {i}"} for i in range(count)}
    if mode == "--run":
        run_id = argv[4]
    elif mode == "--new":
        run_id = store.runs.begin(suite, cases=cases, judge_model="fake")
    else:
        latest = store.runs.latest(suite)
        if latest is not None and latest.finished:
            print("finished", flush=True)  # an earlier start got all the way before the kill
            return 0
        run_id = latest.id if latest is not None else store.runs.begin(suite, cases=cases, judge_model="fake")
    print(f"run {run_id}", flush=True)
    for name in store.results.missing(run_id):
        # Large-ish contexts make each transaction long enough for kills to land inside one.
        wrote = store.results.record(run_id, make_record(name, llm=int(name[-1]) % 3 != 0, output="x" * 4000))
        print(f"{'recorded' if wrote else 'skipped'} {name}", flush=True)
    store.finish_run(run_id)
    print("finished", flush=True)
    store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
