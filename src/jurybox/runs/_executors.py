"""The executor fields of a run's ``RunOptions``: which registered executor, and its settings.

The engine finds the executor by name in the plug-in registry (and refuses an
unknown name with the closest one); this module only turns a request's
``executor`` and ``executor_options`` into what that executor is handed. The
built-in ones need to know how to load the suite and open the store elsewhere;
an executor a plug-in adds gets its options as its settings.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from jurybox.executors import RaySettings
from jurybox.runs._request import RunRequest
from jurybox.suites import Suite, load_suite

if TYPE_CHECKING:
    from jurybox.store import Store

STORE_BUSY_TIMEOUT = 30.0
"""Seconds a write waits for another process's lock on a SQLite store before it fails."""


def executor_fields(
    request: RunRequest, suite: Suite, load: Mapping[str, Any], concurrency: int, store: Store | None
) -> dict[str, Any]:
    """The ``RunOptions`` fields of the executor ``request`` names.

    ``processes`` without ``workers`` forks one worker per core (at least 2). A Ray actor
    loads the suite file itself with ``load`` (the run's ``load_suite`` keywords); on a
    PostgreSQL store it writes its cases itself, on SQLite the driver does (one writer).
    """
    workers = request.workers
    options = request.executor_options
    if request.executor == "local":
        return {"executor": "local", "workers": workers}
    if request.executor == "processes":
        return {
            "executor": "processes",
            "workers": workers if workers > 1 else max(2, min(os.cpu_count() or 2, concurrency)),
        }
    if request.executor == "ray":
        settings = RaySettings(
            address=options.get("address"),
            actors=options.get("actors"),
            load_suite=functools.partial(load_suite, suite.path.resolve(), **load),
            open_store=_actor_store(store),
        )
        return {"executor": "ray", "executor_settings": settings}
    return {"executor": request.executor, "workers": workers, "executor_settings": dict(options) or None}


def _actor_store(store: Store | None) -> Any:
    """How actors open the store to write to it themselves: only a server database takes many writers well."""
    if store is None or store.engine.dialect.name == "sqlite":
        return None
    # The real URL (password included) goes to the actors in their start-up arguments, like the driver's own.
    url = store.engine.url.render_as_string(hide_password=False)
    from jurybox.store import open_store

    return functools.partial(open_store, url, busy_timeout=STORE_BUSY_TIMEOUT)
