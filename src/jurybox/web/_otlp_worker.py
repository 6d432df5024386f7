"""The background worker of ``jurybox serve --otlp``: ready traces judged, results kept as production runs.

Each ready trace (its root came, then nothing for a while) is claimed, rebuilt from its
queued parts, filtered by the sampler, turned into Contexts and judged in one cascade per
agent run; the records go to the suite's ``production`` run of the day (one run per suite
and UTC day, so its trend sits beside the CI runs'), and only then is the trace deleted
from the queue. A worker killed between the two records the trace again on its next
claim, and the store keeps the first of each case: nothing is lost or counted twice.
"""

from __future__ import annotations

import json
import logging
import threading
from datetime import UTC, datetime, timedelta
from typing import Any

from jurybox.core import CaseRecord, Context, run_sync
from jurybox.store import Store
from jurybox.traces import ReadStats, ajudge_contexts, contexts_of_trace, span_from_dict
from jurybox.web._access import StoreAccess, StoreUnavailableError
from jurybox.web._otlp_settings import OtlpCounters, OtlpSettings

logger = logging.getLogger("jurybox.web.otlp")
PRODUCTION = "production"


class OtlpWorker:
    """Judges queued traces on a daemon thread until stopped."""

    def __init__(self, access: StoreAccess, settings: OtlpSettings, counters: OtlpCounters) -> None:
        self.access = access
        self.settings = settings
        self.counters = counters
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._runs: dict[str, str] = {}  # UTC day -> its production run

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="jurybox-otlp-worker", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                judged = self.run_once()
            except StoreUnavailableError as exc:  # not created yet, locked, down: the next round tries again
                logger.warning("online evaluation waits for the store: %s", exc.message)
                judged = 0
            except Exception:  # the store is down or a judge raised: say so and try again next round
                logger.exception("judging queued traces failed")
                judged = 0
            if not judged:
                self._stop.wait(self.settings.poll_seconds)

    def run_once(self, *, limit: int = 50) -> int:
        """Judge the traces ready now (at most ``limit``); how many were judged."""
        store = self.access.store()
        settle = timedelta(seconds=self.settings.settle_seconds)
        judged = 0
        for trace_id in store.trace_queue.ready(settle=settle, limit=limit):
            if self._stop.is_set():
                break
            judged += self._judge_trace(store, trace_id)
        return judged

    def _judge_trace(self, store: Store, trace_id: str) -> int:
        parts = store.trace_queue.claim(trace_id)
        if not parts:
            return 0  # another worker has it
        try:
            spans = [span_from_dict(data) for part in parts for data in json.loads(part)]
        except (ValueError, TypeError, KeyError):
            self.counters.add("unreadable_queued_traces")
            store.trace_queue.done(trace_id)
            return 0
        if not self.settings.sampler.matches(spans):
            self.counters.add("filtered_out")
            store.trace_queue.done(trace_id)
            return 0
        stats = ReadStats()
        contexts = contexts_of_trace(spans, stats)
        if stats.skipped:
            self.counters.add("skipped_in_traces", stats.skipped_total)
        if contexts:
            records = run_sync(lambda: self._judge(contexts), thread_name="jurybox-otlp-judge")
            store.results.record_many(self._run_of_today(store), records)
            self.counters.add("judged_agent_runs", len(records))
        store.trace_queue.done(trace_id)
        self.counters.add("judged_traces")
        return 1

    async def _judge(self, contexts: list[Context]) -> list[CaseRecord]:
        judges = self.settings.judges
        return [record async for record in ajudge_contexts(contexts, judges, concurrency=self.settings.concurrency)]

    def _run_of_today(self, store: Store) -> str:
        day = datetime.now(UTC).date().isoformat()
        run_id = self._runs.get(day)
        if run_id is None:
            run_id = _find_run(store, self.settings.suite, day) or store.runs.begin(
                self.settings.suite, cases={}, config={"kind": PRODUCTION, "day": day, "source": "otlp"}
            )
            for earlier_day, earlier in list(self._runs.items()):  # yesterday's run is complete now
                store.finish_run(earlier)
                del self._runs[earlier_day]
            self._runs[day] = run_id
        return run_id


def _find_run(store: Store, suite: str, day: str) -> str | None:
    for run in store.runs.newest(suite, status="running", limit=20):
        config: Any = run.config or {}
        if config.get("kind") == PRODUCTION and config.get("day") == day:
            return run.id
    return None
