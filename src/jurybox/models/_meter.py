"""Counting judge-model spend per run and per case, without touching the judges.

The run's one judge model is wrapped once; every call adds to the run's totals
and to the tally of the case whose task made it (a ContextVar: asyncio gives
each case task its own context, so concurrent cases never mix their counts).
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

from jurybox.models._endpoint_calls import count_endpoint_calls, merge_endpoint_calls
from jurybox.models._spend import Spend
from jurybox.models._types import GenerateRequest, JudgeModelBase, ModelResponse, as_judge_model

_case_spend: ContextVar[Spend | None] = ContextVar("jurybox_case_spend", default=None)


def start_case_spend() -> Spend:
    """A fresh tally for the case running in the current task."""
    spend = Spend()
    _case_spend.set(spend)
    return spend


class MeteredModel(JudgeModelBase):
    """A JudgeModel that counts what passes through it; behaves exactly like the model it wraps.

    ``total`` counts every call; the case running in the calling task (``start_case_spend``)
    counts its own. A judge fleet's requests are counted by endpoint as well.
    """

    def __init__(self, model: Any) -> None:
        self.model = as_judge_model(model)
        self.name: str = str(getattr(model, "name", type(model).__name__))
        self.total = Spend()
        self._fleet = bool(getattr(model, "reports_endpoint_calls", False))

    async def complete(self, request: GenerateRequest) -> ModelResponse:
        case = _case_spend.get()
        if not self._fleet:
            # One model, one endpoint: nothing to count by endpoint, so no tally on the way.
            return await self._counted(case, request)
        with count_endpoint_calls() as endpoints:
            try:
                return await self._counted(case, request)
            finally:
                if endpoints:  # a judge fleet's model said which endpoints it asked
                    merge_endpoint_calls(self.total.endpoints, endpoints)
                    if case is not None:
                        merge_endpoint_calls(case.endpoints, endpoints)

    async def _counted(self, case: Spend | None, request: GenerateRequest) -> ModelResponse:
        try:
            response = await self.model.complete(request)
        except Exception as error:
            self.total.fail(error)
            if case is not None:
                case.fail(error)
            raise
        self.total.add(response)
        if case is not None:
            case.add(response)
        return response

    def __getattr__(self, name: str) -> Any:
        # Price tables, aclose() and the like belong to the wrapped model.
        return getattr(self.model, name)

    def __repr__(self) -> str:
        return f"MeteredModel({self.model!r})"
