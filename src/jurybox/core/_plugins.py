"""Plug-ins of every kind, by name: judges, model providers, agent adapters, executors, report formats.

One registry serves every kind, the way pytest and Inspect AI find their plug-ins:

- A package registers its plug-ins where they are defined, when it is imported
  (``register(kind, name, target)``). A plug-in that needs an optional dependency
  is registered by its import path (``"package.module:attribute"``) and imported
  only when something asks for it; an ``ImportError`` then becomes a
  ``PluginUnavailableError`` naming the extra to install.
- Packages are found through the ``jurybox`` entry-point group. jurybox's own
  packages are declared there too (pyproject.toml), so the run engine finds the
  executors and a suite finds an outside package's agent adapter in the same
  way, without importing either. Discovery runs once, on the first name the
  registry does not know.

Only the standard library is used: ``jurybox.core`` stays dependency-free.
"""

from __future__ import annotations

import difflib
import importlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

ENTRY_POINT_GROUP = "jurybox"
"""The entry-point group packages declare their plug-in modules in (``[project.entry-points.jurybox]``)."""

KIND_JUDGE = "judge"
KIND_PROVIDER = "provider"
KIND_AGENT = "agent"
KIND_EXECUTOR = "executor"
KIND_REPORT = "report"
KIND_EXPORTER = "exporter"
PLUGIN_KINDS: tuple[str, ...] = (KIND_JUDGE, KIND_PROVIDER, KIND_AGENT, KIND_EXECUTOR, KIND_REPORT, KIND_EXPORTER)
"""Every kind of plug-in, in the order ``jurybox plugins`` lists them."""

KIND_WORDS = {
    KIND_JUDGE: "judge",
    KIND_PROVIDER: "model provider",
    KIND_AGENT: "agent adapter",
    KIND_EXECUTOR: "executor",
    KIND_REPORT: "report format",
    KIND_EXPORTER: "exporter",
}
"""How messages name each kind."""


class PluginError(LookupError):
    """A plug-in that cannot be had: an unknown name (``UnknownPluginError``) or one that fails to load."""


class UnknownPluginError(PluginError):
    """No plug-in of that kind has that name; the message lists the known ones or the closest."""


class PluginUnavailableError(PluginError):
    """The plug-in is known but cannot be imported here (a missing optional dependency, usually)."""


@dataclass(frozen=True)
class Plugin:
    """One registered plug-in.

    Attributes:
        kind: One of ``PLUGIN_KINDS``.
        name: The name suites, options and the command line use.
        target: The plug-in object, or ``"package.module:attribute"`` to import on first use.
        aliases: Other names it answers to.
        summary: One line on what it is.
        extra: The extra (or package) that brings its optional dependency, for the install hint.
        origin: Where it was registered: the entry point's distribution, or the registering module.
    """

    kind: str
    name: str
    target: Any
    aliases: tuple[str, ...] = ()
    summary: str = ""
    extra: str | None = None
    origin: str = ""

    @property
    def lazy(self) -> bool:
        """True while the plug-in is known by its import path only."""
        return isinstance(self.target, str)


@dataclass
class _Discovery:
    done: bool = False
    problems: list[str] = field(default_factory=list)
    origins: dict[str, str] = field(default_factory=dict)


class PluginRegistry:
    """Kind and name -> plug-in. ``PluginRegistry.default()`` is the process-wide one.

    Example:
        >>> registry = PluginRegistry()
        >>> registry.register("report", "csv", "my_package.reports:write_csv", summary="one row per case")
        >>> registry.names("report")
        ['csv']
    """

    def __init__(self, *, discover: bool = False) -> None:
        self._plugins: dict[str, dict[str, Plugin]] = {kind: {} for kind in PLUGIN_KINDS}
        self._aliases: dict[str, dict[str, str]] = {kind: {} for kind in PLUGIN_KINDS}
        self._loaded: dict[tuple[str, str], Any] = {}
        self._discovery = _Discovery(done=not discover)
        self._lock = threading.RLock()
        self._registering: str = ""

    @classmethod
    def default(cls) -> PluginRegistry:
        """The registry every part of jurybox reads, filled by imports and the ``jurybox`` entry points."""
        return _DEFAULT

    def register(
        self,
        kind: str,
        name: str,
        target: Any,
        *,
        aliases: tuple[str, ...] | list[str] = (),
        summary: str = "",
        extra: str | None = None,
    ) -> None:
        """Add (or replace) a plug-in.

        Args:
            kind: One of ``PLUGIN_KINDS``.
            name: Its name.
            target: The plug-in, or ``"package.module:attribute"`` to import when first used.
            aliases: Other names it answers to.
            summary: One line on what it is (default: the first line of the target's docstring).
            extra: The extra that brings its optional dependency (``"ray"``: ``pip install 'jurybox[ray]'``).

        Raises:
            ValueError: an unknown kind, an empty name, or a lazy target that is not ``module:attribute``.
        """
        _check_kind(kind)
        if not isinstance(name, str) or not name:
            raise ValueError(f"a {KIND_WORDS[kind]} plug-in needs a name, got {name!r}")
        if isinstance(target, str) and (":" not in target or target.startswith(":") or target.endswith(":")):
            raise ValueError(
                f"{KIND_WORDS[kind]} {name!r}: a lazy target is 'package.module:attribute', got {target!r}"
            )
        if not summary and not isinstance(target, str):
            summary = _first_line(getattr(target, "__doc__", None))
        with self._lock:
            origin = self._registering or _caller_module(target)
            plugin = Plugin(kind, name, target, tuple(aliases), summary, extra, origin)
            self._plugins[kind][name] = plugin
            self._loaded.pop((kind, name), None)
            for alias in plugin.aliases:
                self._aliases[kind][alias] = name

    def plugin(self, kind: str, name: str) -> Plugin:
        """The plug-in ``name`` of ``kind`` (by name or alias), discovering entry points on a miss.

        Raises:
            UnknownPluginError: no such plug-in; the message says the closest name or lists the known ones.
        """
        _check_kind(kind)
        found = self._find(kind, name)
        if found is None and not self._discovery.done:
            self.discover()
            found = self._find(kind, name)
        if found is None:
            raise UnknownPluginError(self.unknown_message(kind, name))
        return found

    def load(self, kind: str, name: str) -> Any:
        """The plug-in object itself, imported on first use.

        Raises:
            UnknownPluginError: no such plug-in.
            PluginUnavailableError: its module cannot be imported here; the message names the extra to install.
        """
        plugin = self.plugin(kind, name)
        key = (kind, plugin.name)
        if key in self._loaded:
            return self._loaded[key]
        target = plugin.target
        if isinstance(target, str):
            target = _import_target(plugin)
        with self._lock:
            self._loaded[key] = target
        return target

    def get(self, kind: str, name: str) -> Plugin | None:
        """The plug-in, or None (no discovery, no error): for code that only asks whether one exists."""
        _check_kind(kind)
        return self._find(kind, name)

    def names(self, kind: str, *, discover: bool = True) -> list[str]:
        """Every name of ``kind``, sorted (after discovering entry points, unless told not to)."""
        _check_kind(kind)
        if discover and not self._discovery.done:
            self.discover()
        return sorted(self._plugins[kind])

    def plugins(self, kind: str | None = None) -> Iterator[Plugin]:
        """Every plug-in (of ``kind``), kinds in ``PLUGIN_KINDS`` order, names sorted; discovers first."""
        if not self._discovery.done:
            self.discover()
        for each in PLUGIN_KINDS if kind is None else (kind,):
            _check_kind(each)
            for name in sorted(self._plugins[each]):
                yield self._plugins[each][name]

    def unknown_message(self, kind: str, name: str) -> str:
        """``unknown executor 'rey' (did you mean 'ray'?)``, or the list of known names."""
        known = sorted({*self._plugins[kind], *self._aliases[kind]})
        close = difflib.get_close_matches(str(name), known, n=1)
        if close:
            return f"unknown {KIND_WORDS[kind]} {name!r} (did you mean {close[0]!r}?)"
        listed = ", ".join(sorted(self._plugins[kind])) or "none installed"
        return f"unknown {KIND_WORDS[kind]} {name!r}; known: {listed}"

    @property
    def problems(self) -> list[str]:
        """Entry points that failed to load (``jurybox plugins`` shows them; nothing else fails for them)."""
        return list(self._discovery.problems)

    def discover(self) -> list[str]:
        """Import every module of the ``jurybox`` entry-point group once; returns what failed to load.

        A package whose entry point fails (a broken install, a missing dependency) is
        reported, not raised: one bad plug-in must not stop every run.
        """
        with self._lock:
            if self._discovery.done:
                return list(self._discovery.problems)
            self._discovery.done = True
            for entry in _entry_points():
                distribution = getattr(getattr(entry, "dist", None), "name", None) or entry.value
                self._registering = distribution
                try:
                    loaded = entry.load()
                    if callable(loaded) and ":" in entry.value:
                        loaded()  # an entry point may name a function that registers
                except Exception as error:
                    self._discovery.problems.append(
                        f"entry point {entry.name} = {entry.value} ({distribution}): {type(error).__name__}: {error}"
                    )
                finally:
                    self._registering = ""
            return list(self._discovery.problems)

    def _find(self, kind: str, name: str) -> Plugin | None:
        plugins = self._plugins[kind]
        found = plugins.get(name)
        if found is None and name in self._aliases[kind]:
            found = plugins.get(self._aliases[kind][name])
        return found


def _check_kind(kind: str) -> None:
    if kind not in PLUGIN_KINDS:
        raise ValueError(f"plug-in kind must be one of {', '.join(PLUGIN_KINDS)}, got {kind!r}")


def _entry_points() -> list[metadata.EntryPoint]:
    # jurybox's own entry points first, so an outside package may replace a built-in on purpose.
    found = list(metadata.entry_points(group=ENTRY_POINT_GROUP))
    return sorted(found, key=lambda e: (getattr(getattr(e, "dist", None), "name", "") != "jurybox", e.name))


def _import_target(plugin: Plugin) -> Any:
    module_name, _, attribute = str(plugin.target).partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        hint = f": pip install 'jurybox[{plugin.extra}]'" if plugin.extra else ""
        missing = getattr(error, "name", None) or str(error)
        raise PluginUnavailableError(
            f"the {plugin.name} {KIND_WORDS[plugin.kind]} needs {missing!s}, which is not installed{hint}"
        ) from error
    value: Any = module
    for part in attribute.split("."):
        try:
            value = getattr(value, part)
        except AttributeError as error:
            raise PluginUnavailableError(
                f"the {plugin.name} {KIND_WORDS[plugin.kind]} points at {plugin.target!r}, which does not exist"
            ) from error
    return value


def _first_line(doc: str | None) -> str:
    return (doc or "").strip().split("\n", 1)[0].strip()


def _caller_module(target: Any) -> str:
    if isinstance(target, str):
        return target.partition(":")[0]
    return str(getattr(target, "__module__", "") or "")


def plugin_registrar(kind: str, **defaults: Any) -> Callable[..., Any]:
    """A decorator that registers what it decorates as a plug-in of ``kind`` in the default registry.

    Example:
        >>> register_report = plugin_registrar("report")
        >>> @register_report("csv")
        ... def write_csv(report, path): ...
    """
    _check_kind(kind)

    def named(name: str, **options: Any) -> Callable[[Any], Any]:
        def register(target: Any) -> Any:
            _DEFAULT.register(kind, name, target, **{**defaults, **options})
            return target

        return register

    return named


_DEFAULT = PluginRegistry(discover=True)
