"""The run engine: a suite's cases run against its agent, judged, and written as each one finishes.

``SuiteRunner(suite, options).run()`` opens a run (or resumes one) in a store,
hands the cases to an executor (found by name in the plug-in registry: see
``jurybox.executors``), judges each with its cascade and writes its record in
batches on one thread. ``RunOptions`` says how; ``RunResult`` is what came of it.
The engine states what it needs from a store (``RunStore``: its ``runs`` and
``results``, and ``finish_run``) and a progress display (``ProgressSink``) as
protocols, so it imports neither.
"""

from jurybox.engine._execute import CaseExecutor
from jurybox.engine._executor import (
    CaseDone,
    Executor,
    ExecutorPlugin,
    ExecutorSummary,
    StreamedResults,
    TakeResult,
    WorkerPlacement,
)
from jurybox.engine._resume import resumable_cases
from jurybox.engine._runner import (
    DEFAULT_CONCURRENCY,
    ProgressSink,
    RecordTally,
    RunOptions,
    RunResult,
    SuiteRunner,
)
from jurybox.engine._sql import SqlPort
from jurybox.engine._store_port import RecordSink, ResultLog, RunLog, RunStore
from jurybox.engine._verdict import LLM_SKIP_REASON, LLM_SKIPPED, llm_was_skipped
from jurybox.engine._writer import BatchedWriter, StoreThread

__all__ = [
    "DEFAULT_CONCURRENCY",
    "LLM_SKIPPED",
    "LLM_SKIP_REASON",
    "BatchedWriter",
    "CaseDone",
    "CaseExecutor",
    "Executor",
    "ExecutorPlugin",
    "ExecutorSummary",
    "ProgressSink",
    "RecordSink",
    "RecordTally",
    "ResultLog",
    "RunLog",
    "RunOptions",
    "RunResult",
    "RunStore",
    "SqlPort",
    "StoreThread",
    "StreamedResults",
    "SuiteRunner",
    "TakeResult",
    "WorkerPlacement",
    "llm_was_skipped",
    "resumable_cases",
]
