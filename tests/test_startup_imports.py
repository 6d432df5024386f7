"""``jurybox run`` imports only what the suite uses (issue 36): no provider SDK, numpy, httpx or other commands.

Each test runs the command in a fresh interpreter and lists the modules it ended with.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import typer

from jurybox.cli import FEATURES, build_app
from jurybox.stubs import StubServer

VERDICT = json.dumps({"score": 1.0, "reasoning": "matches", "issues": [], "strengths": []})

# Heavy or unrelated to a run: provider SDKs, the SDKs' HTTP client, numpy, pytest, the
# dashboard, the figures of calibrate, migrations (the store exists), rich's progress bars.
NEVER_ON_A_RUN = (
    "openai",
    "anthropic",
    "httpx",
    "httpx2",
    "numpy",
    "_pytest",
    "vcr",
    "jurybox.web",
    "jurybox.calibrate._bootstrap",
    "jurybox.calibrate._console",
    "jurybox._cli.calibrate",
    # A run asks calibrate only for a judge's identity, and a suite without seeds reads no seed file.
    "jurybox.calibrate._result",
    "jurybox.calibrate._labels",
    "jurybox.calibrate._recorded",
    "jurybox.suites._seeds",
    "jurybox.suites._seed_schema",
    "rich.progress",
    "jurybox.traces",
    "jurybox.agents._mcp",
    # typer's help and error rendering (rich's Markdown with markdown-it, rich's tracebacks): only
    # for --help or a usage error, whose one-line form jurybox puts in when it is imported.
    "typer.rich_utils",
    "markdown_it",
    "rich.markdown",
    "rich.traceback",
)

# The modules are listed by an exit handler: `jurybox run` ends its process without tearing it down,
# after running the exit handlers (the exit code is the process's).
LIST_MODULES = """
import atexit, json, runpy, sys
atexit.register(lambda: print(json.dumps({"modules": sorted(sys.modules)}), flush=True))
sys.argv = ["jurybox", *sys.argv[1:]]
runpy.run_module("jurybox", run_name="__main__")
"""


def _run(folder: Path, *args: str) -> tuple[int, set[str]]:
    done = subprocess.run(
        [sys.executable, "-c", LIST_MODULES, *args],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
        env={**_environment(), "JURYBOX_CACHE": "off"},
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return done.returncode, set(result["modules"])


def _environment() -> dict[str, str]:
    import os

    src = str(Path(__file__).resolve().parent.parent / "src")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}


def _write(folder: Path, judge_model: str | None) -> None:
    (folder / "startup_agent.py").write_text(
        "async def respond(message: str, session_id: str) -> str:\n    return 'The answer is 42.'\n", encoding="utf-8"
    )
    lines = ["name: startup", 'agent: {python: "startup_agent:respond"}']
    if judge_model:
        lines.append(f"judge_model: {judge_model}")
    lines += ["cases:", "  - name: one", '    prompt: "q"', '    judges: [{contains: "42"}]']
    if judge_model:
        lines.append('  - {name: two, prompt: "q", judges: [{correctness: {reference: "42"}}]}')
    (folder / "suite.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_a_run_with_an_openai_compatible_judge_imports_no_sdk(tmp_path: Path) -> None:
    with StubServer("openai", reply=VERDICT) as stub:
        _write(tmp_path, f"openai:m@{stub.base_url}")
        store = f"sqlite:///{tmp_path / 'store.db'}"
        _run(tmp_path, "run", "suite.yaml", "--no-progress", "--store", store)  # creates and migrates the store
        code, modules = _run(tmp_path, "run", "suite.yaml", "--no-progress", "--store", store)
    assert code == 0
    loaded = sorted(name for name in NEVER_ON_A_RUN if name in modules)
    assert loaded == [], f"jurybox run imported {loaded}"
    assert "aiohttp" in modules and "alembic" not in modules  # the judge's client; no migration for a current store


def test_an_offline_run_imports_no_http_client(tmp_path: Path) -> None:
    _write(tmp_path, None)
    code, modules = _run(tmp_path, "run", "suite.yaml", "--no-progress", "--no-store")
    assert code == 0
    assert not {"aiohttp", "httpx", "openai", "jurybox.models._openai"} & modules


def test_the_store_loads_only_when_a_run_opens_it(tmp_path: Path) -> None:
    # SQLAlchemy and the store's tables load while the judge server's check waits (they would add
    # their ~0.12 s to every start otherwise): a dry run, or a run without a store, needs neither.
    _write(tmp_path, None)
    for args in (("--dry-run",), ("--no-store", "--no-progress")):
        code, modules = _run(tmp_path, "run", "suite.yaml", *args)
        assert code == 0
        assert not {"sqlalchemy", "jurybox.store._store", "jurybox.store._engine"} & modules, args
        assert "jurybox.store" in modules  # the package itself is light: its names load when used


def _names(app: typer.Typer) -> set[str]:
    names = {command.name or getattr(command.callback, "__name__", "") for command in app.registered_commands}
    return names | {str(group.name) for group in app.registered_groups}


def test_the_command_registers_only_what_it_runs() -> None:
    assert _names(build_app("run")) == {"run", "version"}
    registered = _names(build_app())
    assert registered >= {name for _, names in FEATURES for name in names} | {"version"}


def test_the_otel_option_names_the_variables_the_exporter_reads() -> None:
    from jurybox._cli.otel_option import ENDPOINT_VARIABLES
    from jurybox.traces import ENDPOINT_VARIABLES as READ

    assert ENDPOINT_VARIABLES == READ


def test_a_usage_error_is_one_line_though_typers_error_rendering_loads_only_then(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "jurybox", "run", "--no-such-flag"],
        check=False,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=_environment(),
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: No such option: --no-such-flag (see python -m jurybox run --help)"
    ]


def test_the_judges_verdict_models_are_built_when_a_judge_first_uses_one() -> None:
    code = (
        "from jurybox.llm import _verdicts as v\n"
        "models = [v.ScoreVerdict, v.RelevanceVerdict, v.RubricVerdict, v.CoverageVerdict, v.FaithfulnessVerdict]\n"
        "before = [m.__pydantic_complete__ for m in models]\n"
        "v.ScoreVerdict.model_validate({'score': 0.5, 'reasoning': 'ok'})\n"
        "print(before, [m.__pydantic_complete__ for m in models])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=_environment())
    assert done.stdout.split("] [") == ["[False, False, False, False, False", "True, False, False, False, False]\n"]
