"""Multi-round conversations with an agent: rounds, revival and clarifying follow-ups."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from jurybox.agents._clarification import heuristic_is_clarification
from jurybox.agents._errors import AgentError, AgentTimeout
from jurybox.agents._reply import AgentReply, coerce_reply
from jurybox.agents._target import Target
from jurybox.core import Context, Message

ClarificationDetector = Callable[[Context], Awaitable[bool]]
FollowUpWriter = Callable[[str, Context], Awaitable[str]]


@dataclass(frozen=True)
class RoundSpec:
    """One round of a conversation.

    Attributes:
        prompt: What the user says to open the round.
        follow_up_replies: Scripted answers to the agent's clarifying
            questions in this round, used in order before any generated one.
    """

    prompt: str
    follow_up_replies: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.prompt, str):
            raise TypeError(f"RoundSpec.prompt must be a string, got {type(self.prompt).__name__}")
        object.__setattr__(self, "follow_up_replies", tuple(str(r) for r in self.follow_up_replies))


@dataclass(frozen=True)
class RoundOutcome:
    """What happened in one round.

    Attributes:
        index: 0-based position of the round.
        prompt: The round's opening prompt.
        reply: The agent's final reply in the round (after any follow-ups).
        context: What the round's judges see: this round's input, final output,
            tool calls, sources, duration and usage (in ``metadata``), and the
            whole conversation so far as ``messages``.
        follow_ups: Clarifying exchanges, each (agent question, reply given).
    """

    index: int
    prompt: str
    reply: AgentReply
    context: Context
    follow_ups: tuple[tuple[str, str], ...] = ()


async def run_conversation(
    target: Target,
    rounds: Sequence[RoundSpec],
    *,
    session_id: str,
    revive_between_rounds: bool = False,
    max_follow_ups: int = 0,
    is_clarification: ClarificationDetector | None = None,
    follow_up: FollowUpWriter | None = None,
    timeout: float | None = None,
    close_when_done: bool = True,
    close_timeout: float | None = None,
) -> list[RoundOutcome]:
    """Run the rounds in order in one agent session and return one outcome per round.

    Args:
        target: The agent under test (see ``make_target``).
        rounds: The rounds, in order.
        session_id: The session every round is sent in.
        revive_between_rounds: Close the agent session after each round and
            reopen it by the same id, so a later round only has the earlier
            ones as context if the agent persisted them itself.
        max_follow_ups: How many clarifying questions the runner answers per
            round. A round's scripted replies are always available, so the
            bound is ``max(max_follow_ups, len(round.follow_up_replies))``.
        is_clarification: Decides whether the agent asked a question instead
            of answering (given the round so far, the question as ``output``).
            None uses ``heuristic_is_clarification``, an offline keyword
            heuristic meant for runs without a judge model.
        follow_up: Writes a reply to the agent's question once the round's
            scripted replies are used up (e.g. with the judge model). Without
            one, an unscripted question ends the round and is its output.
        timeout: Seconds allowed for each agent call (and each revival).
        close_when_done: Close the session when the conversation ends (also
            after a failure), so the adapter releases what it holds for it: a
            factory-made agent object and its thread, a chat history. What the
            agent persisted stays, for database checks.
        close_timeout: Seconds allowed for closing or reviving the session;
            default ``timeout``. A caller that bounds the whole conversation
            itself (the runner) passes ``timeout=None`` and this: a close made
            after that bound fired (the cleanup of a timed-out case) is still bounded.

    Raises:
        AgentError: the agent crashed or returned something that is not a
            reply; ``round_index`` and ``outcomes`` say how far it got.
        AgentTimeout: an agent call took longer than ``timeout``.
    """
    if max_follow_ups < 0:
        raise ValueError(f"max_follow_ups must be >= 0, got {max_follow_ups}")
    if timeout is not None and timeout <= 0:
        raise ValueError(f"timeout must be positive seconds or None, got {timeout!r}")
    conversation = _Conversation(
        target=target,
        session_id=session_id,
        max_follow_ups=max_follow_ups,
        is_clarification=is_clarification or heuristic_is_clarification,
        follow_up=follow_up,
        timeout=timeout,
        close_timeout=timeout if close_timeout is None else close_timeout,
    )
    outcomes: list[RoundOutcome] = []
    try:
        for index, spec in enumerate(rounds):
            try:
                revived = revive_between_rounds and index > 0
                if revived:
                    await conversation.revive(index)
                outcomes.append(await conversation.run_round(index, spec, revived=revived))
            except AgentError as exc:
                exc.round_index = index
                exc.outcomes = tuple(outcomes)
                raise
    except BaseException:
        if close_when_done:
            # Best effort: the failure already being raised is the one to report.
            with contextlib.suppress(Exception):
                await conversation.close()
        raise
    if close_when_done:
        try:
            await conversation.close()
        except AgentError as exc:
            exc.outcomes = tuple(outcomes)
            raise
    return outcomes


class _Conversation:
    """The running state of one conversation: the transcript so far and how to reach the agent."""

    def __init__(
        self,
        *,
        target: Target,
        session_id: str,
        max_follow_ups: int,
        is_clarification: ClarificationDetector,
        follow_up: FollowUpWriter | None,
        timeout: float | None,
        close_timeout: float | None = None,
    ) -> None:
        self.target = target
        self.session_id = session_id
        self.max_follow_ups = max_follow_ups
        self.is_clarification = is_clarification
        self.follow_up = follow_up
        self.timeout = timeout
        self.close_timeout = close_timeout
        self.transcript: list[Message] = []

    @property
    def agent(self) -> str:
        return str(getattr(self.target, "name", type(self.target).__name__))

    async def revive(self, index: int) -> None:
        where = f"closing session {self.session_id!r} before round {index + 1} (revival)"
        await self._call(self.target.close_session(self.session_id), where, self.close_timeout)

    async def close(self) -> None:
        where = f"closing session {self.session_id!r}"
        await self._call(self.target.close_session(self.session_id), where, self.close_timeout)

    async def run_round(self, index: int, spec: RoundSpec, *, revived: bool) -> RoundOutcome:
        started_at = datetime.now(UTC)
        clock = time.perf_counter()
        round_start = len(self.transcript)
        replies: list[AgentReply] = []
        follow_ups: list[tuple[str, str]] = []
        scripted = list(spec.follow_up_replies)
        limit = max(self.max_follow_ups, len(scripted))

        reply = await self._ask(spec.prompt, f"round {index + 1}")
        replies.append(reply)

        def snapshot(status: str = "completed", **extra: Any) -> Context:
            return Context(
                input=spec.prompt,
                output=reply.text,
                messages=tuple(self.transcript),
                tool_calls=tuple(call for r in replies for call in r.tool_calls),
                sources=tuple(_unique(source for r in replies for source in r.sources)),
                status=status,
                started_at=started_at,
                duration=time.perf_counter() - clock,
                metadata=_round_metadata(
                    index,
                    self,
                    replies,
                    follow_ups,
                    revived=revived,
                    round_messages=len(self.transcript) - round_start,
                    **extra,
                ),
            )

        unanswered = False
        while limit and len(follow_ups) < limit:
            current = snapshot()
            if not await self.is_clarification(current):
                break
            if scripted:
                answer = scripted.pop(0)
            elif self.follow_up is not None:
                answer = await self.follow_up(reply.text, current)
                if not isinstance(answer, str) or not answer.strip():
                    raise ValueError(f"the follow-up writer returned {answer!r} instead of a non-empty reply")
            else:
                unanswered = True
                break
            follow_ups.append((reply.text, answer))
            reply = await self._ask(answer, f"follow-up {len(follow_ups)} of round {index + 1}")
            replies.append(reply)
        else:
            # The bound was reached: say whether the agent is still asking, so a
            # report can tell "answered after N follow-ups" from "never answered".
            unanswered = bool(limit) and await self.is_clarification(snapshot())
        context = snapshot(unanswered_question=unanswered)
        return RoundOutcome(index=index, prompt=spec.prompt, reply=reply, context=context, follow_ups=tuple(follow_ups))

    async def _ask(self, message: str, where: str) -> AgentReply:
        self.transcript.append(Message("user", message))
        value = await self._call(self.target.respond(message, self.session_id), where)
        try:
            reply = coerce_reply(value, agent=self.agent)
        except AgentError as exc:
            raise AgentError(f"{exc.reason} ({where})") from exc
        self.transcript.append(Message("assistant", reply.text))
        return reply

    async def _call(self, call: Awaitable[Any], where: str, timeout: float | None = None) -> Any:
        """``call``'s result within ``timeout`` (default the conversation's per-call ``timeout``)."""
        limit = self.timeout if timeout is None else timeout
        scope: asyncio.Timeout | None = None
        try:
            if limit is None:  # unbounded here: the caller's own bound (the runner's case timeout) applies
                return await call
            async with asyncio.timeout(limit) as scope:
                return await call
        except AgentError as exc:
            # The adapter's own error (HTTP 500, garbage reply...): same kind, plus where it happened.
            raise type(exc)(f"{exc.reason} ({where})") from exc
        except TimeoutError as exc:
            if scope is not None and scope.expired():
                raise AgentTimeout(f"agent {self.agent} did not answer within {limit:g}s ({where})") from exc
            raise AgentError(f"agent {self.agent} raised TimeoutError: {exc} ({where})") from exc
        except Exception as exc:
            raise AgentError(f"agent {self.agent} raised {type(exc).__name__}: {exc} ({where})") from exc


def _unique(values: Any) -> list[str]:
    seen: dict[str, None] = {}
    for value in values:
        seen.setdefault(str(value), None)
    return list(seen)


def _round_metadata(
    index: int,
    conversation: _Conversation,
    replies: Sequence[AgentReply],
    follow_ups: Sequence[tuple[str, str]],
    *,
    revived: bool,
    round_messages: int,
    **extra: Any,
) -> dict[str, Any]:
    usage = sum_usage(reply.usage for reply in replies)
    metadata: dict[str, Any] = {
        "round": index,
        "session_id": conversation.session_id,
        "agent": conversation.agent,
        "agent_calls": len(replies),
        "round_messages": round_messages,
        "revived": revived,
        "follow_ups": [{"question": question, "reply": answer} for question, answer in follow_ups],
        "usage": usage,
    }
    tokens = usage.get("total_tokens")
    if tokens is None and ("input_tokens" in usage or "output_tokens" in usage):
        tokens = usage.get("input_tokens", 0) + usage.get("output_tokens", 0)
    if tokens is not None:
        metadata["tokens"] = tokens
    if "cost" in usage:
        metadata["cost"] = usage["cost"]
    metadata.update(extra)
    return metadata


def sum_usage(usages: Any) -> dict[str, Any]:
    """Add up usage mappings: numbers are summed, anything else keeps its last value."""
    total: dict[str, Any] = {}
    for usage in usages:
        if type(usage) is not dict and not isinstance(usage, Mapping):  # a dict skips the ABC's check
            continue
        for key, value in usage.items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                previous = total.get(key, 0)
                total[key] = (previous if isinstance(previous, int | float) else 0) + value
            else:
                total[key] = value
    return total
