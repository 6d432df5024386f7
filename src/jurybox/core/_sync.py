"""Running a coroutine from sync code, whether or not an event loop is already running here."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(make: Callable[[], Coroutine[Any, Any, T]], *, thread_name: str) -> T:
    """Run a coroutine to its end and return its result (or raise its exception).

    Outside an event loop this is ``asyncio.run``. Inside one (a notebook, an async
    test) that loop cannot be re-entered, so the coroutine runs on a private loop in
    a helper thread while the caller waits.

    Args:
        make: Makes the coroutine; called once, in the thread that runs it.
        thread_name: The helper thread's name, as a thread dump shows it.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    box: list[T] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            box.append(asyncio.run(make()))
        except BaseException as exc:  # re-raised in the caller's thread below
            errors.append(exc)

    worker = threading.Thread(target=run, name=thread_name)
    worker.start()
    worker.join()
    if errors:
        raise errors[0]
    return box[0]
