"""How long ``jurybox calibrate`` takes on 10,000 recorded rows with 3 judges (target: under 5 s of CPU).

Builds a labelled set of pass/fail rows and three judges' recorded replies
(a JSON verdict, a rating, a pairwise-free label), then times the whole
calibration: parsing every reply with the judge's classifier, the figures,
1,000 bootstrap resamples per figure, slices by tag and the disagreements.
No model is called.

    .venv/bin/python benchmarks/calibrate_speed.py --rows 10000
"""

from __future__ import annotations

import argparse
import json
import random
import time

from jurybox.calibrate import JudgeSpec, calibrate, labelled_set_from_rows, recorded_from_rows
from jurybox.llm import Choice, JsonVerdict, Rating


def build(rows: int, seed: int) -> tuple[object, list[object], list[JudgeSpec]]:
    rng = random.Random(seed)
    labelled_rows = []
    replies = []
    for i in range(rows):
        good = rng.random() < 0.6
        labelled_rows.append(
            {
                "id": str(i),
                "input": f"question {i}",
                "output": f"answer {i}",
                "label": "pass" if good else "fail",
                "tags": [rng.choice(["short", "long", "adversarial"])],
            }
        )
        score = min(1.0, max(0.0, (0.75 if good else 0.3) + rng.gauss(0, 0.2)))
        replies.append(
            {
                "id": str(i),
                "judge": "json",
                "text": json.dumps({"score": round(score, 2), "reasoning": "r", "confidence": 0.7}),
                "tokens": 120,
                "cost": 0.0001,
                "latency": 0.4,
            }
        )
        rating = rng.randint(6, 10) if good == (rng.random() < 0.85) else rng.randint(1, 5)
        replies.append({"id": str(i), "judge": "rating", "text": f"Solid work overall. Rating: [[{rating}]]"})
        verdict = "A" if good == (rng.random() < 0.8) else "B"
        text = f"GRADE: {verdict}" if rng.random() > 0.02 else "I am not sure."
        replies.append({"id": str(i), "judge": "grade", "text": text})
    specs = [
        JudgeSpec.recorded("json", JsonVerdict()),
        JudgeSpec.recorded("rating", Rating(threshold=0.5)),
        JudgeSpec.recorded("grade", Choice({"A": 1.0, "B": 0.0})),
    ]
    return labelled_set_from_rows(labelled_rows, source=f"{rows} synthetic rows"), recorded_from_rows(replies), specs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args()
    labelled, replies, specs = build(args.rows, seed=1)
    wall, cpu = time.perf_counter(), time.process_time()
    result = calibrate(labelled, specs, recorded=replies, resamples=args.resamples, slices=["tags"])  # type: ignore[arg-type]
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    print(f"calibrated {result.rows} rows x {len(result.judges)} judges, {args.resamples} resamples, sliced by tag")
    for judge in result.judges:
        kappa = judge.figure("kappa")
        print(
            f"  {judge.name:7} kappa {kappa.value:.3f} [{kappa.low:.3f}, {kappa.high:.3f}]"
            if kappa and kappa.value is not None
            else judge.name
        )
    print(f"CPU {cpu:.2f} s, wall {wall:.2f} s (target: CPU under 5 s)")


if __name__ == "__main__":
    main()
