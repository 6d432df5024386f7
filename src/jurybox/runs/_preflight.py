"""The check of every model server a run's suites name, once, before the first case (``--preflight``).

An unreachable judge would cost every case its retries; this finds out once, in a
second or two. The probing itself is the models layer's (``ProviderModel.probe_target``,
``probe_all``); this module only collects what to check from the loaded suites: the
run's judge model, the models judges name themselves, and an OpenAI-compatible agent
endpoint.

A judge server that does not answer stops the run, unless the response cache can
stand in for it: when the model reads the cache and the cache holds replies, the run
goes on with the model behind ``CacheOnlyModel`` (cached verdicts are used; a call the
cache cannot answer fails at once, and its case is ERROR with that reason).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from jurybox.core import printable_url
from jurybox.models import (
    CACHE_MODE_ENV,
    PROBE_TIMEOUT,
    CacheOnlyModel,
    ModelError,
    ProbeTarget,
    openai_compatible_target,
    probe_all,
)
from jurybox.runs._early_probe import EarlyProbes, probe_with
from jurybox.suites import Suite

_NESTED = ("judges", "members", "tiers", "judge")  # where a jury, a cascade or a wrapper keeps its judges
_MOST_JUDGES = 10_000  # objects a walk visits at most: a suite's judges, never a cycle
_REFUSED = ("401 ", "403 ", "407 ")  # a refused key is the user's to fix: the cache does not stand in for it
_CACHE_OFF = {"0", "off", "false", "no", "disabled", "refresh"}  # refresh: the cached replies are distrusted


@dataclass
class Preflight:
    """What the pre-run check found.

    Attributes:
        problems: One line per server that stops the run (unreachable with nothing cached, a refused
            key, an agent endpoint), e.g. ``judge model openai:m: connection refused at http://...``.
        cache_only: Judge models whose server did not answer but whose response cache holds replies:
            the run goes on with them (``CacheOnlyModel.summary()`` says afterwards what the cache answered).
        cached: Replies the response cache held for each of ``cache_only`` (same order).
    """

    problems: list[str] = field(default_factory=list)
    cache_only: list[CacheOnlyModel] = field(default_factory=list)
    cached: list[int] = field(default_factory=list)

    def lines(self) -> list[str]:
        """What the console says before the first case about each cache-only judge server."""
        return [
            f"judge server {model.url} unreachable ({model.reason}): running on the response cache "
            f"({entries:,} {'reply' if entries == 1 else 'replies'} kept); a judge call it cannot answer is an ERROR"
            for model, entries in zip(self.cache_only, self.cached, strict=True)
        ]


def preflight(
    suites: Sequence[Suite], *, timeout: float = PROBE_TIMEOUT, early: EarlyProbes | None = None
) -> Preflight:
    """Check every model server the suites name; a judge server that is down but cached lets the run go on.

    Its model is put behind ``CacheOnlyModel`` in place (inside the run's metering wrapper),
    so the run's judges read the cache and fail at once on a miss instead of retrying.
    ``early``: checks started while the suites loaded; their answers are taken, not asked again.
    """
    found = Preflight()
    owners: dict[int, list[Any]] = {}  # provider model -> the objects that hold it as ``.model``
    targets: list[tuple[ProbeTarget, Any]] = []
    for suite in suites:
        for target, model in _targets(suite):
            if model is not None:
                if id(model) not in owners:  # a model several suites share is checked once
                    owners[id(model)] = []
                    targets.append((target, model))
                owners[id(model)].extend(_holders(suite, model))
            else:
                targets.append((target, None))
    if not targets:
        return found
    failed = asyncio.run(probe_with([target for target, _ in targets], early, timeout=timeout))
    models = {id(target): model for target, model in targets}
    for target, problem in failed:
        model = models.get(id(target))
        entries = _cached_replies(model) if model is not None and not problem.startswith(_REFUSED) else 0
        if not entries:
            found.problems.append(f"{target.label}: {problem}")
            continue
        stand_in = CacheOnlyModel(model, problem, url=target.url)
        for holder in owners[id(model)]:
            holder.model = stand_in
        found.cache_only.append(stand_in)
        found.cached.append(entries)
    return found


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
    return [target for target, _ in _targets(suite)]


def _targets(suite: Suite) -> list[tuple[ProbeTarget, Any]]:
    """Each distinct model server with its provider model, then the agent's chat endpoint (no model)."""
    targets: list[tuple[ProbeTarget, Any]] = []
    seen: set[int] = set()
    for model in (_unwrapped(outer) for outer in _models(suite)):
        target_of = getattr(model, "probe_target", None)
        if not callable(target_of) or id(model) in seen:
            continue
        seen.add(id(model))
        target = target_of()
        if isinstance(target, ProbeTarget):
            name = getattr(model, "name", None) or type(model).__name__
            targets.append((replace(target, label=f"judge model {name}"), model))
    agent = _agent_target(suite.agent)
    if agent is not None:
        targets.append((agent, None))
    return targets


def _models(suite: Suite) -> Iterator[Any]:
    """The suite's models as its judges hold them (the run's metering wrapper around a provider model)."""
    if suite.model is not None:
        yield suite.model
    for case in suite.sample_cases:
        for built in case.llm_judges():
            for judge in _walk(built.judge):
                model = getattr(judge, "model", None)
                if model is not None and not isinstance(model, str):
                    yield model


def _holders(suite: Suite, provider: Any) -> list[Any]:
    """The wrappers whose ``.model`` is ``provider``: where a stand-in for it goes."""
    found: dict[int, Any] = {}
    for outer in _models(suite):
        item = outer
        for _ in range(4):
            inner = vars(item).get("model") if hasattr(item, "__dict__") else None
            if inner is provider:
                found[id(item)] = item
                break
            if inner is None or isinstance(inner, str):
                break
            item = inner
    return list(found.values())


def _cached_replies(model: Any) -> int:
    """Replies the model's response cache holds, when it reads the cache this run (0 when off or empty)."""
    if (
        os.environ.get(CACHE_MODE_ENV, "").strip().lower() in _CACHE_OFF
        or getattr(model, "cache_setting", False) is False
    ):
        return 0
    cache = getattr(model, "cache", None)
    try:
        return int(cache.stats().entries) if cache is not None and cache.exists() else 0
    except (ModelError, OSError, ValueError):  # a shared cache's server down too: nothing to stand in
        return 0


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
