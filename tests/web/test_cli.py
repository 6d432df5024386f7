"""``jurybox serve``: its options, the message without the web extra, and the hint ``jurybox run`` prints last."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jurybox._cli.common import dashboard_hint
from jurybox._cli.serve import DEFAULT_PORT, EXIT_CANNOT_SERVE
from jurybox.cli import app
from jurybox.store import open_store


def test_serve_without_the_web_extra_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # as if it were not installed
    result = CliRunner().invoke(app, ["serve", "--store", "sqlite:///nowhere.db"])
    assert result.exit_code == 2
    assert "pip install 'jurybox[web]'" in result.output
    assert "Traceback" not in result.output


def _served(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, object]]:
    """What ``uvicorn.Server.run`` was asked to serve: the bound socket's address and the server's settings."""
    import uvicorn

    calls: list[dict[str, object]] = []

    def run(server: uvicorn.Server, sockets: list[socket.socket]) -> None:
        [listening] = sockets
        host, port = listening.getsockname()[:2]
        calls.append({"host": host, "port": port, "log_level": server.config.log_level})
        listening.close()

    monkeypatch.setattr(uvicorn.Server, "run", run)
    return calls


def test_serve_runs_uvicorn_on_loopback_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _served(monkeypatch)
    result = CliRunner().invoke(app, ["serve", "--store", "sqlite:///x.db", "--port", "0"])
    assert result.exit_code == 0, result.output
    [call] = calls
    assert call["host"] == "127.0.0.1" and call["log_level"] == "warning"
    # The address printed is the one bound (port 0: the free port the system chose).
    assert f"http://127.0.0.1:{call['port']}/" in result.output and "warning" not in result.output


def test_the_default_port_is_not_the_docs_stub_port() -> None:
    assert DEFAULT_PORT != 8765


def test_a_port_in_use_is_one_line_and_exit_2(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _served(monkeypatch)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(app, ["serve", "--store", "sqlite:///x.db", "--port", str(port)])
    assert result.exit_code == EXIT_CANNOT_SERVE == 2 and calls == []
    assert result.output.strip() == (
        f"error: port {port} on 127.0.0.1 is already in use (another jurybox serve?): choose another with "
        f"--port, e.g. --port {port + 1}, or --port 0 for any free one"
    )


def test_serving_beyond_loopback_needs_a_user_so_writes_need_a_login(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    calls = _served(monkeypatch)
    url = f"sqlite:///{tmp_path / 'store.db'}"
    refused = CliRunner().invoke(app, ["serve", "--host", "0.0.0.0", "--port", "0", "--store", url])
    assert refused.exit_code == 2 and calls == []
    assert "needs at least one user" in refused.output and "jurybox web add-user" in refused.output
    with open_store(url) as store:
        store.users.add_user("admin", "admin")
    served = CliRunner().invoke(app, ["serve", "--host", "0.0.0.0", "--port", "0", "--store", url])
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
