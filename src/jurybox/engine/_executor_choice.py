"""Which executor runs a run's cases: ``RunOptions.executor`` looked up in the plug-in registry.

The engine names executors and never imports them: ``jurybox.executors``
registers the built-in ones (local, processes, ray) and an outside package may
add its own through the ``jurybox`` entry points. An executor whose optional
dependency is missing (Ray) fails with the extra to install when a run asks
for it, and costs nothing otherwise.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from jurybox.core import KIND_EXECUTOR, PluginError, PluginRegistry

if TYPE_CHECKING:
    from jurybox.engine._executor import Executor, ExecutorPlugin
    from jurybox.engine._runner import RunOptions, SuiteRunner

LOCAL = "local"
"""The executor of a run that names none: tasks in this process."""
PROCESSES = "processes"
"""What ``local`` becomes with ``workers`` > 1: that many forked processes."""


def executor_name(options: RunOptions) -> str:
    """The executor a run uses: the one it names (``local`` with ``workers`` > 1 forks processes)."""
    if options.executor == LOCAL and options.workers > 1:
        return PROCESSES
    return options.executor


def executor_plugin(name: str) -> ExecutorPlugin:
    """The registered executor ``name``.

    Raises:
        ValueError: no such executor (with the closest name), or it cannot be imported here (with the extra).
    """
    try:
        return cast("ExecutorPlugin", PluginRegistry.default().load(KIND_EXECUTOR, name))
    except PluginError as error:
        raise ValueError(str(error)) from None


def check_executor_options(options: RunOptions) -> None:
    """Refuse an executor no plug-in provides, or options it cannot take (``RunOptions`` checks this when made).

    Raises:
        ValueError: the closest known name, or the executor's reason.
    """
    executor_plugin(executor_name(options)).check_options(options)


def check_executor(options: RunOptions, *, has_store: bool, own_target: bool) -> None:
    """Refuse, before a run is opened, an executor that cannot run this suite here.

    Raises:
        ValueError: the reason, worded for the command line.
    """
    executor_plugin(executor_name(options)).check(options, has_store=has_store, own_target=own_target)


def choose_executor(runner: SuiteRunner, todo: int) -> Executor:
    """The executor for ``todo`` cases of ``runner``'s run."""
    return executor_plugin(executor_name(runner.options)).create(runner, todo)
