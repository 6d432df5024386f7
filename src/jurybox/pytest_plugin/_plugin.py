"""The pytest hooks and fixtures: settings, gating markers, per-test scope, cassettes, trials.

Everything heavy (vcrpy, providers, judges) is imported inside the hook or
fixture that needs it, so loading the plugin costs next to nothing for a test
session that never uses it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from jurybox.core import Context, ExtraMissingError
from jurybox.pytest_plugin._cassettes import cassette_folder, cassette_path, use_cassette
from jurybox.pytest_plugin._config import JuryboxSettings
from jurybox.pytest_plugin._misses import miss_message, recorded_miss, unplayable_error
from jurybox.pytest_plugin._options import (
    REFRESH,
    add_options,
    cache_mode,
    load_settings,
    recording_plugin_installed,
    register_markers,
)
from jurybox.pytest_plugin._reachable import UnreachableJudgeModel, server_problem
from jurybox.pytest_plugin._recording import connection_failure, recording_message
from jurybox.pytest_plugin._session_calls import SessionCalls
from jurybox.pytest_plugin._summary import write_summary
from jurybox.testing import (
    HOW_TO_CONFIGURE,
    StoppingRule,
    TestScope,
    failure_message,
    report_trials,
    run_trials,
    test_scope,
)

SETTINGS_KEY = pytest.StashKey[JuryboxSettings]()
MODEL_KEY = pytest.StashKey["JudgeModelHolder"]()
CALLS_KEY = pytest.StashKey[SessionCalls]()


class JudgeModelHolder:
    """Builds the configured judge model on first use, checks its server once, and keeps it for the session."""

    def __init__(self, settings: JuryboxSettings) -> None:
        self.settings = settings
        self._model: Any = None
        self.problem: str | None = None
        """Why the judge server failed the session's one check (None: it answered, or was not checked)."""
        self.unreachable: UnreachableJudgeModel | None = None

    def problem_that_mattered(self) -> str | None:
        """What the check found and what the cache answered, when a call failed for it or was answered
        without the server (``judge server URL unreachable (...); 3 of 3 judge call(s) answered from the
        response cache``).

        A session that replays cassettes needs no server: its finding is then no news.
        """
        model = self.unreachable
        if model is None or not model.calls:
            return None
        return model.summary()

    @property
    def configured(self) -> bool:
        return self.settings.model is not None

    def get(self) -> Any:
        """The session's judge model, or None when none is configured."""
        if self.settings.model is None:
            return None
        if self._model is None:
            from jurybox.models import get_model

            options: dict[str, Any] = {}
            if self.settings.base_url:
                options["base_url"] = self.settings.base_url
            cache = self.settings.cache
            if isinstance(cache, bool) or cache == "auto":
                options["cache"] = cache
            elif cache is not None and cache != REFRESH:
                # A path: the response cache file, with the default "auto" policy.
                options["cache_path"] = cache
            model: Any = get_model(self.settings.model, **options)
            # One check per session, not ~9 s of retries per test when the server is down.
            problem = server_problem(model)
            if problem is not None:
                self.problem = problem
                model = self.unreachable = UnreachableJudgeModel(model, problem)
            self._model = model
        return self._model


class ConfiguredJudgeModel:
    """The session's judge model as a ``JudgeModel`` that is only built on its first call.

    Installed as ``jurybox.models``' default model while the session runs, so LLM
    judges built with ``model=None`` inside tests use ``--jurybox-model`` (and its
    base URL and cache settings) without a key being needed to start pytest.
    """

    def __init__(self, holder: JudgeModelHolder) -> None:
        self.holder = holder
        self.name = str(holder.settings.model)

    async def complete(self, request: Any) -> Any:
        return await self.holder.get().complete(request)

    async def generate(self, messages: Any, **options: Any) -> Any:
        # jurybox.models stays unimported until the first call: the built model spells the request.
        return await self.holder.get().generate(messages, **options)


def settings_of(config: pytest.Config) -> JuryboxSettings:
    return config.stash[SETTINGS_KEY]


# -- configuration -------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    register_markers(config)
    settings = load_settings(config)
    config.stash[SETTINGS_KEY] = settings
    holder = JudgeModelHolder(settings)
    config.stash[MODEL_KEY] = holder
    calls = SessionCalls(cache_mode(config, settings))
    config.stash[CALLS_KEY] = calls
    if holder.configured or calls.mode is not None:
        calls.start()  # counts the session's judge calls and cache hits for the summary
    if holder.configured:
        from jurybox.models import set_default_model

        set_default_model(ConfiguredJudgeModel(holder))


def pytest_unconfigure(config: pytest.Config) -> None:
    calls = config.stash.get(CALLS_KEY, None)
    if calls is not None:
        calls.stop()
    holder = config.stash.get(MODEL_KEY, None)
    if holder is not None and holder.configured:
        from jurybox.models import set_default_model

        set_default_model(None)


def pytest_report_header(config: pytest.Config) -> str | None:
    settings = config.stash.get(SETTINGS_KEY, None)
    if settings is None:
        return None
    model = f"{settings.model} (from {settings.model_source})" if settings.model else "none configured"
    line = f"jurybox: judge model {model}; record mode {settings.record_mode}; strict {settings.fail_on_reject}"
    return f"{line}\njurybox: {settings.note}" if settings.note else line


# -- gating --------------------------------------------------------------------


def cassette_marker(item: pytest.Item) -> pytest.Mark | None:
    """The test's ``cassette`` marker, or pytest-recording's ``vcr`` (ours only when pytest-recording is absent)."""
    marker = item.get_closest_marker("cassette")
    if marker is None and not recording_plugin_installed():
        marker = item.get_closest_marker("vcr")
        if marker is not None and marker.args:
            raise pytest.UsageError(
                f"{item.nodeid}: @pytest.mark.vcr with extra cassette files needs pytest-recording; "
                "jurybox records one cassette a test (@pytest.mark.vcr(**vcr_options))"
            )
    return marker


def _reported_cassette(item: pytest.Item) -> Path | None:
    """The test's cassette for its report; None when its marker is a mistake (setup already reported that)."""
    try:
        return item_cassette_path(item)
    except pytest.UsageError:
        return None


def item_cassette_path(item: pytest.Item) -> Path | None:
    """The cassette file of a test carrying the ``cassette`` (or ``vcr``) marker at any level, else None."""
    marker = cassette_marker(item)
    if marker is None:
        return None
    name = marker.kwargs.get("name") or (marker.args[0] if marker.args and marker.name == "cassette" else None)
    test_file = Path(str(item.path))
    root_setting = settings_of(item.config).cassette_root
    root = item.config.rootpath / root_setting if root_setting else None
    if name:
        filename = name if str(name).endswith((".yaml", ".yml")) else f"{name}.yaml"
        return cassette_folder(test_file, root=root, rootdir=item.config.rootpath) / filename
    cls = getattr(item, "cls", None)
    owner = cls.__name__ if cls is not None else None
    return cassette_path(test_file, item.name, owner, root=root, rootdir=item.config.rootpath)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    settings = settings_of(item.config)
    if item.get_closest_marker("live_llm") is not None and not settings.live:
        pytest.skip("live_llm: calls a real LLM provider; run with --jurybox-live to include it")
    if item.get_closest_marker("llm_judge") is not None and settings.model is None:
        cassette = item_cassette_path(item)
        if cassette is None or not cassette.is_file():
            pytest.skip(f"llm_judge: no judge model configured; {HOW_TO_CONFIGURE}")


# -- fixtures ------------------------------------------------------------------


def _similarity_override(item: pytest.Item, default: float) -> float:
    # llm_drift_threshold is another name for it; one test may not give both.
    found = [(n, m) for n in ("similarity_threshold", "llm_drift_threshold") if (m := item.get_closest_marker(n))]
    if not found:
        return default
    if len(found) > 1:
        raise pytest.UsageError(
            f"{item.nodeid}: @pytest.mark.llm_drift_threshold is another name for "
            "@pytest.mark.similarity_threshold: give one of them, not both"
        )
    name, marker = found[0]
    value = marker.args[0] if marker.args else marker.kwargs.get("value")
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
        raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.{name} needs a number in 0..1, got {value!r}")
    return float(value)


@pytest.fixture(autouse=True)
def jurybox_scope(request: pytest.FixtureRequest) -> Iterator[TestScope]:
    """The per-test scope ``expect`` reads (model, thresholds, strict mode) and writes verdicts to."""
    settings = settings_of(request.config)
    holder = request.config.stash[MODEL_KEY]
    scope = TestScope(
        model_factory=holder.get if holder.configured else None,
        confidence=settings.confidence,
        strict=settings.fail_on_reject,
        similarity_threshold=_similarity_override(request.node, settings.similarity_threshold),
        properties=request.node.user_properties,
    )
    with test_scope(scope):
        yield scope


@pytest.fixture(scope="session")
def judge_model(pytestconfig: pytest.Config) -> Any:
    """The configured judge model, built once per session; skips the test when none is configured."""
    holder = pytestconfig.stash[MODEL_KEY]
    if not holder.configured:
        pytest.skip(f"judge_model: no judge model configured; {HOW_TO_CONFIGURE}")
    return holder.get()


@pytest.fixture
def fake_model(jurybox_scope: TestScope) -> Callable[..., Any]:
    """Make a scripted ``FakeModel`` and use it as this test's judge model.

    ``fake_model(reply)``, ``fake_model([reply1, reply2])`` or ``fake_model(fn)``
    return the FakeModel (see ``jurybox.models.FakeModel``); ``expect(...)``
    steps in this test then use it unless given another ``judge_model``.
    """
    from jurybox.models import FakeModel

    def make(replies: Any, *, name: str = "fake:model") -> Any:
        model = FakeModel(replies, name=name)
        jurybox_scope.judge_model = model
        return model

    return make


@pytest.fixture
def jurybox_context() -> Callable[..., Context]:
    """Build a ``Context`` for calling judges directly: ``jurybox_context("answer", input="question")``."""

    def make(output: str = "", **fields: Any) -> Context:
        return Context(output=output, **fields)

    return make


@pytest.fixture(autouse=True)
def jurybox_cassette(request: pytest.FixtureRequest) -> Iterator[Any]:
    """The vcrpy cassette of a test marked ``cassette`` (None for other tests)."""
    path = item_cassette_path(request.node)
    if path is None:
        yield None
        return
    marker = cassette_marker(request.node)
    options = {key: value for key, value in (marker.kwargs if marker else {}).items() if key != "name"}
    settings = settings_of(request.config)
    with ExitStack() as stack:
        missing = None
        try:
            cassette = stack.enter_context(
                use_cassette(path, record_mode=settings.record_mode, settings=settings.cassettes, options=options)
            )
        except ExtraMissingError as error:  # vcrpy is the cassettes extra: one line, no import frames
            missing = str(error)
        if missing is not None:
            pytest.fail(missing, pytrace=False)
        yield cassette


if not recording_plugin_installed():

    @pytest.fixture
    def vcr_cassette(jurybox_cassette: Any) -> Any:
        """pytest-recording's name for the test's cassette (``jurybox_cassette``); None without a marker."""
        return jurybox_cassette


# -- trials --------------------------------------------------------------------


def _trials_rule(item: pytest.Item, marker: pytest.Mark) -> StoppingRule:
    try:
        max_trials = marker.args[0] if marker.args else marker.kwargs["n"]
        rate = marker.kwargs.get("min_pass_rate", marker.args[1] if len(marker.args) > 1 else None)
        if rate is None:
            raise KeyError("min_pass_rate")
        return StoppingRule(
            min_pass_rate=float(rate),
            max_trials=max_trials,
            confidence=float(marker.kwargs.get("confidence", 0.95)),
            min_trials=int(marker.kwargs.get("min_trials", 1)),
        )
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise pytest.UsageError(
            f"{item.nodeid}: @pytest.mark.trials(n, min_pass_rate=p) is malformed ({type(exc).__name__}: {exc})"
        ) from exc


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Run a ``trials``-marked test body repeatedly and decide with the sequential rule."""
    marker = pyfuncitem.get_closest_marker("trials")
    if marker is None:
        return None
    rule = _trials_rule(pyfuncitem, marker)
    function = pyfuncitem.obj
    arguments = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}

    def trial() -> Any:
        return function(**arguments)

    result = run_trials(
        trial,
        rule.min_pass_rate,
        max_trials=rule.max_trials,
        confidence=rule.confidence,
        min_trials=rule.min_trials,
    )
    report_trials(result, pyfuncitem.name)
    if not result.passed:
        pytest.fail(failure_message(result), pytrace=False)
    return True


# -- reporting -----------------------------------------------------------------


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Replace the SDK/httpx/vcr traceback of a request missing from its cassette, or of a recording whose
    server did not answer, with a short failure."""
    report = yield
    error = call.excinfo.value if call.excinfo is not None else None
    missed = unplayable_error(error) or recorded_miss(error, getattr(item, "funcargs", {}).get("jurybox_cassette"))
    if missed is not None and report.failed:
        message = miss_message(
            missed,
            test=_runnable_nodeid(item),
            cassette=_shown_path(_reported_cassette(item), item.config),
            record_mode=settings_of(item.config).record_mode,
        )
        report.longrepr = _short_failure(item, message)
        return report
    record_mode = settings_of(item.config).record_mode
    cassette = _reported_cassette(item)
    refused = connection_failure(error) if record_mode != "none" and cassette is not None else None
    if refused is not None and report.failed:  # recording, and nothing answered: one line, not 300
        shown = _shown_path(cassette, item.config)
        report.longrepr = _short_failure(item, recording_message(*refused, cassette=shown, record_mode=record_mode))
    return report


def _runnable_nodeid(item: pytest.Item) -> str:
    """The test's node id with its file relative to where pytest was started: what to type to rerun it."""
    path, separator, rest = item.nodeid.partition("::")
    full = item.config.rootpath / path
    shown = _shown_path(full, item.config) or full
    return f"{shown.as_posix()}{separator}{rest}"


def _shown_path(path: Path | None, config: pytest.Config) -> Path | None:
    """``path`` relative to where pytest was started, when it is under it (shorter, and what the user sees)."""
    if path is None:
        return None
    try:
        return path.relative_to(config.invocation_params.dir)
    except ValueError:
        return path


def _short_failure(item: pytest.Item, message: str) -> Any:
    """``message`` as pytest shows a ``pytest.fail(..., pytrace=False)``: the text alone, no frames."""
    try:
        pytest.fail(message, pytrace=False)
    except pytest.fail.Exception:
        return item.repr_failure(pytest.ExceptionInfo.from_current())
    raise AssertionError("unreachable: pytest.fail returned")  # pragma: no cover


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    write_summary(terminalreporter)
    calls = config.stash.get(CALLS_KEY, None)
    holder = config.stash.get(MODEL_KEY, None)
    if calls is not None:
        for line in calls.summary_lines(holder.problem_that_mattered() if holder is not None else None):
            terminalreporter.write_line(line)
