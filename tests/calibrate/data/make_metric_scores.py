"""Regenerate ``summeval_similar.jsonl`` and ``topical_chat_similar.jsonl`` from shared/realdata.

Each line: a row id, the expert annotations of one system output (SummEval: coherence,
consistency, fluency, relevance, each the mean of 3 experts; Topical-Chat (USR): six
dimensions, the mean of 3 annotators) and the score jurybox's deterministic ``similar``
judge (difflib ratio) gives that output: against the reference summary for SummEval,
against the knowledge fact the response should use for Topical-Chat. The files hold
no metric scores of their own, so these recorded scores are jurybox's.

    .venv/bin/python tests/calibrate/data/make_metric_scores.py /work/shared/realdata
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from jurybox.core import Context, evaluate
from jurybox.judges import similar

HERE = Path(__file__).resolve().parent
JUDGE = similar(threshold=0.5)


def summeval(realdata: Path) -> Iterator[dict[str, Any]]:
    data = json.loads((realdata / "human_labels" / "summeval__bartscore_unified.json").read_text(encoding="utf-8"))
    for number, (_, doc) in enumerate(data.items()):
        for system, summary in doc["sys_summs"].items():
            score = evaluate(JUDGE, Context(output=summary["sys_summ"], expected=doc["ref_summ"])).value
            yield {"id": f"d{number}/{system}", "scores": summary["scores"], "similar": _recorded(score)}


def topical_chat(realdata: Path) -> Iterator[dict[str, Any]]:
    data = json.loads(
        (realdata / "human_labels" / "unieval__topical_chat_usr_annotations.json").read_text(encoding="utf-8")
    )
    for number, item in enumerate(data):
        score = evaluate(JUDGE, Context(output=item["system_output"], expected=item["context"])).value
        yield {"id": f"c{number}", "system": item["system_id"], "scores": item["scores"], "similar": _recorded(score)}


def _recorded(score: float | None) -> float:
    """The score as recorded: 6 decimals, as a metric's output file would hold it."""
    assert score is not None
    return round(score, 6)


def rows(name: str, realdata: Path) -> Iterator[dict[str, Any]]:
    return summeval(realdata) if name == "summeval" else topical_chat(realdata)


def main() -> None:
    realdata = Path(sys.argv[1])
    for name in ("summeval", "topical_chat"):
        lines = [json.dumps(row, separators=(",", ":")) for row in rows(name, realdata)]
        (HERE / f"{name}_similar.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
