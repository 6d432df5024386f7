"""The session's judge calls, counted for the summary: how many, how many the response cache answered.

Also where ``--jurybox-no-cache`` and ``--jurybox-refresh-cache`` take effect: they set the
cache switch every jurybox model reads (``JURYBOX_CACHE``) for the session, and put back
what was there after it.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

#: The environment variable every jurybox model reads for the cache switch (``jurybox.models.CACHE_MODE_ENV``).
CACHE_MODE_ENV = "JURYBOX_CACHE"


class SessionCalls:
    """A usage tracker active for the whole session, and the session's cache mode.

    Args:
        mode: ``"off"`` (no cache), ``"refresh"`` (ask again, overwrite) or None (the cache as configured).
    """

    def __init__(self, mode: str | None) -> None:
        self.mode = mode
        self._tracker: Any = None
        self._previous: str | None = None

    def start(self) -> None:
        """Set the cache mode and begin counting (imports ``jurybox.models``: only for a session that judges)."""
        from jurybox.models import UsageTracker

        if self.mode is not None:
            self._previous = os.environ.get(CACHE_MODE_ENV)
            os.environ[CACHE_MODE_ENV] = self.mode
        self._tracker = UsageTracker()
        self._tracker.__enter__()

    def stop(self) -> None:
        """Stop counting and put the cache switch back as it was."""
        if self._tracker is not None:
            # Entered in another context (a plugin switched it): the count is kept anyway.
            with contextlib.suppress(ValueError):
                self._tracker.__exit__(None, None, None)
        if self.mode is not None:
            if self._previous is None:
                os.environ.pop(CACHE_MODE_ENV, None)
            else:
                os.environ[CACHE_MODE_ENV] = self._previous

    def summary_lines(self, problem: str | None) -> list[str]:
        """``jurybox: 12 judge call(s), 12 from the response cache`` and what the server check found
        (``problem``: one line, ``judge server URL unreachable (...); N of M judge call(s) answered ...``)."""
        lines = []
        total = None if self._tracker is None else self._tracker.total
        if total is not None and total.calls:
            mode = {"off": " (cache off)", "refresh": " (cache refreshed)"}.get(self.mode or "", "")
            lines.append(f"jurybox: {total.calls} judge call(s), {total.cache_hits} from the response cache{mode}")
        if problem is not None:  # the session's one check found the server down
            lines.append(f"jurybox: {problem}")
        return lines
