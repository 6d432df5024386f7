"""The check of every model server a run's suites name, once, before the first case (``--preflight``).

An unreachable judge would cost every case its retries; this finds out once, in a
second or two. The probing itself is the models layer's (``ProviderModel.probe_target``,
``probe_all``); this module only collects what to check from the loaded suites: the
run's judge model, the models judges name themselves, and an OpenAI-compatible agent
endpoint.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from jurybox.core import printable_url
from jurybox.models import PROBE_TIMEOUT, ProbeTarget, openai_compatible_target, probe_all
from jurybox.suites import Suite

_NESTED = ("judges", "members", "tiers", "judge")  # where a jury, a cascade or a wrapper keeps its judges
_MOST_JUDGES = 10_000  # objects a walk visits at most: a suite's judges, never a cycle


def preflight_problems(suites: Sequence[Suite], *, timeout: float = PROBE_TIMEOUT) -> list[str]:
    """One line per unreachable server or refused key among the suites' models, e.g.
    ``judge model openai:m: connection refused at http://127.0.0.1:9/v1: is the server running?``.

    Models without a server (FakeModel, a Python judge model) are not checked, nor is
    anything when no suite names a model: the offline default makes no network call.
    """
    targets = [target for suite in suites for target in preflight_targets(suite)]
    if not targets:
        return []
    failed = asyncio.run(probe_all(targets, timeout=timeout))
    return [f"{target.label}: {problem}" for target, problem in failed]


def preflight_targets(suite: Suite) -> list[ProbeTarget]:
    """What to check for one suite: each distinct model server, then the agent's chat endpoint."""
    targets = []
    seen: set[int] = set()
    for model in _models(suite):
        target_of = getattr(model, "probe_target", None)
        if not callable(target_of) or id(model) in seen:
            continue
        seen.add(id(model))
        target = target_of()
        if isinstance(target, ProbeTarget):
            name = getattr(model, "name", None) or type(model).__name__
            targets.append(replace(target, label=f"judge model {name}"))
    agent = _agent_target(suite.agent)
    if agent is not None:
        targets.append(agent)
    return targets


def _models(suite: Suite) -> Iterator[Any]:
    if suite.model is not None:
        yield _unwrapped(suite.model)
    for case in suite.sample_cases:
        for built in case.llm_judges():
            for judge in _walk(built.judge):
                model = getattr(judge, "model", None)
                if model is not None and not isinstance(model, str):
                    yield _unwrapped(model)


def _walk(root: Any) -> Iterator[Any]:
    """The judge and every judge nested in it (a jury's members, a cascade's tiers)."""
    stack: list[Any] = [root]
    seen: set[int] = set()
    while stack and len(seen) < _MOST_JUDGES:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        yield item
        for name in _NESTED:
            nested = getattr(item, name, None)
            if isinstance(nested, Iterable) and not isinstance(nested, str | bytes | Mapping):
                stack.extend(nested)
            elif nested is not None and callable(nested):
                stack.append(nested)


def _unwrapped(model: Any) -> Any:
    """The provider model under the run's metering wrapper (which keeps it as ``.model``)."""
    for _ in range(4):
        inner = vars(model).get("model") if hasattr(model, "__dict__") else None
        if inner is None or isinstance(inner, str):
            return model
        model = inner
    return model


def _agent_target(agent: Mapping[str, Any]) -> ProbeTarget | None:
    """The check of an ``openai:`` agent's endpoint; None for other agents or one with no key to send."""
    options = agent.get("openai") if isinstance(agent, Mapping) else None
    if not isinstance(options, Mapping):
        return None
    base_url = options.get("base_url")
    variable = options.get("api_key_env", "OPENAI_API_KEY")
    key = os.environ.get(variable) if isinstance(variable, str) else None
    if not isinstance(base_url, str):
        if not key:
            return None  # the agent itself says that the key is missing
        base_url = "https://api.openai.com/v1"
    target = openai_compatible_target(
        base_url, printable=printable_url(base_url), api_key=key or "unused", key_variable=str(variable)
    )
    headers = options.get("headers")
    if isinstance(headers, Mapping):
        # The agent sends these (an Authorization of its own, say): so does its check.
        extra = {str(k): os.path.expandvars(v) for k, v in headers.items() if isinstance(v, str)}
        target = replace(target, headers={**target.headers, **extra})
    return replace(target, label=f"agent endpoint (model {options.get('model')})")
