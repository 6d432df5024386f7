"""A realistic run of the property-agent suite, built by running real cascades on real judge outputs.

Every case the reports must handle is here: a pass decided by the LLM tier, a
deterministic fail (LLM tier not needed), an agent crash (ERROR with reason and
traceback), a judge that abstained (real GPT-4 ``$ERROR$`` output), a degraded
verdict, a multi-round case with revival and a follow-up exchange, a case whose
LLM tier was skipped for want of a judge model, unknown costs, and agent output
that tries to inject ``<script>`` and terminal control characters.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

from jurybox.core import Cascade, Context, Judgment, NumericScore, Tier, ToolCall, evaluate
from jurybox.judges import contains, tool_calls
from jurybox.store import CaseRecord, RoundRecord

DATA = Path(__file__).parent.parent / "data" / "report"
SCRIPT = "<script>alert(1)</script>"
SKIP_REASON = (
    "no judge model configured; enable with --judge-model ollama:llama3.1 | openai:gpt-4o-mini | --base-url URL"
)
START = datetime(2026, 11, 21, 9, 30, 0, tzinfo=UTC)


def recorded_judgments() -> list[str]:
    """Real GPT-4 judge replies from MT-bench: ``$ERROR$``, a ``[[9]]`` and a ``[[10]]``."""
    lines = (DATA / "mtbench_gpt4_single_judgments.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["judgment"] for line in lines]


class RecordedLLMJudge:
    """Grades with a recorded model reply the way an LLM rubric judge does: last ``[[N]]`` on 1..10.

    ``neutral_on_failure`` is the explicit degraded policy: an unparsable reply
    becomes a neutral 5/10 marked degraded instead of an abstention.
    """

    kind = "llm"

    def __init__(self, reply: str, *, name: str = "rubric", neutral_on_failure: bool = False) -> None:
        self.reply = reply
        self.name = name
        self.neutral_on_failure = neutral_on_failure

    def __call__(self, context: Context) -> Judgment:
        ratings = re.findall(r"\[\[(\d+(?:\.\d+)?)\]\]", self.reply)
        meta = {"raw_output": self.reply, "model": "openai:gpt-4o-mini", "tokens": 742}
        if not ratings:
            if self.neutral_on_failure:
                return Judgment.passed(
                    NumericScore(5, min=1, max=10),
                    "no rating in the judge reply; neutral score by policy",
                    degraded=True,
                    confidence=0.0,
                    metadata=meta,
                )
            return Judgment.abstained(f"no [[rating]] in the judge reply: {self.reply!r}", metadata=meta)
        rating = float(ratings[-1])
        verdict = Judgment.passed if rating >= 7 else Judgment.failed
        return verdict(NumericScore(rating, min=1, max=10), self.reply, confidence=0.86, metadata=meta)


def cascade(*llm: RecordedLLMJudge, deterministic: tuple[object, ...]) -> Cascade:
    tiers = [Tier.reject_on_any_fail(*deterministic, name="deterministic")]
    if llm:
        tiers.append(Tier.final(*llm, name="llm_judge"))
    else:
        tiers[-1] = Tier.final(*deterministic, name="deterministic")
    return Cascade(*tiers, name="case")


def listing_context(output: str, *, tools: tuple[str, ...] = ("get_listings",)) -> Context:
    return Context(
        input="What are my listings?",
        output=output,
        tool_calls=tuple(ToolCall(name, {"owner_id": 7}, result=[{"id": 1, "name": "Beach House"}]) for name in tools),
        messages=({"role": "user", "content": "What are my listings?"}, {"role": "assistant", "content": output}),
        duration=1.4,
        metadata={"usage": {"prompt_tokens": 311, "completion_tokens": 58}},
    )


def build_records() -> list[CaseRecord]:
    error_reply, rated_9, rated_10 = recorded_judgments()
    listings = "You have three listings: Beach House, Mountain Cabin and City Apartment."
    records: list[CaseRecord] = []

    # 1. PASS: deterministic tier passes and escalates; the LLM tier decides.
    ctx = listing_context(listings)
    judge = cascade(
        RecordedLLMJudge(rated_9),
        deterministic=(
            contains(["Beach House", "Mountain Cabin"], all=True),
            tool_calls(["get_listings"], mode="subset"),
        ),
    )
    # Like the runner, a single-round case also keeps its one round, whose verdict is the case verdict.
    verdict = evaluate(judge, ctx)
    records.append(
        CaseRecord(
            "lists-properties",
            verdict,
            rounds=(RoundRecord(0, ctx.input, ctx, verdict),),
            context=ctx,
            duration=2.31,
            tokens=1113,
            cost=0.000412,
            judge_calls=1,
            tags=("listings", "smoke"),
            started_at=START,
        )
    )

    # 2. FAIL: the deterministic tier rejects, so the LLM judge is never called.
    ctx = Context(
        input="What was my revenue in October?",
        output="Your October revenue was about $9,000.",
        tool_calls=(ToolCall("get_revenue", {"month": "2026-10"}),),
        duration=0.9,
    )
    judge = cascade(RecordedLLMJudge(rated_10), deterministic=(contains("$12,400"),))
    records.append(
        CaseRecord(
            "revenue-october",
            evaluate(judge, ctx),
            context=ctx,
            duration=1.02,
            tokens=369,
            cost=0.0,
            judge_calls=0,
            tags=("revenue",),
        )
    )

    # 3. ERROR: the agent crashed; the case could not be judged. Cost unknown.
    try:
        raise ConnectionResetError("[Errno 104] Connection reset by peer")
    except ConnectionResetError as exc:
        crashed = Judgment.errored("agent crashed before answering", exception=exc, judge="runner")
    records.append(
        CaseRecord(
            "booking-lookup",
            crashed,
            duration=30.0,
            tokens=None,
            cost=None,
            judge_calls=0,
            error="AgentError: the agent process exited with code 1 (ConnectionResetError)",
        )
    )

    # 4. ABSTAIN: the real judge reply has no rating ($ERROR$); never a pass.
    ctx = listing_context("Your calendar has bookings from Nov 2 to Nov 9 at Beach House.", tools=("get_bookings",))
    judge = cascade(RecordedLLMJudge(error_reply, name="correctness"), deterministic=(contains("Beach House"),))
    records.append(
        CaseRecord(
            "bookings-next-week",
            evaluate(judge, ctx),
            context=ctx,
            duration=1.8,
            tokens=980,
            cost=0.00031,
            judge_calls=1,
        )
    )

    # 5. Degraded PASS: the same unparsable reply under the explicit neutral-score policy.
    judge = cascade(
        RecordedLLMJudge(error_reply, name="correctness", neutral_on_failure=True),
        deterministic=(contains("Beach House"),),
    )
    verdict = evaluate(judge, ctx)
    records.append(
        CaseRecord(
            "bookings-degraded",
            verdict,
            rounds=(RoundRecord(0, ctx.input, ctx, verdict),),
            context=ctx,
            duration=1.7,
            tokens=975,
            cost=0.00030,
            judge_calls=1,
        )
    )

    # 6. Multi-round with revival between rounds and a clarification follow-up in round 2.
    round1_ctx = listing_context(listings)
    round1 = evaluate(cascade(RecordedLLMJudge(rated_10), deterministic=(contains("Beach House"),)), round1_ctx)
    round2_out = "Beach House is 82% occupied this month (23 of 28 nights booked)."
    round2_ctx = Context(
        input="What's the occupancy for the first one?",
        output=round2_out,
        tool_calls=(ToolCall("get_listing_details", {"listing_id": 1}, result={"occupancy": 0.82}),),
        messages=(
            {"role": "user", "content": "What are my listings?"},
            {"role": "assistant", "content": listings},
            {"role": "user", "content": "What's the occupancy for the first one?"},
            {"role": "assistant", "content": "Which property do you mean?"},
            {"role": "user", "content": "The first one you listed, Beach House."},
            {"role": "assistant", "content": round2_out},
        ),
        duration=2.2,
    )
    round2 = evaluate(cascade(RecordedLLMJudge(rated_9), deterministic=(contains("82%"),)), round2_ctx)
    rounds = (
        RoundRecord(0, "What are my listings?", round1_ctx, round1),
        RoundRecord(
            1,
            "What's the occupancy for the first one?",
            round2_ctx,
            round2,
            follow_ups=(("Which property do you mean?", "The first one you listed, Beach House."),),
        ),
    )
    overall = Judgment.passed(
        min(r.judgment.value or 0.0 for r in rounds),
        "both rounds passed; context survived the revival",
        judge="rounds",
        children={f"round{r.index}": r.judgment for r in rounds},
    )
    records.append(
        CaseRecord(
            "occupancy-of-first",
            overall,
            rounds=rounds,
            duration=5.9,
            tokens=2210,
            cost=0.00088,
            judge_calls=2,
            metadata={"revive_between_rounds": True},
        )
    )

    # 7. LLM tier skipped (no judge model): only the deterministic tier ran. Cost unknown.
    ctx = listing_context(listings)
    judge = cascade(deterministic=(contains("City Apartment"),))
    records.append(
        CaseRecord(
            "mentions-apartment",
            evaluate(judge, ctx),
            context=ctx,
            duration=1.1,
            tokens=None,
            cost=None,
            metadata={"skipped_tiers": {"llm_judge": SKIP_REASON}},
        )
    )

    # 8. FAIL with hostile output: a script tag, terminal escapes and a NUL byte.
    hostile = f'Here you go {SCRIPT} \x1b[31mred\x1b[0m and a NUL \x00 byte & "quotes" | pipes'
    ctx = Context(input="Summarise my reviews", output=hostile, duration=0.4)
    judge = cascade(deterministic=(contains("4.8 stars"),))
    records.append(
        CaseRecord(
            "reviews-summary",
            evaluate(judge, ctx),
            context=ctx,
            duration=0.5,
            tokens=120,
            cost=0.00002,
            judge_calls=0,
            tags=("reviews",),
        )
    )
    return records
