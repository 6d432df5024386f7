"""Command-line options and markers of the plugin, and reading them back into settings."""

from __future__ import annotations

import importlib.util

import pytest

from jurybox.pytest_plugin._config import RECORD_MODES, ConfigError, JuryboxSettings, build_settings, environment

#: ``[tool.jurybox] cache = "refresh"``: the judge is asked again and the cached replies overwritten.
REFRESH = "refresh"

MARKERS = (
    "llm_judge: the test needs a judge model; skipped with the reason when none is configured "
    "(unless its traffic is on a cassette)",
    "live_llm: the test calls a real LLM provider; skipped unless --jurybox-live",
    "similarity_threshold(value): this test's default threshold for expect(...).is_similar_to (0..1)",
    "llm_drift_threshold(value): another name for similarity_threshold",
    "unit: a fast test with no network and no model (select with -m unit)",
    "integration: a test that wires real components together (select with -m integration)",
    "contract: a test that pins an interface other code relies on (select with -m contract)",
    "cassette(name=None, **vcr_options): record/replay this test's HTTP traffic in "
    "<test dir>/cassettes/<module>/<test>.yaml (module- and class-level too)",
    "trials(n, min_pass_rate=p, confidence=0.95): rerun the test body up to n times and pass when the "
    "pass rate is at least p, stopping early once it is settled",
)


#: pytest-recording's marker, registered by jurybox when pytest-recording is not installed (it owns it otherwise).
VCR_MARKER = (
    "vcr(**vcr_options): another name for cassette (pytest-recording's marker): record/replay this test's "
    "HTTP traffic in <test dir>/cassettes/<module>/<test>.yaml"
)


def recording_plugin_installed() -> bool:
    """pytest-recording owns ``--record-mode`` when installed; we then read its option instead of clashing."""
    return importlib.util.find_spec("pytest_recording") is not None


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("jurybox", "jurybox: LLM judges, cassettes and trials")
    group.addoption(
        "--jurybox-model",
        default=None,
        metavar="SPEC",
        help="judge model, e.g. openai:gpt-4o-mini (else JURYBOX_JUDGE_MODEL, else [tool.jurybox] model)",
    )
    group.addoption(
        "--jurybox-strict",
        action="store_true",
        default=False,
        help="soft (warn_*) checks fail the test like hard ones (also JURYBOX_FAIL_ON_REJECT=1)",
    )
    group.addoption(
        "--jurybox-no-cache",
        action="store_true",
        default=False,
        help="ask the judge model every time: no reply read from or written to the response cache",
    )
    group.addoption(
        "--jurybox-refresh-cache",
        action="store_true",
        default=False,
        help='ask the judge model again and overwrite the cached replies (also [tool.jurybox] cache = "refresh")',
    )
    group.addoption(
        "--jurybox-live",
        action="store_true",
        default=False,
        help="run tests marked live_llm (they call real providers and cost money)",
    )
    if not recording_plugin_installed():
        group.addoption(
            "--record-mode",
            dest="record_mode",
            default="none",
            choices=RECORD_MODES,
            help="cassette record mode: none (default: replay only, never touch the network), "
            "once, new_episodes, all, rewrite",
        )


def cache_mode(config: pytest.Config, settings: JuryboxSettings) -> str | None:
    """``off``, ``refresh`` or None (the cache as configured): the command line, then ``[tool.jurybox] cache``.

    Raises:
        pytest.UsageError: both flags were given.
    """
    no_cache = bool(config.getoption("jurybox_no_cache", default=False))
    refresh = bool(config.getoption("jurybox_refresh_cache", default=False))
    if no_cache and refresh:
        raise pytest.UsageError("jurybox: --jurybox-no-cache and --jurybox-refresh-cache contradict each other")
    if no_cache:
        return "off"
    if refresh or settings.cache == REFRESH:
        return REFRESH
    return None


def register_markers(config: pytest.Config) -> None:
    for line in MARKERS:
        config.addinivalue_line("markers", line)
    if not recording_plugin_installed():
        config.addinivalue_line("markers", VCR_MARKER)


def load_settings(config: pytest.Config) -> JuryboxSettings:
    """Settings from the command line, the environment and the rootdir's pyproject.toml.

    Raises:
        pytest.UsageError: on a bad setting, naming the file or variable and the field.
    """
    pyproject = config.rootpath / "pyproject.toml"
    try:
        return build_settings(
            pyproject=pyproject if pyproject.is_file() else None,
            environ=environment(),
            cli_model=config.getoption("jurybox_model", default=None),
            cli_strict=bool(config.getoption("jurybox_strict", default=False)),
            cli_live=bool(config.getoption("jurybox_live", default=False)),
            cli_record_mode=config.getoption("record_mode", default=None),
        )
    except ConfigError as exc:
        raise pytest.UsageError(f"jurybox: {exc}") from exc
