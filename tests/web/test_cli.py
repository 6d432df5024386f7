"""``jurybox serve``: its options, the message without the web extra, and the hint ``jurybox run`` prints last."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jurybox._cli.serve import dashboard_hint
from jurybox.cli import app
from jurybox.store import open_store


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


def test_serving_beyond_loopback_needs_a_user_so_writes_need_a_login(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    calls: list[dict[str, object]] = []
    import uvicorn

    monkeypatch.setattr(uvicorn, "run", lambda app, **kwargs: calls.append(kwargs))
    url = f"sqlite:///{tmp_path / 'store.db'}"
    refused = CliRunner().invoke(app, ["serve", "--host", "0.0.0.0", "--store", url])
    assert refused.exit_code == 2 and calls == []
    assert "needs at least one user" in refused.output and "jurybox web add-user" in refused.output
    with open_store(url) as store:
        store.users.add_user("admin", "admin")
    served = CliRunner().invoke(app, ["serve", "--host", "0.0.0.0", "--store", url])
    assert served.exit_code == 0, served.output
    # Beyond this machine every page needs a login unless said otherwise.
    assert "Every page needs a login (--read-login)" in served.output and "warning" not in served.output
    assert calls and calls[0]["host"] == "0.0.0.0"
    opened = CliRunner().invoke(app, ["serve", "--host", "0.0.0.0", "--store", url, "--no-read-login"])
    assert opened.exit_code == 0, opened.output
    assert "anyone who can reach this address can read the store; writes need a login" in opened.output.replace(
        "\n", " "
    )


def test_the_hint_quotes_the_store_url() -> None:
    assert dashboard_hint("sqlite:///my evals/j.db") == "jurybox serve --store 'sqlite:///my evals/j.db'"
    assert dashboard_hint(None) == "jurybox serve"
