"""Opening the store for the dashboard, and turning every way it can fail into a message for a person.

The dashboard must never show a stack trace: a store that does not exist yet,
one locked by another process, one written by a newer jurybox or a database
that is down each become a :class:`StoreUnavailableError` with words that say what
to do. The store is opened on the first request that needs it (so the server
starts even while the database is down) and reopened on a later request after
a failure.
"""

from __future__ import annotations

import threading
from pathlib import Path

from jurybox.store import (
    Store,
    StoreAccessError,
    StoreBrowser,
    StoreError,
    StoreVersionError,
    open_store,
    resolve_url,
    shown_url,
    store_file,
)

RETRY_SECONDS = 5
"""How soon a page that could not read the store tries again."""


class StoreUnavailableError(Exception):
    """The store cannot be read right now (or at all); ``message`` says why and what to do.

    Attributes:
        message: Plain words for the page.
        retry: True when trying again later may work (locked, not created yet, database down).
    """

    def __init__(self, message: str, *, retry: bool) -> None:
        super().__init__(message)
        self.message = message
        self.retry = retry


def explain_database_error(exc: StoreAccessError, url: str) -> StoreUnavailableError:
    """A database that did not answer, as words for the page (``database is locked``, connection refused...)."""
    if exc.locked:
        return StoreUnavailableError(
            f"The store {url} is locked by another process (a run or a migration is writing to it). "
            f"This page tries again in {RETRY_SECONDS} seconds.",
            retry=True,
        )
    return StoreUnavailableError(
        f"The store {url} cannot be read: {exc.reason}. This page tries again in {RETRY_SECONDS} seconds.", retry=True
    )


class StoreAccess:
    """The dashboard's one store, opened lazily and shared by every request (threads included)."""

    def __init__(self, url: str | None, *, busy_timeout: float = 5.0) -> None:
        self.url = resolve_url(url)
        self._busy_timeout = busy_timeout
        self._lock = threading.Lock()
        self._store: Store | None = None
        self._browser: StoreBrowser | None = None
        self.shown_url = shown_url(self.url)

    def _missing_file(self) -> Path | None:
        """The SQLite file the URL names when it does not exist (the dashboard never creates a store)."""
        path = store_file(self.url)
        return None if path is None or path.exists() else path

    def store(self) -> Store:
        """The open store.

        Raises:
            StoreUnavailableError: it cannot be opened now (with why and whether a retry may help).
        """
        with self._lock:
            if self._store is None:
                self._store = self._open()
                self._browser = StoreBrowser(self._store.engine)
            return self._store

    def browser(self) -> StoreBrowser:
        """The read-only query repository on the open store (see :meth:`store`)."""
        self.store()
        assert self._browser is not None
        return self._browser

    def _open(self) -> Store:
        missing = self._missing_file()
        if missing is not None:
            raise StoreUnavailableError(
                f"There is no store at {missing} yet. Run a suite to create it, e.g. "
                f"`jurybox run suite.yaml --store {self.shown_url}`; this page tries again in {RETRY_SECONDS} seconds.",
                retry=True,
            )
        try:
            # An older schema is migrated here, as every jurybox command does; a newer one is refused.
            return open_store(self.url, busy_timeout=self._busy_timeout)
        except StoreVersionError as exc:
            raise StoreUnavailableError(str(exc), retry=False) from exc
        except StoreAccessError as exc:  # locked or down: a later request may open it
            raise explain_database_error(exc, self.shown_url) from exc
        except StoreError as exc:
            raise StoreUnavailableError(f"The store cannot be opened: {exc}", retry=False) from exc
        except ImportError as exc:
            # e.g. a postgresql+psycopg:// URL without psycopg installed.
            raise StoreUnavailableError(
                f"The store {self.shown_url} needs a database driver that is not installed ({exc}); "
                "for PostgreSQL: pip install 'jurybox[postgres]'.",
                retry=False,
            ) from exc

    def close(self) -> None:
        with self._lock:
            if self._store is not None:
                self._store.close()
            self._store = None
            self._browser = None
