"""Agent adapters by name: the ``agent`` plug-ins a suite's ``agent: {KEY: settings}`` names.

Each adapter module defines one ``AgentAdapter`` (how its settings become a
``Target``, which other keys of the mapping it reads, what its settings look like
for the suite schema). jurybox's own are registered below by import path, so a
suite pays only for the adapter it names; an outside package registers its own
with ``register_adapter`` (found through the ``jurybox`` entry points), and
``agent: {myadapter: {...}}`` then works in a suite like a built-in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jurybox.core import KIND_AGENT, PluginRegistry

if TYPE_CHECKING:
    from jurybox.agents._target import Target

BUILT_IN = ("python", "openai", "http", "mcp")
"""jurybox's own adapters, in the order messages list them (an installed package's come after)."""


@dataclass(frozen=True)
class AgentAdapter:
    """How a suite's ``agent:`` mapping becomes a ``Target``, for one adapter key.

    Attributes:
        build: ``build(settings, *, name, base_dir, spec) -> Target``: ``settings`` is the value
            under the adapter's key, ``name`` the mapping's ``name`` (or None), ``base_dir`` the
            suite's folder and ``spec`` the whole mapping. Raises ``TargetConfigError`` (or
            ``ValueError``) naming the field for a bad setting.
        keys: The other keys of the ``agent:`` mapping it reads beside its own, each with a JSON
            Schema of its value for ``jurybox schema suite`` (``{}``: any); ``name`` is always allowed.
        settings_mapping: Whether its settings must be a mapping (the python adapter's is ``"module:attr"``).
        settings_schema: A JSON Schema of its settings, for ``jurybox schema suite`` (None: any value).
    """

    build: Callable[..., Target]
    keys: Mapping[str, Mapping[str, Any]] = field(default_factory=dict, compare=False)
    settings_mapping: bool = True
    settings_schema: Mapping[str, Any] | None = field(default=None, compare=False)


def as_adapter(loaded: Any) -> AgentAdapter:
    """An ``AgentAdapter`` as registered, or one around a plain ``build(settings, *, name, base_dir)`` function.

    Raises:
        TypeError: it is neither.
    """
    if isinstance(loaded, AgentAdapter):
        return loaded
    if not callable(loaded):
        raise TypeError(f"an agent adapter is an AgentAdapter or a build function, got {loaded!r}")

    def build(settings: Any, *, name: str | None, base_dir: Path | None, spec: Mapping[str, Any]) -> Target:
        target: Target = loaded(settings, name=name, base_dir=base_dir)
        return target

    return AgentAdapter(build=build)


def register_adapter(
    name: str,
    target: AgentAdapter | Callable[..., Target] | str,
    *,
    summary: str = "",
    extra: str | None = None,
    requires: tuple[str, ...] = (),
    aliases: tuple[str, ...] = (),
    registry: PluginRegistry | None = None,
) -> None:
    """Register an agent adapter, so a suite's ``agent: {name: settings}`` uses it.

    Args:
        name: The key in the suite's ``agent:`` mapping.
        target: An ``AgentAdapter``, a ``build(settings, *, name, base_dir) -> Target`` function,
            or ``"package.module:ADAPTER"`` to import only when a suite names it.
        summary: One line for ``jurybox plugins`` (default: the first line of the build function's docstring).
        extra: The extra that installs its dependency, for the install hint.
        requires: The import names of that dependency.
        aliases: Other keys it answers to.
        registry: Where to register it (default: the process-wide registry).
    """
    if not summary and isinstance(target, AgentAdapter):
        summary = (target.build.__doc__ or "").strip().split("\n", 1)[0]
    (registry or PluginRegistry.default()).register(
        KIND_AGENT, name, target, aliases=aliases, summary=summary, extra=extra, requires=requires
    )


def adapter_names() -> list[str]:
    """Every adapter key: jurybox's own in their usual order, then the installed plug-ins' by name."""
    names = PluginRegistry.default().names(KIND_AGENT)
    return [name for name in BUILT_IN if name in names] + [name for name in names if name not in BUILT_IN]


register_adapter(
    "python",
    "jurybox.agents._python:ADAPTER",
    summary="a Python function or agent factory in this process (module:attribute)",
)
register_adapter("openai", "jurybox.agents._openai:ADAPTER", summary="an OpenAI-compatible chat or Responses endpoint")
register_adapter("http", "jurybox.agents._http:ADAPTER", summary="any HTTP endpoint: request template, reply paths")
register_adapter(
    "mcp",
    "jurybox.agents._mcp:ADAPTER",
    summary="an MCP server's tools, driven by a chat model (or called directly)",
    extra="mcp",
    requires=("mcp",),
)
