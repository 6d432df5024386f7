"""FunctionModel: a plain function that calls an LLM, used as a judge model.

Code written for other tools often has its LLM as one function, ``ask(prompt) -> str``.
Handed to a judge as ``model=ask``, it is wrapped here: the function gets the rendered
prompt (system and user messages as one text) and returns the reply text, sync or async.
Its tokens and cost are unknown (the function does not say), and reports say so.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from typing import Any

from jurybox.models._spend import record_failure, record_usage
from jurybox.models._types import GenerateRequest, JudgeModelBase, ModelError, ModelResponse, Usage

PromptFunction = Callable[[str], Any]
"""``(prompt) -> reply text``, or an awaitable of it."""


class FunctionModel(JudgeModelBase):
    """A judge model backed by a plain ``(prompt: str) -> str`` function.

    Args:
        function: Called with the rendered prompt; returns the reply text (sync or async).
        name: The model's name in reports; default ``function:<function name>``.
    """

    def __init__(self, function: PromptFunction, *, name: str | None = None) -> None:
        if not callable(function):
            raise TypeError(f"FunctionModel needs a callable, got {type(function).__name__}")
        self.function = function
        self.name = name or f"function:{getattr(function, '__name__', type(function).__name__)}"

    async def complete(self, request: GenerateRequest) -> ModelResponse:
        started = time.perf_counter()
        try:
            reply = self.function(request.prompt)
            if inspect.isawaitable(reply):
                reply = await reply
            if not isinstance(reply, str):
                raise ModelError(f"{self.name} returned {type(reply).__name__}, not the reply text")
        except Exception as error:
            record_failure(error, self.name)
            if isinstance(error, ModelError):
                raise
            raise ModelError(f"{self.name} failed: {type(error).__name__}: {error}") from error
        # Unknown usage and cost: never counted as zero.
        response = ModelResponse(
            text=reply, model=self.name, usage=Usage(), latency=time.perf_counter() - started, cost=None
        )
        record_usage(response)
        return response
