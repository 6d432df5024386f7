"""The plug-in registry: names, aliases, lazy targets and install hints, "did you mean", entry-point discovery.

Each test uses a registry of its own (``PluginRegistry()``), so nothing here changes
the process-wide one; discovery reads a ``.dist-info`` written to a temporary
``sys.path`` entry, exactly what an installed distribution looks like.
"""

from __future__ import annotations

import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jurybox.core import (
    KIND_AGENT,
    KIND_EXECUTOR,
    KIND_JUDGE,
    KIND_REPORT,
    PLUGIN_KINDS,
    TIER_LLM,
    JudgeFactory,
    JudgeRegistry,
    PluginRegistry,
    PluginUnavailableError,
    UnknownPluginError,
)


class Csv:
    """One row per case."""


def write_distribution(site: Path, name: str, entry_points: dict[str, str], modules: dict[str, str]) -> None:
    """A distribution as pip leaves it: its modules and a .dist-info naming its ``jurybox`` entry points."""
    site.mkdir(parents=True, exist_ok=True)
    for module, source in modules.items():
        (site / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    info = site / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n", encoding="utf-8")
    lines = "".join(f"{key} = {value}\n" for key, value in entry_points.items())
    (info / "entry_points.txt").write_text(f"[jurybox]\n{lines}", encoding="utf-8")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary site-packages on sys.path (the process-wide registry has read its entry points before it)."""
    PluginRegistry.default().discover()
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    return folder


# -- names and aliases -----------------------------------------------------------------------------


def test_a_plugin_is_found_by_name_or_alias_and_listed_by_kind() -> None:
    registry = PluginRegistry()
    plugin = registry.register(KIND_REPORT, "csv", Csv, aliases=("comma",), summary="")
    instance = registry.register(KIND_REPORT, "tsv", Csv())

    assert registry.plugin(KIND_REPORT, "comma") is plugin is registry.plugin(KIND_REPORT, "csv")
    assert plugin.summary == "One row per case."  # a class's (or function's) docstring when none is given
    assert instance.summary == ""  # an instance's class docstring says what the class is, not this plug-in
    registry.unregister(KIND_REPORT, "tsv")
    assert plugin.module == __name__ and plugin.distribution is None and not plugin.lazy
    assert registry.names(KIND_REPORT) == ["csv"] and registry.names(KIND_AGENT) == []
    assert [p.name for p in registry.plugins()] == ["csv"]
    assert registry.get(KIND_EXECUTOR, "csv") is None  # kinds do not share names


def test_replacing_a_plugin_drops_its_old_aliases_and_unregister_removes_it() -> None:
    registry = PluginRegistry()
    registry.register(KIND_EXECUTOR, "pool", "json:dumps", aliases=("tasks", "local2"))
    generation = registry.generation
    registry.register(KIND_EXECUTOR, "pool", "json:loads", aliases=("tasks",))

    assert registry.generation > generation
    assert registry.get(KIND_EXECUTOR, "local2") is None
    assert registry.load(KIND_EXECUTOR, "tasks").__name__ == "loads"
    removed = registry.unregister(KIND_EXECUTOR, "pool")
    assert removed is not None and registry.get(KIND_EXECUTOR, "tasks") is None
    assert registry.unregister(KIND_EXECUTOR, "pool") is None


def test_an_unknown_name_says_the_closest_or_lists_the_known_ones() -> None:
    registry = PluginRegistry()
    for name in ("local", "processes", "ray"):
        registry.register(KIND_EXECUTOR, name, object())

    with pytest.raises(UnknownPluginError, match=r"^unknown executor 'rey' \(did you mean 'ray'\?\)$"):
        registry.plugin(KIND_EXECUTOR, "rey")
    with pytest.raises(UnknownPluginError, match=r"^unknown executor 'zzz'; known: local, processes, ray$"):
        registry.plugin(KIND_EXECUTOR, "zzz")
    with pytest.raises(UnknownPluginError, match=r"unknown exporter 'otlp'; known: none installed"):
        registry.plugin("exporter", "otlp")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (("widget", "x", object()), "plug-in kind must be one of judge, provider, agent, executor, report, exporter"),
        ((KIND_REPORT, "", object()), "needs a name"),
        ((KIND_REPORT, "csv", "my_package.reports"), "a lazy target is 'package.module:attribute'"),
        ((KIND_REPORT, "csv", "my package:CSV"), "a lazy target is 'package.module:attribute'"),
        ((KIND_REPORT, "csv", ":CSV"), "a lazy target is 'package.module:attribute'"),
    ],
)
def test_registration_mistakes_are_refused(arguments: tuple[Any, ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        PluginRegistry().register(*arguments)
    with pytest.raises(ValueError, match="aliases must be non-empty strings"):
        PluginRegistry().register(KIND_REPORT, "csv", object(), aliases=("",))


NAME = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12)


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(names=st.lists(NAME, min_size=1, max_size=8, unique=True), asked=st.text(max_size=20))
def test_any_lookup_finds_a_registered_name_or_says_which_one_it_was_not(names: list[str], asked: str) -> None:
    registry = PluginRegistry()
    for name in names:
        registry.register(KIND_AGENT, name, object())

    if asked in names:
        assert registry.plugin(KIND_AGENT, asked).name == asked
        return
    with pytest.raises(UnknownPluginError) as caught:
        registry.plugin(KIND_AGENT, asked)
    message = str(caught.value)
    assert message.startswith(f"unknown agent adapter {asked!r}")
    close = registry.closest(KIND_AGENT, asked)
    # The suggestion, when there is one, is a registered name; otherwise every name is listed.
    assert (close in names and f"did you mean {close!r}" in message) or (
        close is None and message.endswith("known: " + ", ".join(sorted(names)))
    )


# -- lazy targets ----------------------------------------------------------------------------------


def test_a_lazy_target_is_imported_on_first_use_only(site: Path) -> None:
    (site / "zz_lazy_format.py").write_text("FORMAT = object()\n", encoding="utf-8")
    registry = PluginRegistry()
    plugin = registry.register(KIND_REPORT, "zz", "zz_lazy_format:FORMAT", summary="lazy")

    assert plugin.lazy and plugin.module == "zz_lazy_format" and registry.status(plugin) == "lazy"
    assert "zz_lazy_format" not in sys.modules
    loaded = registry.load(KIND_REPORT, "zz")
    assert loaded is sys.modules["zz_lazy_format"].FORMAT and registry.load(KIND_REPORT, "zz") is loaded
    assert registry.status(plugin) == "loaded"


def test_a_missing_optional_dependency_names_the_extra_to_install(site: Path) -> None:
    (site / "zz_needs_sdk.py").write_text("import zz_absent_sdk\nADAPTER = 1\n", encoding="utf-8")
    registry = PluginRegistry()
    # As jurybox registers its own (from a jurybox module): the hint names jurybox's extra.
    own = registry.register(
        KIND_AGENT, "needy", "zz_needs_sdk:ADAPTER", extra="needy", requires=("zz_absent_sdk",), module="jurybox.zz"
    )
    # Registered by a module imported by hand: its distribution is not known.
    stray = registry.register(KIND_AGENT, "stray", "zz_needs_sdk:ADAPTER", extra="sdk")

    assert own.distribution == "jurybox" and stray.distribution is None
    assert registry.status(own) == "needs zz_absent_sdk: pip install 'jurybox[needy]'"  # told without importing
    with pytest.raises(PluginUnavailableError) as caught:
        registry.load(KIND_AGENT, "needy")
    assert str(caught.value) == (
        "the needy agent adapter needs zz_absent_sdk, which is not installed: pip install 'jurybox[needy]'"
    )
    with pytest.raises(PluginUnavailableError, match="install the 'sdk' extra of the package that provides"):
        registry.load(KIND_AGENT, "stray")


def test_a_lazy_target_that_fails_is_a_plugin_error_not_a_traceback(site: Path) -> None:
    (site / "zz_broken_format.py").write_text("raise RuntimeError('broken on import')\n", encoding="utf-8")
    (site / "zz_thin_format.py").write_text("OTHER = 1\n", encoding="utf-8")
    registry = PluginRegistry()
    registry.register(KIND_REPORT, "broken", "zz_broken_format:FORMAT")
    registry.register(KIND_REPORT, "thin", "zz_thin_format:FORMAT")

    with pytest.raises(PluginUnavailableError, match="importing zz_broken_format failed: RuntimeError: broken on"):
        registry.load(KIND_REPORT, "broken")
    with pytest.raises(PluginUnavailableError, match="points at 'zz_thin_format:FORMAT', which does not exist"):
        registry.load(KIND_REPORT, "thin")


# -- discovery -------------------------------------------------------------------------------------


def test_discovery_runs_once_on_a_miss_and_keeps_what_failed(site: Path) -> None:
    write_distribution(
        site,
        "zz-plugins",
        {"registering": "zz_registering:register", "broken": "zz_missing_module", "module": "zz_module_plugins"},
        {
            "zz_registering": """
                calls = []
                def register(registry):
                    calls.append(registry)
                    registry.register("report", "zz_lines", "json:dumps", summary="one line per case")
                    registry.register("judge", "zz_judge", object(), aliases=("zz_alias",))
            """,
            "zz_module_plugins": "IMPORTED = True\n",
        },
    )
    registry = PluginRegistry(discover=True)

    assert registry.get(KIND_REPORT, "zz_lines") is None and not registry.discovered  # get() never discovers
    plugin = registry.plugin(KIND_REPORT, "zz_lines")

    assert registry.discovered and plugin.distribution == "zz-plugins" and plugin.origin == "zz-plugins"
    assert sys.modules["zz_registering"].calls == [registry]  # the function got the registry to fill
    assert "zz_module_plugins" in sys.modules  # a module entry point is imported
    assert registry.plugin(KIND_JUDGE, "zz_alias").name == "zz_judge"
    [problem] = registry.problems
    assert problem.startswith("entry point broken = zz_missing_module (zz-plugins): ModuleNotFoundError")
    with pytest.raises(UnknownPluginError, match=r"1 plug-in entry point\(s\) failed to load: see jurybox plugins"):
        registry.plugin(KIND_REPORT, "nothing_like_it")
    assert sys.modules["zz_registering"].calls == [registry]  # still once


def test_lookups_in_other_threads_wait_for_a_discovery_under_way(site: Path) -> None:
    write_distribution(
        site,
        "zz-slow",
        {"slow": "zz_slow:register"},
        {
            "zz_slow": """
                import time
                def register(registry):
                    time.sleep(0.3)
                    registry.register("executor", "zz_slow", object())
            """
        },
    )
    registry = PluginRegistry(discover=True)
    found: list[str] = []
    threads = [
        threading.Thread(target=lambda: found.append(registry.plugin(KIND_EXECUTOR, "zz_slow").name)) for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)

    assert found == ["zz_slow"] * 4  # none of them was told "unknown" while another thread discovered


def test_a_copy_changes_without_changing_the_original() -> None:
    registry = PluginRegistry()
    registry.register(KIND_REPORT, "csv", Csv())
    copied = registry.copy((KIND_REPORT,))
    copied.register(KIND_REPORT, "tsv", Csv())

    assert registry.names(KIND_REPORT) == ["csv"] and copied.names(KIND_REPORT) == ["csv", "tsv"]
    assert len(copied) == 2 and copied.count(KIND_REPORT) == 2


def test_every_kind_has_words_for_messages() -> None:
    assert PLUGIN_KINDS == ("judge", "provider", "agent", "executor", "report", "exporter")
    registry = PluginRegistry()
    for kind in PLUGIN_KINDS:
        with pytest.raises(UnknownPluginError, match=r"^unknown [a-z ]+ 'x'"):
            registry.plugin(kind, "x")


# -- judges are plug-ins too -----------------------------------------------------------------------


def graded(reference: str | None = None, *, threshold: float = 0.6) -> Any:
    """Grade the output against a reference.

    Args:
        reference: The reference answer.
        threshold: Pass at this score or above.
    """
    return lambda ctx: True


def test_a_registered_judge_is_a_judge_plugin_with_its_summary_and_aliases() -> None:
    plugins = PluginRegistry()
    judges = JudgeRegistry(plugins=plugins)
    judges.register("graded", graded, tier=TIER_LLM, aliases=("grade",))

    plugin = plugins.plugin(KIND_JUDGE, "grade")
    assert plugin.name == "graded" and plugin.summary == "Grade the output against a reference."
    assert isinstance(plugin.target, JudgeFactory) and plugin.module == __name__
    entry = judges.get("grade")
    assert entry is not None and entry.tier == TIER_LLM and entry.threshold == 0.6
    assert "grade" in judges and "graded" in judges.names() and judges.get("graed") is None
    assert judges.unknown_message("graed") == "unknown judge 'graed' (did you mean 'graded'?)"


def test_a_judge_an_installed_package_registers_is_found_on_a_miss(site: Path) -> None:
    write_distribution(
        site,
        "zz-judges",
        {"judges": "zz_judges:register"},
        {
            "zz_judges": """
                from jurybox.core import JudgeRegistry
                def mentions_price(currency="EUR"):
                    '''A reply that names a price.'''
                    return lambda ctx: currency in ctx.output
                def register(registry):
                    JudgeRegistry(plugins=registry).register("zz_mentions_price", mentions_price)
                    registry.register("judge", "zz_lazy", "zz_lazy_judge:factory", details={"tier": "llm_judge"})
            """,
            "zz_lazy_judge": "def factory(*, threshold=0.5):\n    return lambda ctx: True\n",
        },
    )
    judges = JudgeRegistry(plugins=PluginRegistry(discover=True))

    found = judges.get("zz_mentions_price")
    lazy = judges.get("zz_lazy")

    assert found is not None and found.summary == "A reply that names a price."
    assert lazy is not None and lazy.tier == TIER_LLM and lazy.threshold == 0.5  # described once imported
    assert [entry.name for entry in judges] == ["zz_lazy", "zz_mentions_price"]
