"""Plug-ins from outside jurybox: a package registers a provider, an adapter, an executor, a report format
and a judge through the ``jurybox`` entry-point group, and ``jurybox run`` uses them all.

The package (``jurybox_sample_plugins``, next to this file) is installed the way pip
leaves a distribution: its modules and a ``.dist-info`` folder with ``entry_points.txt``
on a ``sys.path`` entry of a fresh process, so ``importlib.metadata`` finds it as it
finds any installed package. Nothing is registered by hand.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import jurybox
from jurybox.core import KIND_AGENT, KIND_REPORT, PluginRegistry
from jurybox.stubs import StubServer

HERE = Path(__file__).parent
SRC = Path(jurybox.__file__).resolve().parents[1]
DISTRIBUTION = "jurybox-sample-plugins"
ENTRY_POINTS = """\
[jurybox]
sample = jurybox_sample_plugins
broken = jurybox_sample_plugins.broken
"""
SUITE = """\
name: outside
agent: {echo: {prefix: "You said: "}}
judge_model: stubwire:judge-1
cases:
  - name: greets
    prompt: hello there
    reference: "You said: hello there"
    judges:
      - sample_mentions: hello
      - correctness
  - name: asks
    prompt: what time is it
    reference: "You said: what time is it"
    judges: [{sample_mentions: time}, correctness]
"""
VERDICT = json.dumps({"score": 0.95, "reasoning": "matches the reference", "issues": [], "strengths": ["right"]})


def install(site: Path, entry_points: str = ENTRY_POINTS) -> Path:
    """The sample package as pip installs it: its modules and a .dist-info naming its entry points."""
    site.mkdir(parents=True, exist_ok=True)
    shutil.copytree(HERE / "jurybox_sample_plugins", site / "jurybox_sample_plugins", dirs_exist_ok=True)
    shutil.copy(HERE / "jurybox_sample_registering.py", site)
    info = site / "jurybox_sample_plugins-1.0.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {DISTRIBUTION}\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(entry_points, encoding="utf-8")
    return site


@pytest.fixture
def jurybox_cli(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """``jurybox ARGS...`` in a fresh process where the sample distribution is installed."""
    site = install(tmp_path / "site")

    def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        paths = [str(site), str(SRC), os.environ.get("PYTHONPATH", "")]
        environment = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(p for p in paths if p),
            "JURYBOX_CACHE": "off",
            "JURYBOX_SAMPLE_BASE_URL": "http://127.0.0.1:9/v1",  # a server, so no key is needed (nothing is sent)
        }
        environment.pop("JURYBOX_JUDGE_MODEL", None)
        return subprocess.run(
            [sys.executable, "-m", "jurybox", *args],
            cwd=tmp_path,
            env={**environment, **(env or {})},
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )

    return run


def suite_file(tmp_path: Path, text: str = SUITE, name: str = "suite.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_one_run_uses_a_provider_an_adapter_an_executor_a_format_and_a_judge_from_outside(
    tmp_path: Path, jurybox_cli: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    log = tmp_path / "serial.log"
    with StubServer("openai", VERDICT) as stub:
        done = jurybox_cli(
            "run",
            str(suite_file(tmp_path)),
            "--executor",
            "serial",
            "--format",
            "csv",
            "--format",
            "json",
            "--output",
            str(tmp_path / "out"),
            "--no-store",
            env={"JURYBOX_SAMPLE_BASE_URL": stub.base_url, "JURYBOX_SAMPLE_LOG": str(log)},
        )
        requests = [(request.method, request.path, (request.body or {}).get("model")) for request in stub.requests]

    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    # The report format: the outside format's own content, named by its own extension.
    rows = (tmp_path / "out" / "outside.csv").read_text(encoding="utf-8").splitlines()
    assert rows[0] == "case,status,output"
    # The adapter: the echo agent answered every case.
    assert sorted(rows[1:]) == ["asks,pass,You said: what time is it", "greets,pass,You said: hello there"]
    # The executor: it ran each case, one at a time.
    assert sorted(log.read_text(encoding="utf-8").split()) == ["asks", "greets"]
    # The provider: its server answered the LLM judge, under the spec's model name.
    judged = [model for method, path, model in requests if method == "POST" and path.endswith("/chat/completions")]
    assert judged == ["judge-1", "judge-1"]
    report = json.loads((tmp_path / "out" / "outside.json").read_text(encoding="utf-8"))
    assert report["judge_model"] == "stubwire:judge-1"
    verdicts = {case["case"]: case["judgment"]["decided_by"] for case in report["cases"]}
    assert verdicts == {"greets": "llm_judge", "asks": "llm_judge"}  # the outside judge passed, the model decided


def test_jurybox_plugins_lists_each_kind_with_its_origin_and_the_broken_entry_point(
    jurybox_cli: Callable[..., subprocess.CompletedProcess[str]],
) -> None:
    done = jurybox_cli("plugins", "--json")

    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    by_name = {(kind, p["name"]): p for kind, members in data["kinds"].items() for p in members}
    outside = {key for key, p in by_name.items() if p["from"] == DISTRIBUTION}
    assert outside == {
        ("provider", "stubwire"),
        ("agent", "echo"),
        ("agent", "needs_sdk"),
        ("executor", "serial"),
        ("report", "csv"),
        ("judge", "sample_mentions"),
    }
    assert by_name[("provider", "openai")]["from"] == "jurybox" and by_name[("provider", "openai")]["lazy"]
    assert by_name[("provider", "stubwire")]["state"] == "lazy"  # its module is not imported to list it
    assert by_name[("executor", "serial")]["aliases"] == ["one_by_one"]
    assert by_name[("agent", "needs_sdk")]["state"] == (
        f"needs jurybox_sample_absent_sdk: pip install '{DISTRIBUTION}[sdk]'"
    )
    assert [p["name"] for p in data["kinds"]["exporter"]] == ["otlp"]  # jurybox's own, from jurybox.traces
    assert by_name[("exporter", "otlp")]["from"] == "jurybox"
    assert len(data["failed"]) == 1
    assert "broken = jurybox_sample_plugins.broken" in data["failed"][0]
    assert "RuntimeError: this sample plug-in is broken on purpose" in data["failed"][0]

    tables = jurybox_cli("plugins", env={"COLUMNS": "200"})
    assert tables.returncode == 0, tables.stderr
    assert "entry points that failed to load (1)" in tables.stdout and DISTRIBUTION in tables.stdout


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (("{echo:", "{ecko:"), "suite.yaml:2: agent: give exactly one of python, openai, http, mcp, echo, needs_sdk"),
        (("{echo:", "{ecko:"), "'ecko': did you mean 'echo'?"),
        (
            ("stubwire:judge-1", "stubwir:judge-1"),
            "suite.yaml:3: judge_model: cannot use judge model 'stubwir:judge-1': "
            "unknown model provider 'stubwir' (did you mean 'stubwire'?)",
        ),
        (
            ("- sample_mentions: hello", "- sample_mention: hello"),
            "suite.yaml:9: cases[0].judges[0]: unknown judge 'sample_mention' (did you mean 'sample_mentions'?)",
        ),
        (
            ('{echo: {prefix: "You said: "}}', "{needs_sdk: {}}"),
            "suite.yaml:2: agent.needs_sdk: the needs_sdk agent adapter needs jurybox_sample_absent_sdk, "
            f"which is not installed: pip install '{DISTRIBUTION}[sdk]'",
        ),
    ],
    ids=["adapter", "adapter-hint", "provider", "judge", "missing-dependency"],
)
def test_a_wrong_plugin_name_in_a_suite_is_a_file_line_field_error(
    tmp_path: Path,
    jurybox_cli: Callable[..., subprocess.CompletedProcess[str]],
    change: tuple[str, str],
    expected: str,
) -> None:
    suite = suite_file(tmp_path, SUITE.replace(*change))

    # Wide enough for the absolute path in one piece: 80 columns fold it mid-word under a longer temp root
    # (pytest-xdist's popen-gwN, a macOS $TMPDIR).
    done = jurybox_cli("run", str(suite), "--dry-run", env={"COLUMNS": "400"})

    assert done.returncode == 2, done.stdout + done.stderr
    message = " ".join(done.stderr.split())  # the console wraps long lines
    assert expected in message.replace(f"{suite.parent}/", ""), done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("option", "expected"),
    [
        (("--executor", "seriel"), "unknown executor 'seriel' (did you mean 'serial'?)"),
        (("--format", "cvs"), "unknown report format(s) 'cvs' (did you mean 'csv'?)"),
    ],
    ids=["executor", "format"],
)
def test_a_wrong_plugin_name_on_the_command_line_is_a_usage_error(
    tmp_path: Path,
    jurybox_cli: Callable[..., subprocess.CompletedProcess[str]],
    option: tuple[str, str],
    expected: str,
) -> None:
    done = jurybox_cli("run", str(suite_file(tmp_path)), *option, "--output", str(tmp_path / "out"), "--dry-run")

    assert done.returncode == 2, done.stdout + done.stderr
    assert expected in " ".join(done.stderr.replace("│", " ").split()), done.stderr
    assert "Traceback" not in done.stderr


def test_an_alias_names_the_same_executor(
    tmp_path: Path, jurybox_cli: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    log = tmp_path / "serial.log"
    suite = suite_file(tmp_path, SUITE.replace("judge_model: stubwire:judge-1\n", ""))

    done = jurybox_cli(
        "run", str(suite), "--executor", "one_by_one", "--no-store", env={"JURYBOX_SAMPLE_LOG": str(log)}
    )

    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(log.read_text(encoding="utf-8").split()) == ["asks", "greets"]


def test_discovery_calls_a_registering_function_and_keeps_what_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In this process, with a registry of its own: an entry point naming a function is called with it."""
    PluginRegistry.default().discover()  # the process-wide registry has read its entry points before this path exists
    site = install(
        tmp_path / "site",
        "[jurybox]\nlines = jurybox_sample_registering:register\nmissing = jurybox_no_such_module\n",
    )
    monkeypatch.syspath_prepend(str(site))
    registry = PluginRegistry(discover=True)

    plugin = registry.plugin(KIND_REPORT, "lines")  # a miss: discovery runs, the function registers it

    assert plugin.distribution == DISTRIBUTION and plugin.summary == "one line per case"
    assert [problem.split(" (")[0] for problem in registry.problems] == ["entry point missing = jurybox_no_such_module"]
    assert registry.get(KIND_AGENT, "echo") is None  # the module entry point was not in this distribution
    assert "jurybox_sample_plugins" not in sys.modules  # nothing of the package was imported here
    before: Any = registry.problems
    assert registry.discover() == before  # once per registry
