"""Executors: where a run's cases run. Each is a plug-in of kind ``executor`` in the registry.

- ``local``: tasks of this process's event loop (the default);
- ``processes``: ``--workers N`` forked processes, each writing its own records;
- ``ray``: long-lived actors on a Ray cluster (``pip install 'jurybox[ray]'``;
  Ray is imported only when a run uses it).

Importing this package registers the three; the engine finds them by name
(``RunOptions(executor="ray", executor_settings=RaySettings(...))``), as it
finds an executor an outside package registers through the ``jurybox`` entry
points. Each implements ``jurybox.engine.ExecutorPlugin``.
"""

from jurybox.executors._local import LocalExecutor, LocalPlugin
from jurybox.executors._processes import ProcessesPlugin, ProcessExecutor
from jurybox.executors._ray_setup import RAY_EXTRA_MISSING, ExecutorError, RayPlugin, RaySettings
from jurybox.executors._workers import fork_available

__all__ = [
    "RAY_EXTRA_MISSING",
    "ExecutorError",
    "LocalExecutor",
    "LocalPlugin",
    "ProcessExecutor",
    "ProcessesPlugin",
    "RayPlugin",
    "RaySettings",
    "fork_available",
]
