"""The store's errors, in a module of their own: a command can catch them without loading SQLAlchemy."""

from __future__ import annotations


class StoreError(RuntimeError):
    """The store cannot be used as asked (bad URL, unknown run, not a jurybox database...)."""


class StoreVersionError(StoreError):
    """The store was written by a newer jurybox whose schema this version does not know."""


class StoreAccessError(RuntimeError):
    """The database did not answer just now: locked by another process, down, or the connection was lost.

    Trying again later may work. Not a :class:`StoreError` (which says the request itself
    cannot be met: an unknown run, a bad URL), so a handler of those never mistakes a
    locked store for a missing run. The message names the store (password hidden) and
    the driver's own one-line reason, never the statement or what it was writing.

    Attributes:
        url: The store, password hidden.
        reason: The driver's reason (``database is locked``, ``connection refused``...).
        locked: Another process holds the lock the operation waited for.
    """

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"the store {url} cannot be used right now: {reason}")
        self.url = url
        self.reason = reason
        self.locked = "locked" in reason.lower() or "busy" in reason.lower()

    def __reduce__(self) -> tuple[type[StoreAccessError], tuple[str, str]]:
        # Rebuilt from what it was made of: one raised in a worker process or a Ray actor reaches the driver.
        return type(self), (self.url, self.reason)
