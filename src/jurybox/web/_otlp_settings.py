"""What ``jurybox serve --otlp`` was told: the judges (a judges file's, or a stored suite's), the suite, the sampler."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from jurybox.traces import Sampler

MAX_OTLP_BODY_BYTES = 8 * 1024 * 1024
"""The largest ``/v1/traces`` body accepted (the Collector's default batch is far smaller)."""
MAX_QUEUED = 100_000
"""Queue rows the store may hold before the receiver answers 429."""
RETRY_AFTER_SECONDS = 10


@dataclass
class OtlpSettings:
    """Online evaluation.

    Attributes:
        judges: The judges every sampled trace gets (built: ``jurybox.suites.load_judges``); None: the
            stored suite ``suite``'s own (its judge model, limits and concurrency), loaded again when it changes.
        suite: The suite the results are recorded under, as one ``production`` run per day.
        routes: (sampler, suite) pairs, first match wins: a trace whose root a route's sampler matches goes
            to that stored suite, judged with its judges; a trace no route takes goes to ``suite``.
        sampler: Which traces are judged.
        redact: Applied to the spans' JSON before it is stored (the cassettes' redaction); None: none.
        max_body_bytes: A bigger body is answered 413.
        max_queued: Queue rows before the receiver answers 429 with Retry-After.
        settle_seconds: A trace is judged once its root came and nothing more for this long.
        poll_seconds: How often the worker looks for ready traces.
        concurrency: Traces judged at once.
        worker: Start the background worker with the app (False: call ``OtlpWorker.run_once`` yourself).
    """

    judges: Sequence[Any] | None = None
    suite: str = "production"
    routes: Sequence[tuple[Sampler, str]] = ()
    sampler: Sampler = field(default_factory=Sampler)
    redact: Callable[[str], str] | None = None
    max_body_bytes: int = MAX_OTLP_BODY_BYTES
    max_queued: int = MAX_QUEUED
    settle_seconds: float = 5.0
    poll_seconds: float = 1.0
    concurrency: int = 8
    worker: bool = True


class OtlpCounters:
    """What the receiver and the worker did, for ``/api/otlp`` and the server log."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()

    def add(self, name: str, count: int = 1) -> None:
        with self._lock:
            self._counts[name] += count

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counts)
