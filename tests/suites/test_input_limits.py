"""Hostile input files are refused quickly, in bounded memory, naming file and line; bad values before anything runs."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jurybox.cli import app
from jurybox.inputs import InputError, read_yaml
from jurybox.pytest_plugin import CassetteSettings, use_cassette
from jurybox.pytest_plugin._lint import lint_file
from jurybox.store._suitefile import SuiteFileError, read_suite_file
from jurybox.suites import SuiteError, load_seed, load_suite

LAUGHS = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]\n" for prev, name in zip("abcdefgh", "bcdefghi", strict=True)
)
HEADER = "name: s\nagent: {python: toy:agent, kind: function}\n"
CASES = "cases:\n  - name: a\n    prompt: hi\n    judges: [{contains: ok}]\n"


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "toy.py").write_text("def agent(message, session_id):\n    return 'ok'\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("JURYBOX_JUDGE_MODEL", raising=False)
    return tmp_path


def test_the_billion_laughs_is_about_one_kilobyte() -> None:
    assert len(LAUGHS) < 1100


def test_a_billion_laughs_suite_is_refused_fast_naming_file_and_line(folder: Path) -> None:
    path = folder / "bomb.yaml"
    path.write_text(LAUGHS + HEADER + CASES, encoding="utf-8")
    started = time.perf_counter()
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    assert time.perf_counter() - started < 1.0
    message = str(caught.value)
    assert "bomb.yaml:" in message and "aliases expand it" in message
    assert len(message.splitlines()) == 1


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the peak RSS from /proc")
def test_a_billion_laughs_stays_under_100_mb_resident(folder: Path) -> None:
    (folder / "bomb.yaml").write_text(LAUGHS + HEADER + CASES, encoding="utf-8")
    # VmHWM is the process's own peak (ru_maxrss would carry pytest's, inherited across fork and exec).
    script = (
        "import re, time\n"
        "from jurybox.suites import SuiteError, load_suite\n"
        "started = time.perf_counter()\n"
        "try:\n    load_suite('bomb.yaml')\nexcept SuiteError as exc:\n    print(exc)\n"
        "peak = re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1)\n"
        "print(time.perf_counter() - started, peak)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    error, figures = done.stdout.strip().splitlines()
    seconds, peak_kb = (float(x) for x in figures.split())
    assert "refused" in error
    assert seconds < 1.0
    assert peak_kb < 100 * 1024  # the whole process, interpreter and imports included


def test_a_billion_laughs_in_seed_front_matter_is_refused(folder: Path) -> None:
    seed = folder / "seed.md"
    seed.write_text("---\n" + LAUGHS + "id: s1\ntype: fact\n---\nbody\n", encoding="utf-8")
    with pytest.raises(SuiteError, match=r"seed\.md:\d+: .*aliases expand it"):
        load_seed(seed)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("x: " + "[" * 150 + "]" * 150 + "\n", "nested deeper than 100"),
        ("x: &x [*x]\n", "refers to a value that contains it"),
        # A collection as a key, which the line walk skips: measured all the same.
        ("x: {? " + "[" * 150 + "]" * 150 + " : 1}\n", "nested deeper than"),
        (
            "x:\n" + "".join("  " * depth + f"k{depth}:\n" for depth in range(1, 120)) + "  " * 120 + "v: 1\n",
            "nested deeper than 100",
        ),
    ],
)
def test_deep_and_recursive_documents_are_refused(folder: Path, text: str, reason: str) -> None:
    path = folder / "odd.yaml"
    path.write_text(HEADER + text + CASES, encoding="utf-8")
    with pytest.raises(SuiteError, match=rf"odd\.yaml:\d+: .*{reason}"):
        load_suite(path)


def test_an_oversized_suite_is_refused_before_parsing(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("jurybox.suites._yaml.MAX_INPUT_BYTES", 100)
    path = folder / "big.yaml"
    path.write_text(HEADER + CASES, encoding="utf-8")
    with pytest.raises(SuiteError, match=r"big\.yaml: .*input limit"):
        load_suite(path)


def test_modest_aliases_still_load(folder: Path) -> None:
    path = folder / "ok.yaml"
    shared = "metadata:\n  shared: &judges [{contains: ok}]\ncases:\n"
    cases = "".join(f"  - name: c{i}\n    prompt: hi\n    judges: *judges\n" for i in range(50))
    path.write_text(HEADER + shared + cases, encoding="utf-8")
    assert len(load_suite(path).cases) == 50


def test_the_alias_check_refuses_at_the_first_alias_too_many() -> None:
    # Was a test of core.tree_limit_breach over composed nodes; read_yaml now counts aliases as they come.
    with pytest.raises(InputError) as caught:
        read_yaml(LAUGHS, "laughs.yaml")
    assert caught.value.line is not None and caught.value.line < 8
    assert "aliases expand it" in caught.value.problem


def test_a_billion_laughs_cassette_is_refused_by_lint_and_replay(tmp_path: Path) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(LAUGHS + "interactions: []\nversion: 1\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bomb\.yaml:\d+: refused"):
        lint_file(path)
    with (
        pytest.raises(ValueError, match=r"bomb\.yaml:\d+: refused"),
        use_cassette(path, record_mode="none", settings=CassetteSettings()),
    ):
        pass


def test_a_billion_laughs_suite_is_refused_by_the_store_import(tmp_path: Path) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(LAUGHS + HEADER + CASES, encoding="utf-8")
    with pytest.raises(SuiteFileError, match=r"bomb\.yaml:\d+: refused"):
        read_suite_file(path)


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ("concurrency: true", "concurrency"),
        ("concurrency: 1000000000", "concurrency"),
        ("judge_model: 42", "judge_model"),
        ('database: "not a url"', "database"),
        ("defaults: {timeout: .inf}", "defaults.timeout"),
        ("defaults: {timeout: .nan}", "defaults.timeout"),
        ("defaults: {retries: true}", "defaults.retries"),
        ("defaults: {threshold: true}", "defaults.threshold"),
        ("defaults: {max_follow_ups: 1000000}", "defaults.max_follow_ups"),
    ],
)
def test_bad_values_are_usage_errors_of_a_dry_run(folder: Path, line: str, field: str) -> None:
    (folder / "s.yaml").write_text(HEADER + line + "\n" + CASES, encoding="utf-8")
    result = CliRunner().invoke(app, ["run", "s.yaml", "--dry-run", "--no-store"])
    assert result.exit_code == 2, result.output
    assert f"s.yaml:3: {field}:" in " ".join(result.output.split())
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    "option", [["--concurrency", "1000000000"], ["--timeout", "inf"], ["--retries", "99"], ["--workers", "100000"]]
)
def test_bad_options_are_usage_errors(folder: Path, option: list[str]) -> None:
    (folder / "s.yaml").write_text(HEADER + CASES, encoding="utf-8")
    result = CliRunner().invoke(app, ["run", "s.yaml", "--dry-run", "--no-store", *option])
    assert result.exit_code == 2
    assert option[0] in result.output


def test_good_values_still_dry_run(folder: Path) -> None:
    settings = json.dumps({"timeout": 30, "retries": 2, "threshold": 0.7})
    (folder / "s.yaml").write_text(
        HEADER + f"concurrency: 4\ndatabase: sqlite:///app.db\ndefaults: {settings}\n" + CASES, encoding="utf-8"
    )
    result = CliRunner().invoke(app, ["run", "s.yaml", "--dry-run", "--no-store"])
    assert result.exit_code == 0, result.output
