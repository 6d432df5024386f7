"""Counting judge-model spend per run and per case, without touching the judges.

The run's one judge model is wrapped once; every call adds to the run's totals
and to the tally of the case whose task made it (a ContextVar: asyncio gives
each case task its own context, so concurrent cases never mix their counts).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from jurybox.models._endpoint_calls import EndpointCalls, count_endpoint_calls, merge_endpoint_calls
from jurybox.models._types import ChatMessage, ModelResponse

#: How ``metadata["calls"]`` (and the report's ``totals.calls``) names a judge fleet's endpoint.
ENDPOINT_CALLS_PREFIX = "judge@"


@dataclass
class Spend:
    """Judge-model calls, the HTTP attempts they took, tokens and cost.

    ``calls`` counts every ``generate`` a judge made (each re-ask after an unreadable reply
    and each self-consistency sample is one); ``attempts`` the requests sent for them, the
    retries after faults included (``retries``), none for a cache hit; ``failures`` the calls
    that ended in an error after their retries. ``tokens`` counts only calls whose provider
    reported usage (``unmetered_calls`` did not) and ``cost`` only calls with a known price
    (``unpriced_calls`` had none): a reply the provider billed is counted once it arrives.
    ``endpoints`` counts a judge fleet's requests by endpoint (answered and failed).
    """

    calls: int = 0
    tokens: int = 0
    cost: float = 0.0
    unpriced_calls: int = 0
    unmetered_calls: int = 0
    attempts: int = 0
    retries: int = 0
    failures: int = 0
    endpoints: dict[str, EndpointCalls] = field(default_factory=dict)

    def add(self, response: ModelResponse) -> None:
        self.calls += 1
        if not response.cached:
            self.attempts += response.attempts
            self.retries += response.attempts - 1
        total = response.usage.total_tokens
        if total is None:
            self.unmetered_calls += 1
        else:
            self.tokens += total
        if response.cost is None:
            self.unpriced_calls += 1
        else:
            self.cost += response.cost

    def fail(self, error: BaseException) -> None:
        """Count a call that raised: its attempts (``ProviderError.attempts``, else one) and the failure."""
        attempts = getattr(error, "attempts", None)
        attempts = attempts if isinstance(attempts, int) and attempts > 0 else 1
        self.calls += 1
        self.failures += 1
        self.attempts += attempts
        self.retries += attempts - 1

    def accounting(self) -> dict[str, int]:
        """The call counts as the case record's ``metadata["calls"]["judge"]`` keeps them."""
        return {"calls": self.calls, "attempts": self.attempts, "retries": self.retries, "failures": self.failures}

    def endpoint_accounting(self) -> dict[str, dict[str, int]]:
        """A fleet's requests per endpoint, as ``metadata["calls"]`` keeps them: ``{"judge@URL": {calls, errors}}``."""
        return {ENDPOINT_CALLS_PREFIX + url: counts.to_dict() for url, counts in self.endpoints.items()}

    def merge(self, other: Spend) -> None:
        self.calls += other.calls
        self.attempts += other.attempts
        self.retries += other.retries
        self.failures += other.failures
        self.tokens += other.tokens
        self.cost += other.cost
        self.unpriced_calls += other.unpriced_calls
        self.unmetered_calls += other.unmetered_calls
        if other.endpoints:
            merge_endpoint_calls(self.endpoints, other.endpoints)

    @property
    def known_tokens(self) -> int | None:
        """The token total, 0 with no calls, or None when any call's usage is unknown (never a silent 0)."""
        return None if self.unmetered_calls else self.tokens

    @property
    def known_cost(self) -> float | None:
        """The cost, 0 with no calls, or None when any call's price is unknown."""
        return None if self.unpriced_calls else self.cost


_case_spend: ContextVar[Spend | None] = ContextVar("jurybox_case_spend", default=None)


def start_case_spend() -> Spend:
    """A fresh tally for the case running in the current task."""
    spend = Spend()
    _case_spend.set(spend)
    return spend


class MeteredModel:
    """A JudgeModel that counts what passes through it; behaves exactly like the model it wraps."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.name: str = str(getattr(model, "name", type(model).__name__))
        self.total = Spend()
        self._fleet = bool(getattr(model, "reports_endpoint_calls", False))

    async def _generate(
        self,
        case: Spend | None,
        messages: Sequence[ChatMessage | Mapping[str, Any]],
        temperature: float,
        max_tokens: int | None,
        json_schema: Mapping[str, Any] | None,
        seed: int | None,
    ) -> ModelResponse:
        try:
            response: ModelResponse = await self.model.generate(
                messages, temperature=temperature, max_tokens=max_tokens, json_schema=json_schema, seed=seed
            )
        except Exception as error:
            self.total.fail(error)
            if case is not None:
                case.fail(error)
            raise
        self.total.add(response)
        if case is not None:
            case.add(response)
        return response

    async def generate(
        self,
        messages: Sequence[ChatMessage | Mapping[str, Any]],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        json_schema: Mapping[str, Any] | None = None,
        seed: int | None = None,
    ) -> ModelResponse:
        case = _case_spend.get()
        if not self._fleet:
            # One model, one endpoint: nothing to count by endpoint, so no tally on the way.
            return await self._generate(case, messages, temperature, max_tokens, json_schema, seed)
        with count_endpoint_calls() as endpoints:
            try:
                response: ModelResponse = await self.model.generate(
                    messages, temperature=temperature, max_tokens=max_tokens, json_schema=json_schema, seed=seed
                )
            except Exception as error:
                self.total.fail(error)
                if case is not None:
                    case.fail(error)
                raise
            finally:
                if endpoints:  # a judge fleet's model said which endpoints it asked
                    merge_endpoint_calls(self.total.endpoints, endpoints)
                    if case is not None:
                        merge_endpoint_calls(case.endpoints, endpoints)
        self.total.add(response)
        if case is not None:
            case.add(response)
        return response

    def __getattr__(self, name: str) -> Any:
        # Price tables, aclose() and the like belong to the wrapped model.
        return getattr(self.model, name)

    def __repr__(self) -> str:
        return f"MeteredModel({self.model!r})"
