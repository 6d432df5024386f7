"""LLMBar's evaluator outputs as a jurybox labelled set, recorded replies and judge spec.

Only the raw completions are read (never the source's parsed ``winner``), with the
evaluator's own parsing rules from its configuration file turned into jurybox
classifiers, generally (any subset, evaluator or processed set of the same layout):

* a comparison module's ``parsing`` map (winner -> regex, tried in the map's order,
  the first that matches anywhere decides) is a ``FirstMatch`` with
  ``on_conflict="order"``: winner "1" is the output shown first (A), "2" the second (B);
* a swap-and-synthesize evaluator's second module reads the second entry of
  ``results`` (stage 2), as the source does; the last entry decides;
* a rating evaluator's two completions (one per output) are read as whole integers,
  as the source's ``int()`` does, with jurybox's ``Rating`` classifier.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jurybox.calibrate import (
    FirstMatch,
    JudgeSpec,
    LabelledSet,
    RecordedReply,
    RowVerdict,
    labelled_set_from_rows,
    recorded_from_rows,
)
from jurybox.llm import Rating

# int() accepts any whole number with surrounding whitespace and a sign; the scale is not checked.
WHOLE_NUMBER = r"^\s*([+-]?\d+)\s*$"
_UNBOUNDED = 2.0**53
_WINNER_LABEL = {"1": "A", "2": "B"}


@dataclass(frozen=True)
class LLMBarRun:
    """One evaluator's run on one subset, ready for ``calibrate``."""

    name: str
    labelled: LabelledSet
    replies: list[RecordedReply]
    spec: JudgeSpec
    statistics: dict[str, Any]
    ratings: bool


def config_path(folder: Path, configs: Path) -> Path:
    """``Natural__GPT-4_Vanilla`` -> ``configs/GPT-4/Vanilla.json``."""
    evaluator = folder.name.split("__", 1)[1]
    model, name = evaluator.split("_", 1)
    return configs / model / f"{name}.json"


def load_run(folder: Path, configs: Path) -> LLMBarRun:
    items = json.loads((folder / "result.json").read_text(encoding="utf-8"))
    statistics = json.loads((folder / "statistics.json").read_text(encoding="utf-8"))
    modules = json.loads(config_path(folder, configs).read_text(encoding="utf-8"))
    subset = folder.name.split("__", 1)[0]
    rows = [
        {
            "id": str(index),
            "input": item["input"],
            "output_a": item["output_1"],
            "output_b": item["output_2"],
            "label": {1: "a", 2: "b"}[int(item["label"])],
            "tags": [subset],
        }
        for index, item in enumerate(items)
    ]
    labelled = labelled_set_from_rows(rows, source=folder.name, kind="preference")
    recorded: list[dict[str, Any]] = []
    ratings = False
    for index, item in enumerate(items):
        # Auxiliary modules (metrics, reference answers) leave [text, finish_reason] lists; verdicts are dicts.
        entries = [entry for entry in item["results"] if isinstance(entry, dict)]
        for stage, entry in enumerate(entries, start=1):
            if "score_1" in entry:
                ratings = True
                for side in ("a", "b"):
                    text = entry[f"score_{'1' if side == 'a' else '2'}"][0]
                    recorded.append({"id": str(index), "output": side, "stage": stage, "text": text})
                continue
            for order, key in (("ab", "swap = False"), ("ba", "swap = True")):
                recorded.append({"id": str(index), "order": order, "stage": stage, "text": entry[key]["completion"][0]})
    if ratings:
        spec = JudgeSpec.recorded(
            folder.name,
            Rating(WHOLE_NUMBER, min=-_UNBOUNDED, max=_UNBOUNDED),
            mode="ratings",
            model=modules[-1].get("model_name"),
        )
    else:
        readers = [
            FirstMatch({_WINNER_LABEL[w]: pattern for w, pattern in module["parsing"].items()}, on_conflict="order")
            for module in modules
            if module.get("parsing")
        ]
        spec = JudgeSpec.recorded(folder.name, *readers, mode="pairwise", model=modules[-1].get("model_name"))
    return LLMBarRun(folder.name, labelled, recorded_from_rows(recorded, source=folder.name), spec, statistics, ratings)


def source_winners(verdict: RowVerdict, ratings: bool) -> tuple[str | None, str | None]:
    """The winners the source's scoring conventions give for jurybox's parsed verdict (None: no winner).

    Comparison evaluators: the parsed winner per order, None when there is none.
    Rating evaluators (the source's own rule, not jurybox's): a tie goes to the output
    shown second (winner "2" unswapped, "1" swapped), and when either rating is not a
    whole number the winners are "1" and "2" (the output shown first, each time).
    """
    if not ratings:
        assert verdict.orders is not None
        return tuple(o if o in ("a", "b") else None for o in verdict.orders)  # type: ignore[return-value]
    a, b = verdict.detail.get("rating_a"), verdict.detail.get("rating_b")
    if a is None or b is None:
        return "a", "b"
    return ("a" if a > b else "b"), ("b" if b > a else "a")


def parse_count(text: str) -> int:
    """``"95 / 100 = 95.0%"`` -> 95."""
    match = re.match(r"\s*(\d+)\s*/", text)
    assert match, text
    return int(match.group(1))
