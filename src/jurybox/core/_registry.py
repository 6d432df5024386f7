"""Judges by name: one registry of judge factories, collected from ``@judge_factory`` decorators.

Each factory says once, where it is defined, what the rest of jurybox needs to
know about it: its name, the cascade tier its judges run in, its default pass
mark and whether a suite's ``threshold`` replaces it, and its options with their
one-line docs (read from the factory's signature and the ``Args:`` section of its
docstring when it is registered, so the docs cannot drift from the code). Suite
files, ``jurybox judges`` and the docs' judge table all read this registry.

Tiers run cheapest first: deterministic checks, then the offline embedding
similarity judge, then model-backed judges, so a cheap failure spends no tokens.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar, overload

from jurybox.core._docstrings import argument_docs, summary_line
from jurybox.core._plugins import KIND_JUDGE, Plugin, PluginRegistry, PluginUnavailableError, UnknownPluginError

TIER_DETERMINISTIC = "deterministic"
TIER_SIMILARITY = "similarity"
TIER_LLM_OPERATIONS = "llm_operations"
"""Checks of an LLM operation's output, run between similarity and the LLM judges: deterministic or
similarity checks a suite places here with ``tier: llm_operations``, because what they check came from a model."""
TIER_LLM = "llm_judge"
TIERS: tuple[str, ...] = (TIER_DETERMINISTIC, TIER_SIMILARITY, TIER_LLM_OPERATIONS, TIER_LLM)
"""Cascade tiers in the order they run; the store and reports use these names."""

_THRESHOLD = "threshold"  # the option that carries a judge's pass mark


def tier_of(judge: Any, default: str = TIER_DETERMINISTIC) -> str:
    """The tier a judge object runs in: its ``tier`` attribute, or ``default`` when it names none.

    The built-in judge classes set ``tier``; a judge of your own sets it to run
    in a later tier (``tier = "llm_judge"`` for one that calls a model).
    """
    tier = getattr(judge, "tier", None)
    return tier if isinstance(tier, str) and tier in TIERS else default


@dataclass(frozen=True)
class JudgeOption:
    """One keyword option of a judge factory and what it means (from the factory's docstring)."""

    name: str
    doc: str = ""


@dataclass(frozen=True)
class JudgeFactory:
    """A registered judge factory and what the registry knows about it.

    Attributes:
        name: The name a suite file uses for it.
        factory: Builds the judge from the entry's options.
        tier: The cascade tier its judges run in (one of ``TIERS``).
        threshold: Its default pass mark, or None when it takes no ``threshold`` option.
        suite_threshold: Whether a suite's ``defaults.threshold`` (or a case's or round's
            ``threshold``) replaces that default when the entry sets none.
        options: Its named keyword options, in signature order, with their docs.
        extra_options: The doc of its ``**options`` catch-all (e.g. the LLM judges'
            shared settings), or None when it accepts only the named ones.
        summary: The first line of its docstring.
    """

    name: str
    factory: Callable[..., Any]
    tier: str
    threshold: float | None = None
    suite_threshold: bool = False
    options: tuple[JudgeOption, ...] = ()
    extra_options: JudgeOption | None = None
    summary: str = ""
    _accepted: frozenset[str] = field(default=frozenset(), repr=False, compare=False)

    @classmethod
    def describe(
        cls, name: str, factory: Callable[..., Any], *, tier: str, suite_threshold: bool | None = None
    ) -> JudgeFactory:
        """Read a factory's signature and docstring once, so lookups while loading a suite cost nothing.

        Args:
            name: The name to register it under.
            factory: The judge factory.
            tier: The cascade tier its judges run in.
            suite_threshold: Whether a suite's threshold replaces its default pass mark;
                None: yes when it takes a ``threshold`` option.

        Raises:
            ValueError: an unknown tier, or ``suite_threshold=True`` for a factory without a ``threshold``.
            TypeError: the factory is not callable.
        """
        if tier not in TIERS:
            raise ValueError(f"tier must be one of {', '.join(TIERS)}; got {tier!r}")
        if not callable(factory):
            raise TypeError(f"judge factory {name!r} is not callable: {factory!r}")
        try:
            parameters = list(inspect.signature(factory).parameters.values())
        except (TypeError, ValueError):  # a builtin or C callable without a readable signature
            parameters = []
        docs = argument_docs(getattr(factory, "__doc__", None))
        named = [p for p in parameters if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        catch_all = next((p for p in parameters if p.kind is p.VAR_KEYWORD), None)
        takes_threshold = any(p.name == _THRESHOLD for p in named)
        if suite_threshold and not takes_threshold:
            raise ValueError(f"judge {name!r} declares suite_threshold but its factory takes no 'threshold' option")
        default = next((p.default for p in named if p.name == _THRESHOLD), None)
        return cls(
            name=name,
            factory=factory,
            tier=tier,
            threshold=_number(default),
            suite_threshold=takes_threshold if suite_threshold is None else suite_threshold,
            options=tuple(JudgeOption(p.name, docs.get(p.name, "")) for p in named),
            extra_options=(
                None if catch_all is None else JudgeOption(f"**{catch_all.name}", docs.get(f"**{catch_all.name}", ""))
            ),
            summary=summary_line(getattr(factory, "__doc__", None)),
            _accepted=frozenset(p.name for p in named),
        )

    def parameters(self) -> list[str]:
        """The named keyword options, for error messages."""
        return [option.name for option in self.options]

    def accepts(self, option: str) -> bool:
        """True when the factory takes ``option`` (by name, or through its ``**options`` catch-all)."""
        return option in self._accepted or self.extra_options is not None


class JudgeRegistry:
    """Name -> judge factory: the ``judge`` plug-ins of a ``PluginRegistry``, as ``JudgeFactory`` entries.

    ``JudgeRegistry.default()`` reads the process-wide plug-in registry, which ``@judge_factory``
    fills; so a judge has a name, aliases, a summary and "did you mean" like every other plug-in,
    and a judge an installed package registers through the ``jurybox`` entry points is found
    the first time a suite names it.

    Example:
        >>> registry = JudgeRegistry.default().copy()
        >>> registry.register("mentions_price", lambda: my_judge, tier="deterministic")
    """

    def __init__(
        self, factories: dict[str, JudgeFactory] | None = None, *, plugins: PluginRegistry | None = None
    ) -> None:
        self._plugins = plugins if plugins is not None else PluginRegistry()
        self._described: dict[tuple[str, int], JudgeFactory] = {}
        for entry in (factories or {}).values():
            self._add(entry)

    @classmethod
    def default(cls) -> JudgeRegistry:
        """The process-wide registry: every ``@judge_factory`` imported so far, and the installed plug-ins'.

        The built-in judges are in it once ``jurybox.judges`` and ``jurybox.llm`` are
        imported (``jurybox.suites`` imports both); your own once their module is.
        """
        return _DEFAULT

    @property
    def plugins(self) -> PluginRegistry:
        """The plug-in registry it reads (kind ``judge``)."""
        return self._plugins

    def copy(self) -> JudgeRegistry:
        """A registry of the same judges that can be changed without changing this one."""
        return JudgeRegistry(plugins=self._plugins.copy((KIND_JUDGE,)))

    def register(
        self,
        name: str,
        factory: Callable[..., Any],
        *,
        tier: str = TIER_DETERMINISTIC,
        suite_threshold: bool | None = None,
        aliases: tuple[str, ...] = (),
    ) -> None:
        """Add (or replace) a judge factory under ``name``; see ``JudgeFactory.describe`` for the arguments.

        Args:
            name: The name suite files use.
            factory: Builds the judge.
            tier: The cascade tier its judges run in.
            suite_threshold: Whether a suite's threshold replaces its default pass mark.
            aliases: Other names it answers to.
        """
        self._add(JudgeFactory.describe(name, factory, tier=tier, suite_threshold=suite_threshold), aliases)

    def _add(self, entry: JudgeFactory, aliases: tuple[str, ...] = ()) -> None:
        module = getattr(entry.factory, "__module__", None)
        self._plugins.register(
            KIND_JUDGE, entry.name, entry, aliases=aliases, summary=entry.summary, module=module or None
        )

    def get(self, name: str) -> JudgeFactory | None:
        """The judge ``name`` (or alias), or None; a miss reads the installed plug-ins once first.

        Raises:
            PluginUnavailableError: it is registered lazily and its module cannot be imported here.
        """
        plugin = self._plugins.get(KIND_JUDGE, name)
        if plugin is None and not self._plugins.discovered:
            try:
                plugin = self._plugins.plugin(KIND_JUDGE, name)
            except UnknownPluginError:
                return None
        return None if plugin is None else self._factory(plugin)

    def names(self) -> list[str]:
        return self._plugins.names(KIND_JUDGE)

    def unknown_message(self, name: str) -> str:
        """``unknown judge 'containz' (did you mean 'contains'?)``."""
        return self._plugins.unknown_message(KIND_JUDGE, name)

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        try:
            self._plugins.plugin(KIND_JUDGE, name)
        except UnknownPluginError:
            return False
        return True

    def __iter__(self) -> Iterator[JudgeFactory]:
        """Every judge that can be loaded here (one whose module cannot be imported is left out)."""
        for plugin in self._plugins.plugins(KIND_JUDGE):
            try:
                yield self._factory(plugin)
            except PluginUnavailableError:
                continue

    def __len__(self) -> int:
        if not self._plugins.discovered:
            self._plugins.discover()
        return self._plugins.count(KIND_JUDGE)

    def _factory(self, plugin: Plugin) -> JudgeFactory:
        loaded = self._plugins.load(KIND_JUDGE, plugin.name)
        if isinstance(loaded, JudgeFactory):
            return loaded
        # Registered lazily ("package.module:factory"): read once its module is imported.
        key = (plugin.name, id(loaded))
        described = self._described.get(key)
        if described is None:
            details = plugin.details if isinstance(plugin.details, dict) else {}
            described = JudgeFactory.describe(
                plugin.name,
                loaded,
                tier=details.get("tier", tier_of(loaded)),
                suite_threshold=details.get("suite_threshold"),
            )
            self._described[key] = described
        return described


_DEFAULT = JudgeRegistry(plugins=PluginRegistry.default())

F = TypeVar("F", bound=Callable[..., Any])


@overload
def judge_factory(factory: F, /) -> F: ...


@overload
def judge_factory(
    name: str | None = None,
    *,
    tier: str = TIER_DETERMINISTIC,
    suite_threshold: bool | None = None,
    aliases: tuple[str, ...] = (),
) -> Callable[[F], F]: ...


def judge_factory(
    name: Any = None,
    *,
    tier: str = TIER_DETERMINISTIC,
    suite_threshold: bool | None = None,
    aliases: tuple[str, ...] = (),
) -> Any:
    """Register a judge factory by name in the default registry, so suite files can use it.

    The factory is returned unchanged. Its keyword arguments are the entry's options
    (``- name: {option: value}``; a single value is its first argument), documented
    by the ``Args:`` section of its docstring.

    Args:
        name: The name in suite files (default: the function's name).
        tier: The cascade tier its judges run in: ``deterministic`` (default),
            ``similarity``, ``llm_operations`` or ``llm_judge``.
        suite_threshold: Whether a suite's ``threshold`` replaces its default pass
            mark (default: when it takes a ``threshold`` option).
        aliases: Other names suite files may use for it.

    Raises:
        ValueError: an unknown tier, or ``suite_threshold=True`` without a ``threshold`` option.

    Example:
        >>> @judge_factory(tier="deterministic")
        ... def mentions(word: str) -> Judge:
        ...     '''Pass when the output mentions ``word``.
        ...
        ...     Args:
        ...         word: The word to look for.
        ...     '''
        ...     return judge(name=f"mentions({word})")(lambda ctx: word in ctx.output)
    """
    if callable(name):  # used bare: @judge_factory
        factory: Callable[..., Any] = name
        _DEFAULT.register(factory.__name__, factory, tier=tier, suite_threshold=suite_threshold)
        return factory

    def register(factory: F) -> F:
        _DEFAULT.register(
            name or factory.__name__, factory, tier=tier, suite_threshold=suite_threshold, aliases=tuple(aliases)
        )
        return factory

    return register


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
