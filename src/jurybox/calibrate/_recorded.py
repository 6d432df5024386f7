"""Recorded judge replies -> verdicts, with no model call.

A recorded file is JSONL, one reply a line::

    {"id": "q17", "judge": "strict", "text": "... Rating: [[3]]"}
    {"id": "p4", "judge": "pair", "order": "ba", "text": "Output (a) is better."}
    {"id": "p4", "judge": "rating", "output": "b", "text": "7"}
    {"id": "p9", "judge": "pair", "order": "ab", "error": "HTTP 503", "text": null}

``id`` names a labelled row; ``judge`` names the judge spec (optional when
there is one); ``order`` (``ab``/``ba``) is for pairwise replies; ``output``
(``a``/``b``) for separate ratings of each output; ``stage`` (1, 2, ...) for
judges that ask again when the first answers disagree (the last stage recorded
decides, read with that stage's classifier); ``error`` marks a failed call;
``tokens``, ``cost`` (USD) and ``latency`` (seconds) are optional. The text is
read by the judge's own classifier under the rule live judges read with (a
passing verdict that the row's own texts state is ABSTAIN), so a parser change
shows up as a changed figure. A labelled row with no recorded reply is an ERROR verdict, shown.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jurybox.calibrate._errors import CalibrationInputError, Problem
from jurybox.calibrate._input import (
    MAX_BYTES,
    MAX_REPLIES,
    Record,
    jsonl_records,
    limited,
    read_text,
    refuse_long_jsonl,
)
from jurybox.calibrate._labels import LabelledRow, LabelledSet
from jurybox.calibrate._specs import JudgeSpec
from jurybox.calibrate._verdicts import (
    ABSTAIN,
    ERROR,
    ORDERS,
    RowVerdict,
    combined,
    compare_ratings,
    single_outcome,
    winner,
)
from jurybox.core import Judgment
from jurybox.llm import Material, read_verdict

RECORDED_FIELDS = ("id", "judge", "order", "output", "stage", "text", "error", "tokens", "cost", "latency")


@dataclass(frozen=True)
class RecordedReply:
    """One recorded judge reply (or failed call)."""

    id: str
    judge: str | None
    text: str | None
    order: str | None = None
    output: str | None = None
    stage: int = 1
    error: str | None = None
    tokens: int | None = None
    cost: float | None = None
    latency: float | None = None
    line: int | None = None


def load_recorded(path: str | Path, *, max_bytes: int = MAX_BYTES) -> list[RecordedReply]:
    """Read a recorded-replies JSONL file.

    Raises:
        CalibrationInputError: every bad line, as ``file:line:field: message``.
    """
    source = str(path)
    text = read_text(Path(path), max_bytes)
    refuse_long_jsonl(text, source, MAX_REPLIES, "recorded replies")
    records = jsonl_records(text, source)
    return recorded_from_records(limited(records, source, MAX_REPLIES, "recorded replies"), source)


def recorded_from_rows(rows: Iterable[Mapping[str, Any]], *, source: str = "<recorded>") -> list[RecordedReply]:
    """Recorded replies from mappings in memory (the same fields and checks as a file)."""
    return recorded_from_records((Record(i, dict(r), {}) for i, r in enumerate(rows, start=1)), source)


def recorded_from_records(records: Iterable[Record | Problem], source: str) -> list[RecordedReply]:
    problems: list[Problem] = []
    replies: list[RecordedReply] = []
    for item in records:
        if isinstance(item, Problem):
            problems.append(item)
            continue
        reply = _reply(item, source, problems)
        if reply is not None:
            replies.append(reply)
    if problems:
        raise CalibrationInputError(problems)
    return replies


def _reply(record: Record, source: str, problems: list[Problem]) -> RecordedReply | None:
    data = record.data
    before = len(problems)

    def problem(name: str, message: str) -> None:
        problems.append(Problem(source, record.line, name, message))

    for name in data:
        if name not in RECORDED_FIELDS:
            problem(name, f"unknown field; valid fields: {', '.join(RECORDED_FIELDS)}")
    raw_id = data.get("id")
    if isinstance(raw_id, bool) or not isinstance(raw_id, str | int) or raw_id == "":
        problem("id", "missing or not a text / whole number")
    judge = data.get("judge")
    if judge is not None and (not isinstance(judge, str) or not judge):
        problem("judge", "must be a non-empty text")
    text, error = data.get("text"), data.get("error")
    if text is not None and not isinstance(text, str):
        problem("text", f"must be text, got {type(text).__name__}")
    if error is not None and not isinstance(error, str):
        problem("error", f"must be text, got {type(error).__name__}")
    if text is None and error is None:
        problem("text", "missing: give the reply's 'text', or 'error' for a failed call")
    order, output = data.get("order"), data.get("output")
    if order is not None and order not in ORDERS:
        problem("order", f"must be 'ab' or 'ba', got {order!r}")
    if output is not None and output not in ("a", "b"):
        problem("output", f"must be 'a' or 'b', got {output!r}")
    if order is not None and output is not None:
        problem("output", "give 'order' (a pairwise reply) or 'output' (a rating of one output), not both")
    stage = data.get("stage", 1)
    if isinstance(stage, bool) or not isinstance(stage, int) or stage < 1:
        problem("stage", f"must be a whole number >= 1, got {stage!r}")
    tokens = data.get("tokens")
    if tokens is not None and (isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0):
        problem("tokens", f"must be a whole number >= 0, got {tokens!r}")
    numbers: dict[str, float | None] = {}
    for name in ("cost", "latency"):
        value = data.get(name)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0
        ):
            problem(name, f"must be a number >= 0, got {value!r}")
        numbers[name] = float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
    if len(problems) > before:
        return None
    return RecordedReply(
        id=str(raw_id),
        judge=judge,
        text=text,
        order=order,
        output=output,
        stage=stage,
        error=error,
        tokens=tokens,
        cost=numbers["cost"],
        latency=numbers["latency"],
        line=record.line,
    )


def recorded_verdicts(
    labelled: LabelledSet, specs: Sequence[JudgeSpec], replies: Sequence[RecordedReply], source: str = "<recorded>"
) -> dict[str, list[RowVerdict]]:
    """Each spec's verdict on every labelled row, read from the recorded replies.

    Raises:
        CalibrationInputError: a reply naming an unknown row or judge, a judge
            with no classifier, or replies whose shape does not fit the judge's mode.
    """
    names = [spec.name for spec in specs]
    problems: list[Problem] = []
    ids = {row.id for row in labelled.rows}
    by_judge: dict[str, dict[str, list[RecordedReply]]] = {name: {} for name in names}
    for reply in replies:
        judge = reply.judge if reply.judge is not None else (names[0] if len(names) == 1 else None)
        if judge is None:
            problems.append(
                Problem(
                    source,
                    reply.line,
                    "judge",
                    f"several judges are calibrated ({', '.join(names)}); say which one wrote this reply",
                )
            )
        elif judge not in by_judge:
            problems.append(
                Problem(source, reply.line, "judge", f"unknown judge {judge!r}; judges: {', '.join(names)}")
            )
        elif reply.id not in ids:
            problems.append(Problem(source, reply.line, "id", f"no labelled row has id {reply.id!r}"))
        else:
            by_judge[judge].setdefault(reply.id, []).append(reply)
    for spec in specs:
        if not spec.readers and by_judge[spec.name]:
            problems.append(
                Problem(source, None, "judge", f"judge {spec.name!r} has no classifier to read recorded text with")
            )
        for row_id, found in by_judge[spec.name].items():
            problems.extend(_shape_problems(spec, row_id, found, source))
    if problems:
        raise CalibrationInputError(problems)
    out: dict[str, list[RowVerdict]] = {}
    for spec in specs:
        replies_of = by_judge[spec.name]
        out[spec.name] = [_verdict(spec, labelled, row, replies_of.get(row.id, [])) for row in labelled.rows]
    return out


def _shape_problems(spec: JudgeSpec, row_id: str, found: list[RecordedReply], source: str) -> list[Problem]:
    problems = []

    def key(reply: RecordedReply) -> tuple[str | int | None, ...]:
        side = {"single": None, "pairwise": reply.order, "ratings": reply.output}[spec.mode]
        return (side, reply.stage)

    seen: set[Any] = set()
    for reply in found:
        if spec.mode == "pairwise" and reply.order is None:
            problems.append(
                Problem(
                    source, reply.line, "order", f"judge {spec.name!r} is pairwise: each reply needs 'order' (ab or ba)"
                )
            )
        if spec.mode == "ratings" and reply.output is None:
            problems.append(
                Problem(
                    source,
                    reply.line,
                    "output",
                    f"judge {spec.name!r} rates each output: each reply needs 'output' (a or b)",
                )
            )
        if spec.mode == "single" and (reply.order is not None or reply.output is not None):
            problems.append(
                Problem(
                    source,
                    reply.line,
                    "order",
                    f"judge {spec.name!r} gives one verdict per row: no 'order' or 'output'",
                )
            )
        if key(reply) in seen:
            problems.append(Problem(source, reply.line, "id", f"a second reply for row {row_id!r} in the same slot"))
        seen.add(key(reply))
    return problems


def _read(spec: JudgeSpec, reply: RecordedReply | None, material: Material) -> Judgment:
    if reply is None:
        return Judgment.errored("no recorded reply for this row")
    if reply.error is not None:
        return Judgment.errored(f"the recorded call failed: {reply.error}", metadata={"raw": reply.text})
    reader = spec.readers[min(reply.stage, len(spec.readers)) - 1]
    # The rule a live judge reads with: a passing verdict the row's own texts state is not the judge's.
    return read_verdict(reader, reply.text or "", material)


def _material(row: LabelledRow) -> Material:
    """What the judge was shown of ``row``: its question, output(s), reference and sources."""
    context = row.context
    texts = [("input", context.input), ("output", context.output), ("expected", context.expected or "")]
    texts += [("output_a", row.output_a or ""), ("output_b", row.output_b or "")]
    texts += [(f"sources {i}", source) for i, source in enumerate(context.sources, start=1)]
    return Material((label, text) for label, text in texts if text)


def _last(replies: Iterable[RecordedReply]) -> RecordedReply | None:
    ordered = sorted(replies, key=lambda reply: reply.stage)
    return ordered[-1] if ordered else None


def _verdict(spec: JudgeSpec, labelled: LabelledSet, row: LabelledRow, replies: list[RecordedReply]) -> RowVerdict:
    row_id = row.id
    material = _material(row)
    used: list[RecordedReply] = []
    if spec.mode == "single":
        reply = _last(replies)
        judgment = _read(spec, reply, material)
        used = [reply] if reply else []
        outcome, value = single_outcome(judgment, labelled.kind)
        return _build(row_id, outcome, value, None, judgment, used, {})
    if spec.mode == "pairwise":
        judgments: list[Judgment] = []
        outcomes: list[str] = []
        for order in ORDERS:
            reply = _last(r for r in replies if r.order == order)
            judgment = _read(spec, reply, material)
            judgments.append(judgment)
            outcomes.append(winner(judgment, order, spec.positions))
            used.extend([reply] if reply else [])
        orders = (outcomes[0], outcomes[1])
        stages = {order: max((r.stage for r in replies if r.order == order), default=0) for order in ORDERS}
        reasoning = " | ".join(f"{order}: {j.reasoning}" for order, j in zip(ORDERS, judgments, strict=True))
        return _build(row_id, combined(orders), None, orders, judgments[-1], used, {"stages": stages}, reasoning)
    ratings = [_read(spec, _last(r for r in replies if r.output == side), material) for side in ("a", "b")]
    used = [r for side in ("a", "b") if (r := _last(x for x in replies if x.output == side)) is not None]
    outcome, detail = compare_ratings(ratings[0], ratings[1])
    reasoning = " | ".join(f"{side}: {j.reasoning}" for side, j in zip("ab", ratings, strict=True))
    return _build(row_id, outcome, None, (outcome, outcome), ratings[-1], used, detail, reasoning)


def _build(
    row_id: str,
    outcome: str,
    value: float | None,
    orders: tuple[str, str] | None,
    judgment: Judgment,
    used: Sequence[RecordedReply],
    detail: dict[str, Any],
    reasoning: str | None = None,
) -> RowVerdict:
    tokens = [r.tokens for r in used]
    costs = [r.cost for r in used]
    latencies = [r.latency for r in used]
    raw = "\n---\n".join(r.text for r in used if r.text) or None
    return RowVerdict(
        id=row_id,
        outcome=outcome,
        value=value,
        orders=orders,
        reasoning=reasoning if reasoning is not None else judgment.reasoning,
        confidence=judgment.confidence if outcome not in (ABSTAIN, ERROR) else None,
        raw=raw,
        # A partial sum would understate spend: unknown as soon as one reply's figure is unknown.
        tokens=sum(t for t in tokens if t is not None) if used and None not in tokens else None,
        cost=sum(c for c in costs if c is not None) if used and None not in costs else None,
        latency=sum(x for x in latencies if x is not None) if used and None not in latencies else None,
        detail=detail,
    )
