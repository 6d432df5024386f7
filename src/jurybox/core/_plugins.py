"""Plug-ins of every kind, by name: judges, model providers, agent adapters, executors, report formats, exporters.

One registry serves every kind, the way pytest and Inspect AI find their plug-ins:

- A package registers its plug-ins where they are defined, when it is imported
  (``register(kind, name, target)``). A plug-in that needs an optional dependency
  is registered by its import path (``"package.module:attribute"``) and imported
  only when something asks for it; an ``ImportError`` then becomes a
  ``PluginUnavailableError`` naming the extra to install.
- Outside packages are found through the ``jurybox`` entry-point group. An entry
  point names a module (importing it registers its plug-ins, as an Inspect AI
  extension's ``_registry`` module does) or a function, which is called with the
  registry. jurybox declares its own ``executors`` package there too, because the
  run engine, a lower layer, must find them without importing them. Discovery runs
  once, on the first name the registry does not know (or when a listing asks).
- An entry point that fails to load is kept as a problem (``problems``), shown by
  ``jurybox plugins`` and named in "unknown ..." messages; it never stops a run
  that does not use it.

Only the standard library is used: ``jurybox.core`` stays dependency-free.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import inspect
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from importlib import metadata

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

JURYBOX_DISTRIBUTION = "jurybox"
"""The distribution a plug-in registered by jurybox's own modules comes from."""


class PluginError(LookupError):
    """A plug-in that cannot be had: an unknown name (``UnknownPluginError``) or one that fails to load."""


class UnknownPluginError(PluginError):
    """No plug-in of that kind has that name; the message says the closest name or lists the known ones."""


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
        extra: The extra of its distribution that brings its optional dependency, for the install hint.
        requires: The import names of that optional dependency (``("ray",)``), so whether it is
            installed can be told without importing anything.
        details: What the rest of jurybox needs to know about it without loading it (a provider's
            key variable, say); each kind says what it keeps here.
        module: The module that registered it (or, for a lazy target, the module it points at).
        distribution: The installed distribution it came from: ``jurybox``, or the one whose entry
            point registered it; None for a module imported by hand (a suite's ``plugins:``).
    """

    kind: str
    name: str
    target: Any
    aliases: tuple[str, ...] = ()
    summary: str = ""
    extra: str | None = None
    requires: tuple[str, ...] = ()
    details: Any = None
    module: str = ""
    distribution: str | None = None

    @property
    def lazy(self) -> bool:
        """True while the plug-in is known by its import path only."""
        return isinstance(self.target, str)

    @property
    def origin(self) -> str:
        """Where it came from, for people: the distribution, else the module that registered it."""
        return self.distribution or self.module or "?"

    def install_hint(self) -> str:
        """``pip install 'jurybox[ray]'`` (or the outside distribution's extra); "" without an extra.

        A plug-in registered lazily is imported only when used, so its extra is named then.
        """
        if not self.extra:
            return ""
        if self.distribution is None:  # registered by a module imported by hand: its package is not known
            return f"install the {self.extra!r} extra of the package that provides {self.module or self.name}"
        return f"pip install '{self.distribution}[{self.extra}]'"

    def missing(self) -> tuple[str, ...]:
        """The ``requires`` that are not installed here (found without importing them)."""
        return tuple(name for name in self.requires if not _installed(name))


@dataclass
class _Discovery:
    started: bool = False  # set as it begins: a lookup made while an entry point loads must not recurse
    finished: bool = False  # set when every entry point was loaded: other threads wait until then
    problems: list[str] = field(default_factory=list)


class PluginRegistry:
    """Kind and name -> plug-in. ``PluginRegistry.default()`` is the process-wide one.

    Args:
        discover: Read the ``jurybox`` entry points on the first name it does not know
            (the default registry does; a registry made for a test need not).

    Example:
        >>> registry = PluginRegistry()
        >>> registry.register("report", "csv", "my_package.reports:CSV", summary="one row per case")
        >>> registry.names("report")
        ['csv']
    """

    def __init__(self, *, discover: bool = False) -> None:
        self._plugins: dict[str, dict[str, Plugin]] = {kind: {} for kind in PLUGIN_KINDS}
        self._aliases: dict[str, dict[str, str]] = {kind: {} for kind in PLUGIN_KINDS}
        self._loaded: dict[tuple[str, str], Any] = {}
        self._discovery = _Discovery(started=not discover, finished=not discover)
        # Two locks: registering never waits for a discovery, which imports modules that register
        # (a thread importing one of them while another discovers must not deadlock).
        self._lock = threading.RLock()
        self._discovering = threading.RLock()
        self._local = threading.local()  # the distribution whose entry point is loading, per thread
        self._generation = 0

    @classmethod
    def default(cls) -> PluginRegistry:
        """The registry every part of jurybox reads, filled by imports and the ``jurybox`` entry points."""
        return _DEFAULT

    @property
    def generation(self) -> int:
        """A number that changes whenever a plug-in is registered (for caches of what the registry holds)."""
        return self._generation

    def register(
        self,
        kind: str,
        name: str,
        target: Any,
        *,
        aliases: tuple[str, ...] | list[str] = (),
        summary: str = "",
        extra: str | None = None,
        requires: tuple[str, ...] | list[str] = (),
        details: Any = None,
        module: str | None = None,
    ) -> Plugin:
        """Add (or replace) a plug-in.

        Args:
            kind: One of ``PLUGIN_KINDS``.
            name: Its name.
            target: The plug-in, or ``"package.module:attribute"`` to import when first used.
            aliases: Other names it answers to.
            summary: One line on what it is (default: the first line of a function's or class's docstring).
            extra: The extra that brings its optional dependency (``"ray"``: ``pip install 'jurybox[ray]'``).
            requires: The import names of that dependency (``("ray",)``), checked without importing.
            details: What the kind needs to know about it before loading it (see ``Plugin.details``).
            module: The module registering it (default: the target's module).

        Returns:
            The plug-in as registered.

        Raises:
            ValueError: an unknown kind, an empty name or alias, or a lazy target that is not
                ``module:attribute``.
        """
        _check_kind(kind)
        if not isinstance(name, str) or not name:
            raise ValueError(f"a {KIND_WORDS[kind]} plug-in needs a name, got {name!r}")
        if any(not isinstance(alias, str) or not alias for alias in aliases):
            raise ValueError(f"{KIND_WORDS[kind]} {name!r}: aliases must be non-empty strings, got {aliases!r}")
        if isinstance(target, str) and not _is_import_path(target):
            raise ValueError(
                f"{KIND_WORDS[kind]} {name!r}: a lazy target is 'package.module:attribute', got {target!r}"
            )
        if not summary and (inspect.isroutine(target) or inspect.isclass(target)):
            summary = _first_line(target.__doc__)  # an instance's class docstring says what the class is, not it
        registering = getattr(self._local, "distribution", None)
        where = module or _module_of(target)
        distribution = registering or (JURYBOX_DISTRIBUTION if _is_jurybox(where) else None)
        plugin = Plugin(
            kind, name, target, tuple(aliases), summary, extra, tuple(requires), details, where, distribution
        )
        with self._lock:
            replaced = self._plugins[kind].get(name)
            if replaced is not None:
                self._drop_aliases(replaced)
            self._plugins[kind][name] = plugin
            self._loaded.pop((kind, name), None)
            for alias in plugin.aliases:
                self._aliases[kind][alias] = name
            self._generation += 1
        return plugin

    def unregister(self, kind: str, name: str) -> Plugin | None:
        """Remove the plug-in ``name`` of ``kind`` (and its aliases); returns it, or None when there was none."""
        _check_kind(kind)
        with self._lock:
            removed = self._plugins[kind].pop(name, None)
            if removed is not None:
                self._drop_aliases(removed)
                self._loaded.pop((kind, name), None)
                self._generation += 1
            return removed

    def plugin(self, kind: str, name: str) -> Plugin:
        """The plug-in ``name`` of ``kind`` (by name or alias), discovering entry points on a miss.

        Raises:
            UnknownPluginError: no such plug-in; the message says the closest name or lists the known ones.
        """
        _check_kind(kind)
        found = self._find(kind, name)
        if found is None and not self._discovery.finished:
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
        with self._lock:
            if key in self._loaded:
                return self._loaded[key]
        target = plugin.target
        if isinstance(target, str):
            target = _import_target(plugin)
        with self._lock:
            if self._plugins[kind].get(plugin.name) is plugin:  # not replaced while importing
                self._loaded[key] = target
        return target

    def get(self, kind: str, name: str) -> Plugin | None:
        """The plug-in, or None (no discovery, no error): for code that only asks whether one is registered."""
        _check_kind(kind)
        return self._find(kind, name)

    def names(self, kind: str, *, discover: bool = True) -> list[str]:
        """Every name of ``kind``, sorted (after discovering entry points, unless told not to)."""
        _check_kind(kind)
        if discover and not self._discovery.finished:
            self.discover()
        with self._lock:
            return sorted(self._plugins[kind])

    def plugins(self, kind: str | None = None, *, discover: bool = True) -> Iterator[Plugin]:
        """Every plug-in (of ``kind``), kinds in ``PLUGIN_KINDS`` order, names sorted; discovers first."""
        if kind is not None:
            _check_kind(kind)
        if discover and not self._discovery.finished:
            self.discover()
        with self._lock:
            listed = [
                self._plugins[each][name]
                for each in (PLUGIN_KINDS if kind is None else (kind,))
                for name in sorted(self._plugins[each])
            ]
        yield from listed

    def status(self, plugin: Plugin) -> str:
        """``loaded``, ``lazy`` (imported when first used) or ``needs X: pip install ...`` (a dependency is missing)."""
        missing = plugin.missing()
        if missing:
            hint = plugin.install_hint()
            return f"needs {', '.join(missing)}" + (f": {hint}" if hint else "")
        with self._lock:
            loaded = (plugin.kind, plugin.name) in self._loaded
        return "lazy" if plugin.lazy and not loaded else "loaded"

    def unknown_message(self, kind: str, name: str) -> str:
        """``unknown executor 'rey' (did you mean 'ray'?)``, or the list of known names.

        Entry points that failed to load are named too: the plug-in may be in one of them.
        """
        with self._lock:
            listed = ", ".join(sorted(self._plugins[kind])) or "none installed"
        close = self.closest(kind, name)
        if close is not None:
            message = f"unknown {KIND_WORDS[kind]} {name!r} (did you mean {close!r}?)"
        else:
            message = f"unknown {KIND_WORDS[kind]} {name!r}; known: {listed}"
        if self._discovery.problems:
            message += f" ({len(self._discovery.problems)} plug-in entry point(s) failed to load: see jurybox plugins)"
        return message

    def closest(self, kind: str, name: str) -> str | None:
        """The registered name or alias of ``kind`` closest to ``name`` (a likely typo), or None."""
        _check_kind(kind)
        with self._lock:
            known = sorted({*self._plugins[kind], *self._aliases[kind]})
        close = difflib.get_close_matches(str(name), known, n=1)
        return close[0] if close else None

    @property
    def problems(self) -> list[str]:
        """Entry points that failed to load (``jurybox plugins`` shows them; nothing else fails for them)."""
        return list(self._discovery.problems)

    @property
    def discovered(self) -> bool:
        """True once the entry points were read (or when this registry does not read them)."""
        return self._discovery.finished

    def discover(self) -> list[str]:
        """Load every entry point of the ``jurybox`` group once; returns what failed to load.

        An entry point naming a module is imported (its plug-ins register themselves); one
        naming a function (``package.module:register``) is called with this registry. A package
        whose entry point fails (a broken install, a missing dependency) is reported, not
        raised: one bad plug-in must not stop every run.
        """
        if self._discovery.finished:
            return list(self._discovery.problems)
        with self._discovering:
            if self._discovery.started:  # finished by another thread, or this one is loading an entry point
                return list(self._discovery.problems)
            self._discovery.started = True
            try:
                self._load_entry_points()
            finally:
                self._discovery.finished = True
            return list(self._discovery.problems)

    def _load_entry_points(self) -> None:
        for entry in _entry_points():
            distribution = _distribution_name(entry)
            self._local.distribution = distribution
            try:
                loaded = entry.load()
                if entry.attr and inspect.isfunction(loaded):
                    loaded(self)
            except Exception as error:  # the package's own code runs here: keep whatever it raises
                self._discovery.problems.append(
                    f"entry point {entry.name} = {entry.value} ({distribution}): {type(error).__name__}: {error}"
                )
            finally:
                self._local.distribution = None

    def copy(self, kinds: tuple[str, ...] = PLUGIN_KINDS) -> PluginRegistry:
        """A registry holding the same plug-ins (of ``kinds``) that changes without changing this one.

        It does not discover: what this one found is copied with it (discovered first).
        """
        for kind in kinds:
            _check_kind(kind)
        if not self._discovery.finished:
            self.discover()
        copied = PluginRegistry()
        with self._lock:
            for kind in kinds:
                copied._plugins[kind] = dict(self._plugins[kind])
                copied._aliases[kind] = dict(self._aliases[kind])
            copied._loaded = {key: value for key, value in self._loaded.items() if key[0] in kinds}
        return copied

    def __len__(self) -> int:
        with self._lock:
            return sum(len(plugins) for plugins in self._plugins.values())

    def count(self, kind: str) -> int:
        """How many plug-ins of ``kind`` are registered now (no discovery)."""
        _check_kind(kind)
        with self._lock:
            return len(self._plugins[kind])

    def _drop_aliases(self, plugin: Plugin) -> None:
        aliases = self._aliases[plugin.kind]
        for alias in plugin.aliases:
            if aliases.get(alias) == plugin.name:  # not one another plug-in took over since
                del aliases[alias]

    def _find(self, kind: str, name: str) -> Plugin | None:
        plugins = self._plugins[kind]
        found = plugins.get(name)
        if found is None:
            canonical = self._aliases[kind].get(name)
            if canonical is not None:
                found = plugins.get(canonical)
        return found


def _check_kind(kind: str) -> None:
    if kind not in PLUGIN_KINDS:
        raise ValueError(f"plug-in kind must be one of {', '.join(PLUGIN_KINDS)}, got {kind!r}")


def _is_import_path(target: str) -> bool:
    module, sep, attribute = target.partition(":")
    return bool(sep and module and attribute) and all(
        part.isidentifier() for part in (*module.split("."), *attribute.split("."))
    )


def _entry_points() -> list[metadata.EntryPoint]:
    from importlib import metadata  # ~40 ms of imports (email parsing): only an unknown name reads entry points

    # jurybox's own entry points first, so an outside package may replace a built-in on purpose.
    found = list(metadata.entry_points(group=ENTRY_POINT_GROUP))
    return sorted(found, key=lambda e: (_distribution_name(e) != JURYBOX_DISTRIBUTION, e.name))


def _distribution_name(entry: metadata.EntryPoint) -> str:
    dist = getattr(entry, "dist", None)
    name = getattr(dist, "name", None) if dist is not None else None
    return str(name) if name else entry.value.partition(":")[0]


def _import_target(plugin: Plugin) -> Any:
    module_name, _, attribute = str(plugin.target).partition(":")
    what = f"the {plugin.name} {KIND_WORDS[plugin.kind]}"
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        hint = plugin.install_hint()
        missing = getattr(error, "name", None) or str(error)
        raise PluginUnavailableError(
            f"{what} needs {missing!s}, which is not installed" + (f": {hint}" if hint else "")
        ) from error
    except Exception as error:  # the plug-in module's own code failed: say so instead of a traceback
        raise PluginUnavailableError(
            f"{what} cannot be loaded: importing {module_name} failed: {type(error).__name__}: {error}"
        ) from error
    value: Any = module
    for part in attribute.split("."):
        try:
            value = getattr(value, part)
        except AttributeError as error:
            raise PluginUnavailableError(f"{what} points at {plugin.target!r}, which does not exist") from error
    return value


def _installed(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a parent package that fails to import, or a bad name
        return False


def _first_line(doc: str | None) -> str:
    return (doc or "").strip().split("\n", 1)[0].strip()


def _module_of(target: Any) -> str:
    if isinstance(target, str):
        return target.partition(":")[0]
    module = getattr(target, "__module__", None)
    if not isinstance(module, str):  # an instance: its class says where it was defined
        module = getattr(type(target), "__module__", "")
    return str(module or "")


def _is_jurybox(module: str) -> bool:
    return module == JURYBOX_DISTRIBUTION or module.startswith(f"{JURYBOX_DISTRIBUTION}.")


def plugin_registrar(kind: str, **defaults: Any) -> Callable[..., Any]:
    """A decorator that registers what it decorates as a plug-in of ``kind`` in the default registry.

    Example:
        >>> register_exporter = plugin_registrar("exporter")
        >>> @register_exporter("otlp", summary="spans to an OpenTelemetry collector")
        ... class OtlpExporter: ...
    """
    _check_kind(kind)

    def named(name: str, **options: Any) -> Callable[[Any], Any]:
        def register(target: Any) -> Any:
            _DEFAULT.register(kind, name, target, **{**defaults, **options})
            return target

        return register

    return named


_DEFAULT = PluginRegistry(discover=True)
