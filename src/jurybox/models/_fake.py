"""FakeModel: a judge model for tests that answers from a script and records every request."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

from jurybox.models._spend import record_failure, record_usage
from jurybox.models._types import GenerateRequest, JudgeModelBase, ModelError, ModelResponse, Usage

Reply = str | ModelResponse | BaseException
ReplyFunction = Callable[[GenerateRequest], Any]


class FakeModel(JudgeModelBase):
    """A scripted judge model.

    Args:
        replies: One reply for every request (``FakeModel("reply")``), a list
            used in order (``FakeModel(["first", "second"])``; running out is a
            ``ModelError``, never a silent repeat), or a function of the
            request returning the reply (sync or async). A reply may be a
            string, a ModelResponse, or an exception to raise (to simulate a
            provider failure).
        name: The model spec the replies claim to come from.

    Attributes:
        requests: Every request received, in order; ``requests[-1].prompt`` is
            the last rendered prompt.
    """

    def __init__(self, replies: Reply | Sequence[Reply] | ReplyFunction, *, name: str = "fake:model") -> None:
        self.name = name
        self.requests: list[GenerateRequest] = []
        self._replies = replies
        self._position = 0

    @property
    def calls(self) -> int:
        return len(self.requests)

    async def complete(self, request: GenerateRequest) -> ModelResponse:
        self.requests.append(request)
        try:
            response = await self._respond(request)
        except Exception as error:
            record_failure(error, self.name)  # active UsageTrackers count fake calls like real ones
            raise
        record_usage(response)
        return response

    async def _respond(self, request: GenerateRequest) -> ModelResponse:
        reply = await self._next_reply(request)
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, ModelResponse):
            return reply
        if not isinstance(reply, str):
            raise TypeError(f"FakeModel reply must be a string, ModelResponse or exception, got {type(reply).__name__}")
        # Rough token counts (4 characters a token) so cost and usage code paths have numbers to add up.
        usage = Usage(input_tokens=max(1, len(request.prompt) // 4), output_tokens=max(1, len(reply) // 4))
        return ModelResponse(text=reply, model=self.name, usage=usage, finish_reason="stop", raw={"fake": True})

    async def _next_reply(self, request: GenerateRequest) -> Any:
        replies = self._replies
        if callable(replies) and not isinstance(replies, BaseException):
            value = replies(request)
            return await value if inspect.isawaitable(value) else value
        if isinstance(replies, str | ModelResponse | BaseException):
            return replies
        if self._position >= len(replies):
            raise ModelError(f"FakeModel ran out of replies after {len(replies)} request(s)")
        reply = replies[self._position]
        self._position += 1
        return reply

    def __repr__(self) -> str:
        return f"FakeModel(name={self.name!r}, calls={self.calls})"
