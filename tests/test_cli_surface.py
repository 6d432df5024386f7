"""The ``jurybox`` command as a whole: clean ``--help`` pages, and no need for pytest to run it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import click
import typer
from typer.testing import CliRunner

from jurybox.cli import app


def command_paths(command: click.Command, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    paths = [prefix]
    # Typer's group is not a click.Group subclass; both keep their sub-commands in ``commands``.
    for name, sub in getattr(command, "commands", {}).items():
        paths.extend(command_paths(sub, (*prefix, name)))
    return paths


def test_no_help_page_shows_a_type_after_a_flag() -> None:
    paths = command_paths(typer.main.get_command(app))
    assert ("run",) in paths and ("report",) in paths and ("runs",) in paths
    for path in paths:
        result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "100"})
        assert result.exit_code == 0, (path, result.output)
        assert "<bool>" not in result.output, (path, result.output)
    # Options that take a value still say what they take.
    run_help = CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "100"}).output
    assert "--output" in run_help and "PATH" in run_help  # run's values are named (run_help.py)


#: pytest, its own modules and plugins, and the ``py`` shim it ships: what a venv without pytest lacks.
PYTEST_PARTS = re.compile(r"^(_?pytest|py)([-_.].*)?$", re.IGNORECASE)


def site_without_pytest(tmp_path: Path) -> Path:
    """This venv's site-packages as symlinks, pytest left out: a venv where only jurybox is installed."""
    site = Path(next(path for path in sys.path if path.endswith("site-packages")))
    farm = tmp_path / "site"
    farm.mkdir()
    for entry in site.iterdir():
        if not PYTEST_PARTS.match(entry.name):
            (farm / entry.name).symlink_to(entry)
    return farm


def test_the_command_works_where_pytest_is_not_installed(tmp_path: Path) -> None:
    """pytest is not a dependency: `jurybox` (lint-cassettes included) must not need it."""
    farm = site_without_pytest(tmp_path)
    empty = tmp_path / "cassettes"
    empty.mkdir()
    src = Path(__file__).resolve().parents[1] / "src"
    code = "import sys; sys.argv = ['jurybox', *sys.argv[1:]]; from jurybox.cli import main; main()"
    done = subprocess.run(
        [sys.executable, "-S", "-c", code, "lint-cassettes", str(empty)],
        env={"PYTHONPATH": f"{src}{os.pathsep}{farm}", "PATH": os.environ.get("PATH", "")},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "no secrets found in 0 cassette file(s)\n"
