"""The judge server's check, started while the suite is still loading.

The check before a run (``preflight``) waits a round trip to each model server. A
suite's judge model is known as soon as its header is read, long before its cases are
built, so ``prepare`` starts that model's check then, in a thread of its own: the round
trip overlaps the rest of the load. ``preflight`` takes the answer for a server checked
early (the same URL and auth headers) and checks only the others.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Any

from jurybox.models import PROBE_TIMEOUT, ProbeTarget, probe_all, ready_to_probe

ProbeKey = tuple[str, tuple[tuple[str, str], ...]]


def probe_key(target: ProbeTarget) -> ProbeKey:
    """What makes two checks the same question: the URL asked and the auth sent (not the label)."""
    return (target.check_url, tuple(sorted(target.headers.items())))


class _Probe:
    """One server's check in a daemon thread; ``answer()`` waits for it."""

    def __init__(self, target: ProbeTarget, timeout: float) -> None:
        self._problem: str | None = None
        self._done = threading.Event()
        self._thread = threading.Thread(
            target=self._run, args=(target, timeout), name="jurybox-early-probe", daemon=True
        )
        self._thread.start()

    def _run(self, target: ProbeTarget, timeout: float) -> None:
        try:
            failed = asyncio.run(probe_all([target], timeout=timeout))
            self._problem = failed[0][1] if failed else None
        except Exception as error:  # an answer is owed either way: a check that broke is a problem line
            self._problem = f"the check failed: {type(error).__name__}: {error}"
        finally:
            self._done.set()

    def answer(self) -> str | None:
        self._done.wait()
        return self._problem


class EarlyProbes:
    """Checks of model servers started before ``preflight`` asks for them.

    Args:
        timeout: Seconds each check waits for its server (as ``preflight``'s).
    """

    def __init__(self, timeout: float = PROBE_TIMEOUT) -> None:
        self.timeout = timeout
        self._probes: dict[ProbeKey, _Probe] = {}

    def start(self, model: Any) -> None:
        """Start checking ``model``'s server (a run's metered judge model, or a provider model).

        A model without a server (FakeModel, a Python function) is left alone, as
        ``preflight`` leaves it; a server already being checked is not asked twice.
        """
        target = _target_of(model)
        if target is None:
            return
        key = probe_key(target)
        if key not in self._probes:
            ready_to_probe(target)  # here, not in the thread: the loading suite holds the GIL
            self._probes[key] = _Probe(target, self.timeout)

    def answered(self, target: ProbeTarget) -> tuple[bool, str | None]:
        """(True, problem or None) when ``target``'s server was checked early (waiting for it), else (False, None)."""
        probe = self._probes.get(probe_key(target))
        if probe is None:
            return False, None
        return True, probe.answer()


async def probe_with(
    targets: Sequence[ProbeTarget], early: EarlyProbes | None, *, timeout: float
) -> list[tuple[ProbeTarget, str]]:
    """``probe_all``, with the answers of checks started early taken as they are."""
    failed: list[tuple[ProbeTarget, str]] = []
    rest: list[ProbeTarget] = []
    seen: set[ProbeKey] = set()
    for target in targets:
        if probe_key(target) in seen:  # one line per server, as probe_all gives
            continue
        seen.add(probe_key(target))
        known, problem = early.answered(target) if early is not None else (False, None)
        if not known:
            rest.append(target)
        elif problem is not None:
            failed.append((target, problem))
    if rest:
        failed.extend(await probe_all(rest, timeout=timeout))
    return failed


def _target_of(model: Any) -> ProbeTarget | None:
    for _ in range(4):  # the provider model under the run's metering wrapper (kept as ``.model``)
        inner = vars(model).get("model") if hasattr(model, "__dict__") else None
        if inner is None or isinstance(inner, str):
            break
        model = inner
    target_of = getattr(model, "probe_target", None)
    target = target_of() if callable(target_of) else None
    return target if isinstance(target, ProbeTarget) else None
