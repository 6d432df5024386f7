"""Dashboard fixtures: one store per session (real example runs plus hostile records), a TestClient on it.

The browser fixtures (Playwright driving Debian's chromium) live in
``test_browser.py``; without chromium they skip locally and fail when CI=true.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from webkit import WebStore, build_store, load_store

from jurybox.web import create_app


@pytest.fixture(scope="session")
def web_store(tmp_path_factory: pytest.TempPathFactory) -> WebStore:
    """The session's store: two real runs of the example suite, a hostile suite with a lesson, a running run.

    ``JURYBOX_WEB_TEST_STORE=path/web.db`` reuses a store ``webkit.build_store`` made before (local iterations).
    """
    reuse = os.environ.get("JURYBOX_WEB_TEST_STORE")
    if reuse:
        return load_store(Path(reuse))
    return build_store(tmp_path_factory.mktemp("web-store"))


@pytest.fixture(scope="session")
def client(web_store: WebStore) -> Iterator[TestClient]:
    """A TestClient on the dashboard over ``web_store`` (server errors become 500 pages, as in production)."""
    with TestClient(create_app(web_store.url), raise_server_exceptions=False) as test_client:
        yield test_client
