"""``jurybox serve``: its options, the message without the web extra, and the hint ``jurybox run`` prints last."""

from __future__ import annotations

import sys

import pytest
from typer.testing import CliRunner

from jurybox._cli.serve import dashboard_hint
from jurybox.cli import app


def test_serve_without_the_web_extra_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # as if it were not installed
    result = CliRunner().invoke(app, ["serve", "--store", "sqlite:///nowhere.db"])
    assert result.exit_code == 2
    assert "pip install 'jurybox[web]'" in result.output
    assert "Traceback" not in result.output


def test_serve_runs_uvicorn_on_loopback_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[dict[str, object]] = []
    import uvicorn

    monkeypatch.setattr(uvicorn, "run", lambda app, **kwargs: calls.append(kwargs))
    result = CliRunner().invoke(app, ["serve", "--store", "sqlite:///x.db", "--port", "8799"])
    assert result.exit_code == 0, result.output
    assert calls == [{"host": "127.0.0.1", "port": 8799, "log_level": "warning", "server_header": False}]
    assert "http://127.0.0.1:8799/" in result.output and "warning" not in result.output
    result = CliRunner().invoke(app, ["serve", "--host", "0.0.0.0"])
    assert "anyone who can reach this address can read the store" in result.output


def test_the_hint_quotes_the_store_url() -> None:
    assert dashboard_hint("sqlite:///my evals/j.db") == "jurybox serve --store 'sqlite:///my evals/j.db'"
    assert dashboard_hint(None) == "jurybox serve"
