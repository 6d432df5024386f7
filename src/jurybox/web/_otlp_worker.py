"""The background worker of ``jurybox serve --otlp``: ready traces judged, results kept as production runs.

Each ready trace (its root came, then nothing for a while) is claimed, rebuilt from its
queued parts, filtered by the sampler, given to a suite (the first route whose filter its
root matches, else the default suite), turned into Contexts and judged in one cascade per
agent run with that suite's judges: a judges file's, or the stored suite's own (built as a
run of it builds them, and built again when the suite changes). The records go to the
suite's ``production`` run of the day (one run per suite and UTC day, so its trend sits
beside the CI runs'; a day's runs are finished on the worker's first round after it ends,
idle or not, and at start-up for days a stopped server left open), and only then is
the trace deleted from the queue. A worker killed between the two records the trace again
on its next claim, and the store keeps the first of each case: nothing is lost or counted
twice. A trace whose suite cannot be loaded stays queued and is tried again later.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from jurybox.core import CaseRecord, Context, run_sync
from jurybox.store import Store
from jurybox.traces import ReadStats, Span, ajudge_contexts, contexts_of_trace, span_from_dict
from jurybox.web._access import StoreAccess, StoreUnavailableError
from jurybox.web._otlp_settings import OtlpCounters, OtlpSettings
from jurybox.web._otlp_suite import SuiteJudges, SuiteJudgesError, load_suite_judges, stored_suite_data

logger = logging.getLogger("jurybox.web.otlp")
PRODUCTION = "production"
RELOAD_SECONDS = 30.0
"""How often a stored suite is read again, so judges edited in the dashboard apply to the next traces."""


class OtlpWorker:
    """Judges queued traces on a daemon thread until stopped."""

    def __init__(self, access: StoreAccess, settings: OtlpSettings, counters: OtlpCounters) -> None:
        self.access = access
        self.settings = settings
        self.counters = counters
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._runs: dict[tuple[str, str], str] = {}  # (suite, UTC day) -> its production run
        self._suites: dict[str, tuple[float, SuiteJudges]] = {}  # stored suite -> (read at, its judges)
        self._closed_through = ""  # the UTC day whose earlier production runs are all finished

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
        self._close_past_days(store)
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
        suite = self._suite_of(spans)
        try:
            judges, concurrency = self._judges_of(store, suite)
        except SuiteJudgesError as exc:  # left claimed: tried again once the claim lapses
            self.counters.add("waiting_for_suite")
            logger.warning("a trace waits for its suite: %s", exc)
            return 0
        stats = ReadStats()
        contexts = contexts_of_trace(spans, stats)
        if stats.skipped:
            self.counters.add("skipped_in_traces", stats.skipped_total)
        if contexts:
            records = run_sync(lambda: self._judge(contexts, judges, concurrency), thread_name="jurybox-otlp-judge")
            store.results.record_many(self._run_of_today(store, suite), records)
            self.counters.add("judged_agent_runs", len(records))
        store.trace_queue.done(trace_id)
        self.counters.add("judged_traces")
        return 1

    def _suite_of(self, spans: Sequence[Span]) -> str:
        """The first route whose filter the trace's root matches, else the default suite."""
        for sampler, suite in self.settings.routes:
            if sampler.matches(spans):
                return suite
        return self.settings.suite

    def _judges_of(self, store: Store, suite: str) -> tuple[Sequence[Any], int]:
        """The suite's judges and how many traces to judge at once: the judges file's, or the stored suite's."""
        if suite == self.settings.suite and self.settings.judges is not None:
            return self.settings.judges, self.settings.concurrency
        moment = time.monotonic()
        cached = self._suites.get(suite)
        if cached is None or moment - cached[0] >= RELOAD_SECONDS:
            data = stored_suite_data(store, suite)
            loaded = cached[1] if cached is not None and cached[1].source == data else None
            if loaded is None:
                loaded = load_suite_judges(store, suite, data=data)
                if loaded.left_out:
                    logger.warning(
                        "suite %r: no judge model, so its LLM judges are left out: %s",
                        suite,
                        ", ".join(loaded.left_out),
                    )
            self._suites[suite] = cached = (moment, loaded)
        found = cached[1]
        return found.judges, found.concurrency or self.settings.concurrency

    async def _judge(self, contexts: list[Context], judges: Sequence[Any], concurrency: int) -> list[CaseRecord]:
        return [record async for record in ajudge_contexts(contexts, judges, concurrency=concurrency)]

    def _run_of_today(self, store: Store, suite: str) -> str:
        day = datetime.now(UTC).date().isoformat()
        run_id = self._runs.get((suite, day))
        if run_id is None:
            run_id = _find_run(store, suite, day) or store.runs.begin(
                suite,
                cases={},
                config={"kind": PRODUCTION, "day": day, "source": "otlp", "judges": self._source(suite)},
            )
            for key in [key for key in self._runs if key[0] == suite]:
                del self._runs[key]
            self._runs[(suite, day)] = run_id
        return run_id

    def _close_past_days(self, store: Store) -> None:
        """Finish every suite's production runs of days that are over, once per UTC day.

        Without this a day's run stayed open until that suite's next trace, so a quiet suite
        (a weekend, a retired route) showed yesterday as still running and out of its trends.
        """
        today = datetime.now(UTC).date().isoformat()
        if self._closed_through == today:
            return
        for run in store.runs.newest(status="running", limit=500):
            config: Any = run.config or {}
            if config.get("kind") == PRODUCTION and str(config.get("day") or "") < today:
                store.finish_run(run.id)
        self._runs = {key: run_id for key, run_id in self._runs.items() if key[1] >= today}
        self._closed_through = today

    def _source(self, suite: str) -> str:
        """What the run's judges came from, for its config: ``judges file`` or ``stored suite``."""
        return "judges file" if suite == self.settings.suite and self.settings.judges is not None else "stored suite"


def _find_run(store: Store, suite: str, day: str) -> str | None:
    for run in store.runs.newest(suite, status="running", limit=20):
        config: Any = run.config or {}
        if config.get("kind") == PRODUCTION and config.get("day") == day:
            return run.id
    return None
