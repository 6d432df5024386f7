"""Builders shared by the store tests and the resume driver: realistic case records."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from jurybox.core import Check, Context, Judgment, Message, ToolCall
from jurybox.store import CaseRecord, RoundRecord, Store


def cascade_judgment(case: str, *, deterministic: bool = True, llm: bool = True) -> Judgment:
    """A cascade verdict shaped like the runner's: a deterministic tier, then an LLM-judge tier."""
    det_children = {
        "contains": Judgment.passed(True, "found the answer", judge="contains", checks=(Check("answer", True, "ok"),))
        if deterministic
        else Judgment.failed(
            False, f"{case}: answer missing", judge="contains", checks=(Check("answer", False, "no"),)
        ),
    }
    det = (
        Judgment.passed(1.0, "no fail; escalating", judge="deterministic", children=det_children)
        if deterministic
        else Judgment.failed(
            0.0, f"contains failed: {case}: answer missing", judge="deterministic", children=det_children
        )
    )
    if not deterministic:
        return Judgment(
            det.status,
            score=det.score,
            reasoning=det.reasoning,
            judge="cascade",
            children={"deterministic": det},
            decided_by="deterministic",
            metadata={"skipped": ["llm_judge"]},
        )
    judge_meta = {"tokens": {"input_tokens": 120, "output_tokens": 30}, "cost": 0.0004}
    llm_judgment = (
        Judgment.passed(0.9, "correct and grounded", judge="correctness", metadata=judge_meta)
        if llm
        else Judgment.failed(0.2, f"{case}: contradicts the reference", judge="correctness", metadata=judge_meta)
    )
    tier = Judgment(
        llm_judgment.status,
        score=llm_judgment.score,
        reasoning=llm_judgment.reasoning,
        judge="llm_judge",
        children={"correctness": llm_judgment},
    )
    return Judgment(
        tier.status,
        score=tier.score,
        reasoning=f"llm_judge decided: {tier.reasoning}",
        judge="cascade",
        children={"deterministic": det, "llm_judge": tier},
        decided_by="llm_judge",
        metadata={"skipped": []},
    )


def make_record(
    case: str,
    *,
    deterministic: bool = True,
    llm: bool = True,
    duration: float = 0.5,
    cost: float | None = 0.001,
    output: str | None = None,
) -> CaseRecord:
    """A one-round case record with a context, tool calls and a cascade judgment."""
    context = Context(
        input=f"question for {case}",
        output=output if output is not None else f"answer for {case}",
        expected=f"answer for {case}",
        messages=(Message("user", f"question for {case}"), Message("assistant", "answer")),
        tool_calls=(ToolCall("search", {"q": case}, result={"hits": 2}, id="call-1"),),
        sources=("doc one",),
        duration=duration,
        started_at=datetime(2026, 1, 1, 12, 0, tzinfo=UTC),
        metadata={"cost": cost, "tokens": 150, "model": "fake"},
    )
    judgment = cascade_judgment(case, deterministic=deterministic, llm=llm)
    return CaseRecord(
        case=case,
        judgment=judgment,
        context=context,
        duration=duration,
        tokens=150,
        cost=cost,
        judge_calls=1 if deterministic else 0,
        tags=("smoke",),
        started_at=datetime(2026, 1, 1, 12, 0, tzinfo=UTC),
        metadata={"attempt": 1},
    )


def make_multi_round_record(case: str) -> CaseRecord:
    """A two-round case with a clarifying follow-up in the first round."""
    rounds = tuple(
        RoundRecord(
            index=i,
            prompt=f"round {i} of {case}",
            context=Context(input=f"round {i}", output=f"reply {i}", duration=0.25, metadata={"tokens": 10}),
            judgment=cascade_judgment(f"{case}#{i}"),
            follow_ups=(("Which city?", "Paris"),) if i == 0 else (),
        )
        for i in range(2)
    )
    overall = Judgment.passed(
        1.0, "every round passed", judge="rounds", children={f"round{i}": r.judgment for i, r in enumerate(rounds)}
    )
    return CaseRecord(case=case, judgment=overall, rounds=rounds, duration=0.5, tokens=20)


def single_round(record: CaseRecord) -> CaseRecord:
    """``record`` with the one round the runner gives a single-prompt case: its verdict is the case's own."""
    assert record.context is not None
    only = RoundRecord(index=0, prompt=record.context.input, context=record.context, judgment=record.judgment)
    return replace(record, rounds=(only,))


def nodes_per_record(record: CaseRecord) -> int:
    """How many judgment rows a record produces (case tree plus each round's own tree)."""
    count = sum(1 for _ in record.judgment.walk())
    own = [r for r in record.rounds if r.judgment is not record.judgment]
    return count + sum(sum(1 for _ in r.judgment.walk()) for r in own)


def record_run(store: Store, suite: str, outcomes: dict[str, tuple[bool, bool]]) -> str:
    """Begin, record and finish one completed run: case -> (deterministic passes, llm passes)."""
    run_id = store.runs.begin(suite, cases={name: {"prompt": f"q {name}"} for name in outcomes}, judge_model="fake")
    for name, (det, llm) in outcomes.items():
        store.results.record(run_id, make_record(name, deterministic=det, llm=llm))
    store.finish_run(run_id)
    return run_id
