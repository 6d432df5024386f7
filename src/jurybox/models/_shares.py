"""Connection shares: the part of each model's concurrency limit one worker process may use.

``jurybox run --workers N`` forks N processes that all talk to the same judge
servers. Each model's ``concurrency`` is the limit for the whole run, so each
worker may use only its share; the shares add up to the limit, and the TCP
connections all workers open together stay within it, as in a one-process run.
The share is a setting of the process, not of a model, so it covers every
model: those built before the fork, those built afterwards, and those the
run never saw by name (a model object handed to a judge, the default model).
"""

from __future__ import annotations

_share = (0, 1)
"""This process is worker ``_share[0]`` of ``_share[1]``; (0, 1) is a process on its own."""


def split_evenly(total: int, parts: int) -> list[int]:
    """``total`` in ``parts`` near-equal whole shares that add up to it exactly (the larger ones first)."""
    return [total // parts + (1 if index < total % parts else 0) for index in range(parts)]


def use_connection_share(index: int, count: int) -> None:
    """Make this process worker ``index`` of ``count``: every model uses its share of its limit.

    Call it once in each worker, right after the fork and before the worker's first model
    call. It applies to the HTTP pool and concurrency limiter a model sets up for each new
    event loop, so a loop a model already made calls in keeps the limit it started with.
    ``use_connection_share(0, 1)`` gives the process the whole limit again.

    Raises:
        ValueError: ``count`` is below 1 or ``index`` is not in ``range(count)``.
    """
    global _share  # noqa: PLW0603 - a setting of the whole process, like the default judge model
    if count < 1 or not 0 <= index < count:
        raise ValueError(f"a connection share is worker index 0..count-1 of count >= 1, got {index} of {count}")
    _share = (index, count)


def connection_share(limit: int) -> int:
    """This process's part of a limit of ``limit`` calls in flight: at least 1, all of it without workers.

    A limit below the worker count still gives every worker one connection, so no worker stalls.
    """
    index, count = _share
    return max(1, split_evenly(limit, count)[index])
