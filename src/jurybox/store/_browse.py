"""Read-only queries for browsing a store: pages of runs and cases, one case, comparisons and trends.

The dashboard (``jurybox serve``) reads through :class:`StoreBrowser`. Every
query is bounded: lists come a page at a time (``LIMIT``/``OFFSET`` on the
server), a case is read by its unique ``(run_id, case_name)`` key, and nothing
reads a whole run's verdict trees.

``StoreBrowser`` holds no SQL, as :class:`~jurybox.store.Store` holds none: it
builds the parts that each do one job, on one engine, and you call them directly:

- ``browser.suites`` (``_cases.py``, the store's ``SuiteRepository``): ``names()``.
- ``browser.runs`` (``_browse_runs.py``, ``RunBrowser``): ``page(...)`` of runs newest first,
  filtered; ``find(run_id)``; ``previous(run)``.
- ``browser.stats`` (``_browse_stats.py``, ``StatsBrowser``): ``of(run)``, a run's pass rates overall,
  per tier and per judge, its latency and tags; ``check(run, policy)``, the gate's verdict on it.
- ``browser.cases`` (``_browse_cases.py``, ``CaseBrowser``): ``page(run, query)`` of a run's cases,
  filtered and sorted; ``record``, ``definition``, ``neighbours`` of one case; ``in_runs``, its
  status in the suite's recent runs.
- ``browser.comparisons`` (``_browse_compare.py``, ``CompareBrowser``): ``compare(a, b)``, run A
  against run B, and ``cases(comparison, kind)``, a page of one kind of change.
- ``browser.trends`` (``_browse_trends.py``, ``TrendBrowser``): ``points(suite, ...)``, a suite's trend
  with baselines and gate states; ``case_history(suite)``, each case's status per run.
- ``_browse_models.py``: what they return (``Paged``, ``RunStats``, ``CaseRow``, ...).
- ``_browse_cache.py``, ``LruCache``: the aggregates of final runs, kept until a run is resumed.
"""

from __future__ import annotations

from sqlalchemy.engine import Engine

from jurybox.store._browse_cases import CaseBrowser
from jurybox.store._browse_compare import CompareBrowser
from jurybox.store._browse_runs import RunBrowser
from jurybox.store._browse_stats import StatsBrowser
from jurybox.store._browse_trends import TrendBrowser
from jurybox.store._cases import SuiteRepository


class StoreBrowser:
    """Read-only, paginated queries over a store's runs, for the dashboard and scripts.

    Build it on an open store's engine: ``StoreBrowser(store.engine)``, then call its
    parts: ``browser.runs.page(suite="refunds")``, ``browser.stats.of(run)``,
    ``browser.cases.page(run, CaseQuery(status="fail"))``... It never writes, and it
    is safe to share between threads.

    Args:
        engine: The open store's engine.
        cache_size: Final runs whose stats are kept in memory.
        comparison_cache: Comparisons kept in memory (each holds both runs' case names).
    """

    def __init__(self, engine: Engine, *, cache_size: int = 4096, comparison_cache: int = 8) -> None:
        self.suites = SuiteRepository(engine)
        """The store's suites (``names()``, sorted)."""
        self.runs = RunBrowser(engine)
        """Runs a page at a time (``page``), one run (``find``) and the one before it (``previous``)."""
        self.stats = StatsBrowser(engine, cache_size=cache_size)
        """A run's pass rates, scores, latency and tags (``of``), and the gate's verdict on it (``check``)."""
        self.cases = CaseBrowser(engine)
        """A run's cases a page at a time (``page``) and one case whole (``record``, ``definition``...)."""
        self.comparisons = CompareBrowser(engine, cache_size=comparison_cache, stats=self.stats)
        """Run A against run B (``compare``) and a page of one kind of change (``cases``)."""
        self.trends = TrendBrowser(engine, self.stats)
        """A suite's trend (``points``) and each case's status over its recent runs (``case_history``)."""
