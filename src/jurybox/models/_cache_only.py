"""A judge model whose server did not answer a check: its response cache answers, a miss fails at once.

``jurybox run``'s pre-run check and the pytest plugin's session check both put a model whose
server is down behind this wrapper: a fully recorded run still passes from the cache (and
says so), while a call the cache cannot answer fails after one attempt with the check's
finding, never after the retries, and never as a pass.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from jurybox.models._errors import ModelConnectionError, ModelTimeoutError
from jurybox.models._types import GenerateRequest, JudgeModelBase, ModelResponse

_HINT = ": is the server running?"


class CacheOnlyModel(JudgeModelBase):
    """``model`` with its server found unreachable: cache hits are given, other calls fail at once.

    Args:
        model: The provider model (its retries are switched off: the server is known to be down).
        problem: What the check found, e.g. ``connection refused at http://127.0.0.1:9/v1: is the server running?``.
        url: Where the server is, as messages show it (default: the model's ``printable_url``).
        checked: Words saying where the check was made, added to a miss's error.

    Attributes:
        calls: Calls made through it.
        failed_calls: Calls the cache could not answer.
        cache_hits: Calls it answered.
    """

    def __init__(
        self, model: Any, problem: str, *, url: str | None = None, checked: str = "checked once before the run"
    ) -> None:
        self.model = model
        self.problem = problem
        self.url = url or str(getattr(model, "printable_url", "") or "the judge server")
        self.checked = checked
        self.name = str(getattr(model, "name", "judge model"))
        self.calls = 0
        self.failed_calls = 0
        self.cache_hits = 0
        retry = getattr(model, "retry", None)
        if retry is not None and dataclasses.is_dataclass(retry) and not isinstance(retry, type):
            model.retry = dataclasses.replace(retry, max_retries=0)

    async def complete(self, request: GenerateRequest) -> ModelResponse:
        self.calls += 1
        try:
            response: ModelResponse = await self.model.complete(request)
        except (ModelConnectionError, ModelTimeoutError) as error:  # the server is still down
            self.failed_calls += 1
            # The error adds its own hint ("is the server running?"): the check's is not repeated.
            finding = self.problem.removesuffix(_HINT)
            raise ModelConnectionError(
                f"{finding} (not in the response cache; {self.checked})", provider=error.provider, url=error.url
            ) from None
        self.cache_hits += bool(getattr(response, "cached", False))
        return response

    @property
    def reason(self) -> str:
        """The check's finding without the URL and hint: ``connection refused``."""
        return _reason(self.url, self.problem)

    def summary(self) -> str:
        """What the check found and how much the cache saved, in one line (see ``cache_only_line``)."""
        return cache_only_line(self.url, self.problem, hits=self.cache_hits, calls=self.calls)

    def __getattr__(self, name: str) -> Any:
        # The cache, probe_target, printable_url...: the wrapped model's. Never during unpickling
        # (``model`` not set yet), which would recurse.
        if name.startswith("__") or name == "model":
            raise AttributeError(name)
        return getattr(self.model, name)

    def __repr__(self) -> str:
        return f"CacheOnlyModel({self.model!r})"


def cache_only_line(url: str, problem: str, *, hits: int, calls: int) -> str:
    """``judge server http://127.0.0.1:9/v1 unreachable (connection refused); 3 of 3 judge call(s) answered
    from the response cache``: the one wording of the CLI's run and the pytest session."""
    reason = _reason(url, problem)
    return (
        f"judge server {url} unreachable ({reason}); {hits} of {calls} judge call(s) answered from the response cache"
    )


def _reason(url: str, problem: str) -> str:
    return problem.removesuffix(_HINT).replace(f" at {url}", "")
