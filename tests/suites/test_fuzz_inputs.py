"""Fuzz: random and mutated suites, seeds, configs and cassettes: success or an error naming the file, never a crash.

Every loader gets 2,000 examples (derandomized, so a failure reproduces) and
``jurybox run --dry-run`` gets the mutated suites through typer's CliRunner,
in-process. The only outcomes allowed are success, or the loader's own error
whose every problem names the file (and the line where there is one); the
command exits 0 or 2 and never prints a traceback.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from jurybox.cli import app
from jurybox.pytest_plugin import ConfigError, build_settings
from jurybox.pytest_plugin._lint import lint_file
from jurybox.suites import SuiteError, load_suite, parse_seed

EXAMPLES = 2000
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

SUITE = """\
name: fuzz
agent: {python: "toy:agent", kind: function}
database: "sqlite:///app.db"
concurrency: 4
defaults: {timeout: 5, retries: 0, threshold: 0.5}
metadata:
  shared: &judges [{contains: ok}]
cases:
  - name: first
    tags: [smoke]
    prompt: hello
    judges: *judges
  - name: second
    rounds:
      - prompt: one
        judges: [{regex: "o+"}]
      - prompt: two
        follow_ups: [more]
    timeout: 2
"""
SEED = """\
---
id: s1
type: fact
valence: 0.5
tags: [a, b]
---
The body of the seed.
"""
CONFIG = """\
[tool.jurybox]
model = "openai:gpt-4o-mini"
confidence = 0.6
fail_on_reject = false
cache = "auto"
similarity_threshold = 0.85

[tool.jurybox.cassettes]
redact_headers = ["X-Tenant"]
redact_fields = ["user_id"]
redact_patterns = ["ACME-[0-9]+"]
redact_pii = true
"""
CASSETTE = """\
interactions:
- request:
    body: '{"model": "m", "messages": [{"role": "user", "content": "hi"}]}'
    headers:
      authorization:
      - <REDACTED>
    method: POST
    uri: https://api.example.com/v1/chat/completions?key=<REDACTED>
  response:
    body: {string: !!binary "H4sIAAAAAAAA/6tWKkktLlGyUkrOz0nMS1HISM3JyVeozC9KAQAz2FUaGAAAAA=="}
    status: {code: 200, message: OK}
version: 1
"""
#: Pieces that YAML, TOML and the loaders find interesting.
TOKENS = [
    "true", "false", "~", "null", ".inf", "-.inf", ".nan", "-1", "0", "1e309", "99999999999999999999",
    "[", "]", "{", "}", ":", ": ", "- ", "&a ", "*a", "*judges", "<<: *judges\n", "!!binary ", "!!str ",
    "!!python/object:os.system ", "!!map ", "? ", "|", ">-", "'", '"', "\t", "\n", "\x00", "#", "---\n",
    "...\n", "%YAML 1.1\n", "\ufeff", "é", "= ", "[[", "]]", "inf", "nan", "\\u0000", "x" * 300,
]  # fmt: skip


def _mutate(base: str, seed: int) -> str:
    """``base`` after one to four insertions, deletions, replacements or duplications chosen by ``seed``."""
    # One drawn seed instead of a dozen drawn choices: hypothesis's cost per draw would dominate the run.
    chance = random.Random(seed)
    text = base
    for _ in range(chance.randint(1, 4)):
        start = chance.randint(0, len(text))
        end = min(len(text), start + chance.randint(0, 40))
        piece = (
            chance.choice(TOKENS) if chance.random() < 0.7 else "".join(map(chr, chance.sample(range(1, 0x3000), 3)))
        )
        kind = chance.choice(["insert", "delete", "replace", "duplicate"])
        if kind == "insert":
            text = text[:start] + piece + text[start:]
        elif kind == "delete":
            text = text[:start] + text[end:]
        elif kind == "replace":
            text = text[:start] + piece + text[end:]
        else:
            text = text[:end] + text[start:end] + text[end:]
    return text


def mutated(base: str) -> st.SearchStrategy[str]:
    return st.integers(0, 2**32 - 1).map(lambda seed: _mutate(base, seed))


def inputs(base: str) -> st.SearchStrategy[str]:
    return mutated(base) | st.text(max_size=200)


def assert_names_the_file(error: Exception, name: str) -> None:
    """Every problem the error lists starts with the file name; the message is never empty."""
    lines = [line.strip() for line in str(error).splitlines()]
    problems = lines[1:] if len(lines) > 1 and lines[0].endswith("problems:") else lines
    assert problems, error
    for problem in problems:
        assert problem.startswith(name), problem


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "toy.py").write_text("def agent(message, session_id):\n    return 'ok'\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("JURYBOX_JUDGE_MODEL", raising=False)
    return tmp_path


@FUZZ
@given(text=inputs(SUITE))
def test_suite_loader(folder: Path, text: str) -> None:
    path = folder / "suite.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        load_suite(path)
    except SuiteError as exc:
        assert_names_the_file(exc, str(path))


@FUZZ
@given(text=inputs(SEED))
def test_seed_loader(text: str) -> None:
    try:
        parse_seed(text, "seed.md")
    except SuiteError as exc:
        assert_names_the_file(exc, "seed.md")


@FUZZ
@given(text=inputs(CONFIG))
def test_config_loader(folder: Path, text: str) -> None:
    path = folder / "pyproject.toml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        build_settings(pyproject=path, environ={})
    except ConfigError as exc:
        assert_names_the_file(exc, str(path))


@FUZZ
@given(text=inputs(CASSETTE))
def test_cassette_lint(folder: Path, text: str) -> None:
    path = folder / "cassette.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        lint_file(path)
    except ValueError as exc:
        assert_names_the_file(exc, str(path))


@contextlib.contextmanager
def _no_pause() -> Iterator[None]:
    yield


@FUZZ
@given(text=mutated(SUITE))
def test_dry_run(folder: Path, fast_cli: None, text: str) -> None:
    (folder / "suite.yaml").write_text(text, encoding="utf-8", errors="surrogatepass")
    result = CliRunner().invoke(app, ["run", "suite.yaml", "--dry-run", "--no-store"])
    assert result.exit_code in (0, 2), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output
    if result.exit_code == 2:
        assert "suite.yaml" in result.output


@pytest.fixture
def fast_cli(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI built into a click command once, not per invocation, and without the run's pause of the
    garbage collector (a full collection after each run, for big suites): 2,000 runs then take seconds."""
    command = typer.main.get_command(app)
    monkeypatch.setattr("typer.testing._get_command", lambda _app: command)
    monkeypatch.setattr("jurybox.runs._prepared.paused_collector", _no_pause)
