"""``JURYBOX_CACHE=refresh``: every cached request is asked again and its reply written over the old one."""

from __future__ import annotations

from pathlib import Path

import pytest

from jurybox.models import CACHE_MODE_ENV, get_model
from jurybox.stubs import StubServer


async def _ask(url: str, cache: Path) -> tuple[str, bool]:
    model = get_model("openai:m", base_url=url, api_key="t", cache_path=cache)
    try:
        reply = await model.generate([{"role": "user", "content": "same question"}])
    finally:
        await model.aclose()
    return reply.text, reply.cached


async def test_refresh_asks_again_and_overwrites(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "responses.sqlite3"
    monkeypatch.delenv(CACHE_MODE_ENV, raising=False)
    with StubServer("openai", reply="first") as stub:
        assert await _ask(stub.base_url, cache) == ("first", False)
        assert await _ask(stub.base_url, cache) == ("first", True)
        stub.state.reply = "second"
        monkeypatch.setenv(CACHE_MODE_ENV, "refresh")
        assert await _ask(stub.base_url, cache) == ("second", False)  # asked again, not read
        monkeypatch.delenv(CACHE_MODE_ENV)
        assert await _ask(stub.base_url, cache) == ("second", True)  # the refreshed reply was kept
        monkeypatch.setenv(CACHE_MODE_ENV, "off")
        stub.state.reply = "third"
        assert await _ask(stub.base_url, cache) == ("third", False)
        monkeypatch.delenv(CACHE_MODE_ENV)
        assert await _ask(stub.base_url, cache) == ("second", True)  # off wrote nothing
        assert sum(1 for r in stub.requests if r.method == "POST") == 3
