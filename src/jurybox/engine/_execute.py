"""Running one case: the agent's rounds, then the judges, into one ``CaseRecord``.

Every failure of the agent (a crash, a hang, garbage) or of a judge becomes an
ERROR record with the reason, never an exception: one bad case never stops a run.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from jurybox.agents import (
    AgentError,
    RoundOutcome,
    RoundSpec,
    Target,
    case_lessons,
    make_target,
    run_conversation,
    sum_usage,
)
from jurybox.core import (
    LESSONS_KEY,
    SKIPPED_TIERS_KEY,
    UNPRICED_KEY,
    CaseRecord,
    Context,
    Judgment,
    LessonNote,
    RoundRecord,
    Status,
    error_reason,
)
from jurybox.engine._conversation_helpers import clarification_detector, follow_up_writer
from jurybox.engine._sql import SqlCheckJudge, SqlPort
from jurybox.engine._verdict import (
    LLM_SKIP_REASON,
    LLM_SKIPPED,
    case_verdict_judge,
    mark_llm_skipped,
    mark_unavailable,
    not_judged,
    round_judgment,
    unavailable_judges,
)
from jurybox.models import Spend, start_case_spend
from jurybox.suites import TIER_DETERMINISTIC, TIER_LLM, Case, Suite, seeded_agent

SESSION_CLOSE_TIMEOUT = 5.0
"""Seconds a finished case waits for the agent to release its session before moving on."""


class CaseExecutor:
    """Runs and judges the cases of one suite against one agent, one case per call.

    Args:
        suite: The loaded suite.
        databases: Where SQL checks run their queries.
        target: The agent (default: built from the suite's ``agent:`` on first use).
        timeout: Seconds per case, overriding the suite's (None keeps them).
        retries: Extra attempts after an agent crash or timeout, overriding the suite's.
    """

    def __init__(
        self,
        suite: Suite,
        databases: SqlPort,
        *,
        target: Target | None = None,
        timeout: float | None = None,
        retries: int | None = None,
    ) -> None:
        self.suite = suite
        self.spend = Spend()
        """Judge-model calls, tokens and cost of every case this executor ran."""
        self._databases = databases
        self._target = target
        self._own_target = target is None
        self._timeout = timeout
        self._retries = retries
        # Follow-ups may use a cheaper model of their own (the suite's follow_up_model).
        follow_up_model = suite.follow_up_model if suite.follow_up_model is not None else suite.model
        self._detector = clarification_detector(follow_up_model)
        self._writer = follow_up_writer(follow_up_model)
        self.lessons: Mapping[str, Sequence[LessonNote]] = {}
        """Each case's stored lessons, fetched once before the run (``SuiteRunner``); most cases have none."""

    def target(self) -> Target:
        """The agent under test, built from the suite's spec the first time it is needed."""
        if self._target is None:
            self._target = make_target(seeded_agent(self.suite.agent, self.suite.seeds), base_dir=self.suite.base_dir)
        return self._target

    async def aclose(self) -> None:
        """Close the agent this executor built (a target handed in belongs to the caller)."""
        if self._own_target and self._target is not None:
            with contextlib.suppress(Exception):
                await self._target.aclose()

    async def execute(self, case: Case, run_id: str) -> CaseRecord:
        """Run and judge one case; never raises for agent or judge failures (ERROR record instead)."""
        spend = start_case_spend()
        try:
            return await self._execute(case, run_id, spend)
        finally:
            self.spend.merge(spend)

    async def _execute(self, case: Case, run_id: str, spend: Spend) -> CaseRecord:
        started_at = datetime.now(UTC)
        clock = time.perf_counter()
        timeout = self._timeout or case.timeout
        retries = self._retries if self._retries is not None else case.retries
        reasons: list[str] = []
        partial: Sequence[RoundOutcome] = ()
        outcomes: list[RoundOutcome] | None = None
        session_id = ""
        lessons = self.lessons.get(case.name, ()) if self.lessons else ()
        for attempt in range(retries + 1):
            # 8 random hex digits, as uuid4().hex[:8] gave, without building a UUID per attempt.
            session_id = f"{run_id[:12]}-{case.name}-{os.urandom(4).hex()}"
            try:
                async with asyncio.timeout(timeout):
                    conversation = run_conversation(
                        self._target_for(case),
                        [RoundSpec(r.prompt, r.follow_ups) for r in case.rounds],
                        session_id=session_id,
                        revive_between_rounds=case.revive_between_rounds,
                        max_follow_ups=case.max_follow_ups,
                        is_clarification=self._detector,
                        follow_up=self._writer,
                        # No timer per agent call: this case's, around the whole conversation and started
                        # first with the same length, always ends a call before a call's own would. Closing
                        # and reviving keep theirs: a timed-out case's session is closed after its timer fired.
                        timeout=None,
                        close_timeout=timeout,
                    )
                    outcomes = await (_with_lessons(conversation, lessons) if lessons else conversation)
                break
            except AgentError as exc:
                reasons.append(f"attempt {attempt + 1}: {exc.reason}")
                partial = exc.outcomes
            except TimeoutError:
                reasons.append(f"attempt {attempt + 1}: the case did not finish within {timeout:g}s")
            except Exception as exc:  # a follow-up writer or adapter bug: not worth retrying
                reasons.append(f"attempt {attempt + 1}: {error_reason(exc)}")
                break
            finally:
                await self._end_session(session_id)
        base: dict[str, Any] = {"session_id": session_id, "attempts": len(reasons) + (outcomes is not None)}
        if lessons:
            base[LESSONS_KEY] = [lesson.id for lesson in lessons]
        if outcomes is None:
            return self._error_record(case, reasons, partial, started_at, clock, spend, base)
        try:
            return await self._judge(case, outcomes, session_id, started_at, clock, spend, base, tuple(lessons))
        except Exception as exc:  # judges turn their own failures into ERROR; this is a runner bug guard
            return self._error_record(
                case, [f"judging failed: {type(exc).__name__}: {exc}"], outcomes, started_at, clock, spend, base
            )

    def _target_for(self, case: Case) -> Target:
        """The agent, or for an ``mcp_call`` case its MCP server answering that one call."""
        if case.mcp_call is None:
            return self.target()
        from jurybox.agents import McpCall, McpCallTarget  # the MCP client, for such a case only

        return McpCallTarget(self.target(), McpCall.from_spec(case.mcp_call))

    async def _end_session(self, session_id: str) -> None:
        """Release what the adapter holds for a finished conversation (a Python agent's object and thread).

        What the agent stored stays: SQL checks run after this and read the database.
        """
        target = self.target()
        holds: Callable[[str], bool] | None = getattr(target, "holds_session", None)
        if holds is not None and not holds(session_id):  # a plain function agent's: nothing to close
            return
        with contextlib.suppress(Exception):
            async with asyncio.timeout(SESSION_CLOSE_TIMEOUT):
                await target.close_session(session_id)

    async def _judge(
        self,
        case: Case,
        outcomes: Sequence[RoundOutcome],
        session_id: str,
        started_at: datetime,
        clock: float,
        spend: Spend,
        base: dict[str, Any],
        lessons: tuple[LessonNote, ...] = (),
    ) -> CaseRecord:
        contexts = [self._round_context(case, outcome, lessons) for outcome in outcomes]
        final = contexts[0] if len(contexts) == 1 else _conversation_context(case, contexts)
        extra = [
            (TIER_DETERMINISTIC, key, SqlCheckJudge(check, self._databases, url, session_id, key))
            for key, check, url in self._sql_checks(case)
        ]
        missing = unavailable_judges(case)
        cascade, skipped = case_verdict_judge(
            case, contexts, final, llm_enabled=self.suite.llm_enabled, extra=extra, leave_out=missing
        )
        if cascade is None:
            judgment = not_judged(case, skipped, missing)
        else:
            judgment = mark_unavailable(mark_llm_skipped(await cascade(final), skipped), missing)
        rounds: tuple[RoundRecord, ...]
        if len(outcomes) == 1:
            rounds = (RoundRecord(0, outcomes[0].prompt, contexts[0], judgment, outcomes[0].follow_ups),)
        else:
            planned = [item.key for item in case.judges]
            rounds = tuple(
                RoundRecord(
                    o.index,
                    o.prompt,
                    contexts[i],
                    round_judgment(judgment, i, [*skipped, *missing], planned),
                    o.follow_ups,
                )
                for i, o in enumerate(outcomes)
            )
        metadata = dict(base)
        metadata["agent_usage"] = _agent_usage(outcomes)
        metadata["calls"] = _call_counts(base, spend, agent_succeeded=True)
        metadata.update(_unpriced(spend))
        if skipped:
            metadata.update(llm_tier=LLM_SKIPPED, skipped_judges=list(skipped))
            metadata[SKIPPED_TIERS_KEY] = {TIER_LLM: LLM_SKIP_REASON}
        if missing:
            metadata.setdefault(SKIPPED_TIERS_KEY, {}).update({tier: reason for tier, reason in missing.values()})
        return CaseRecord(
            case=case.name,
            judgment=judgment,
            rounds=rounds,
            context=final,
            duration=time.perf_counter() - clock,
            tokens=spend.known_tokens,
            cost=spend.known_cost,
            judge_calls=spend.calls,
            tags=case.tags,
            error=judgment.reasoning if judgment.status is Status.ERROR else None,
            started_at=started_at,
            metadata=metadata,
        )

    def _round_context(self, case: Case, outcome: RoundOutcome, lessons: tuple[LessonNote, ...] = ()) -> Context:
        plan = case.rounds[outcome.index]
        reference = (
            plan.reference if plan.reference is not None else (case.reference if len(case.rounds) == 1 else None)
        )
        context = outcome.context
        changes: dict[str, Any] = {}
        if reference is not None:
            changes["expected"] = reference
        if case.sources:
            changes["sources"] = _unique([*case.sources, *context.sources])
        if case.metadata:
            changes["metadata"] = {**case.metadata, **context.metadata}
        if lessons:
            changes["lessons"] = lessons
        return context.replace(**changes) if changes else context

    def _sql_checks(self, case: Case) -> Iterable[tuple[str, Any, str]]:
        for index, check in enumerate(case.sql_checks):
            url = check.database or self.suite.database
            if url is None:
                raise ValueError(f"sql_checks[{index}] of case {case.name!r} has no database URL")
            yield check.name or f"sql_checks[{index}]", check, url

    def _error_record(
        self,
        case: Case,
        reasons: Sequence[str],
        partial: Sequence[RoundOutcome],
        started_at: datetime,
        clock: float,
        spend: Spend,
        base: dict[str, Any],
    ) -> CaseRecord:
        reason = reasons[-1].split(": ", 1)[-1] if reasons else "unknown error"
        detail = "; ".join(reasons)
        judgment = Judgment.errored(detail, judge=case.name, metadata={**base, "stage": "agent"})
        rounds = tuple(
            RoundRecord(
                o.index,
                o.prompt,
                o.context,
                Judgment.abstained("not judged: the case errored", judge=f"round{o.index + 1}"),
                o.follow_ups,
            )
            for o in partial
        )
        return CaseRecord(
            case=case.name,
            judgment=judgment,
            rounds=rounds,
            context=rounds[-1].context if rounds else Context(input=case.rounds[0].prompt, status="error"),
            duration=time.perf_counter() - clock,
            tokens=spend.known_tokens,
            cost=spend.known_cost,
            judge_calls=spend.calls,
            tags=case.tags,
            error=reason,
            started_at=started_at,
            metadata={
                **base,
                "reasons": list(reasons),
                "calls": _call_counts(base, spend, agent_succeeded=False),
                **_unpriced(spend),
            },
        )


async def _with_lessons(
    conversation: Awaitable[list[RoundOutcome]], lessons: Sequence[LessonNote]
) -> list[RoundOutcome]:
    """Run a case's conversation with its lessons current, so the agent can read them (``current_lessons``)."""
    with case_lessons(lessons):
        return await conversation


def _call_counts(base: dict[str, Any], spend: Spend, *, agent_succeeded: bool) -> dict[str, dict[str, int]]:
    """Agent and judge calls of one case, each as attempts, retries and failures (reports add them up)."""
    attempts = int(base["attempts"])
    agent = {"attempts": attempts, "retries": max(0, attempts - 1), "failures": attempts - int(agent_succeeded)}
    counts = {"agent": agent, "judge": spend.accounting()}
    return {**counts, **spend.endpoint_accounting()} if spend.endpoints else counts


def _unpriced(spend: Spend) -> dict[str, Any]:
    """The known part of a partly priced cost (the record's ``cost`` is None): the store shows "≥ $X"."""
    if not spend.unpriced_calls:
        return {}
    return {UNPRICED_KEY: {"calls": spend.unpriced_calls, "known_cost": spend.cost}}


def _conversation_context(case: Case, contexts: Sequence[Context]) -> Context:
    """The whole conversation as one context: last reply, every tool call, all sources."""
    last = contexts[-1]
    return last.replace(
        expected=case.reference,
        tool_calls=tuple(call for c in contexts for call in c.tool_calls),
        sources=_unique(s for c in contexts for s in c.sources),
        duration=sum(c.duration or 0.0 for c in contexts),
        started_at=contexts[0].started_at,
        metadata={**case.metadata, **last.metadata, "rounds": len(contexts)},
    )


def _agent_usage(outcomes: Sequence[RoundOutcome]) -> dict[str, Any]:
    return sum_usage(o.reply.usage for o in outcomes)


def _unique(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(values))
