"""`jurybox serve` freezes what start-up made out of the collector's sight; an app made for a test does not."""

from __future__ import annotations

import gc

from fastapi.testclient import TestClient
from webkit import WebStore

from jurybox.web import WebSettings, create_app


def test_a_served_app_freezes_start_up_and_a_plain_one_does_not(web_store: WebStore) -> None:
    gc.unfreeze()
    try:
        with TestClient(create_app(web_store.url)) as client:
            assert client.get("/runs").status_code == 200
            assert gc.get_freeze_count() == 0
        with TestClient(create_app(web_store.url, settings=WebSettings(freeze_startup=True))) as client:
            frozen = gc.get_freeze_count()
            assert client.get("/runs").status_code == 200
        assert frozen > 10_000  # the modules, the app and its templates: all of start-up
    finally:
        gc.unfreeze()
