"""Starting a run: the one way ``jurybox run``, ``jurybox run --suite`` and the dashboard put a run together.

``prepare(RunRequest(...))`` loads the suites (files, or suites kept in the
store), applies the judge model and the overrides, and plans the cases; the
``PreparedRun`` it returns opens the store, finds the runs to resume, builds
each run's options (concurrency and its fallback, filter, timeouts, retries,
lessons, the executor from the plug-in registry and its settings, the git
commit, branch and dirty flag of the suite's folder) and runs the suites.
Callers keep only their own words, threads and exit codes.
"""

from jurybox.runs._git import GitInfo, git_info
from jurybox.runs._preflight import Preflight, preflight, preflight_problems, preflight_targets
from jurybox.runs._prepared import PlannedSuite, PreparedRun, prepare
from jurybox.runs._request import RESUME_LAST, NoCasesError, RunRequest, RunRequestError
from jurybox.runs._resume import Notice
from jurybox.runs._stored import StoredSuiteFile, import_suite

__all__ = [
    "RESUME_LAST",
    "GitInfo",
    "NoCasesError",
    "Notice",
    "PlannedSuite",
    "Preflight",
    "PreparedRun",
    "RunRequest",
    "RunRequestError",
    "StoredSuiteFile",
    "git_info",
    "import_suite",
    "preflight",
    "preflight_problems",
    "preflight_targets",
    "prepare",
]
