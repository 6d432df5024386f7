"""make_target: turn a suite's ``agent:`` mapping into a Target, through the adapter its key names."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jurybox.agents._adapter import BUILT_IN, AgentAdapter, adapter_names, as_adapter
from jurybox.agents._errors import TargetConfigError
from jurybox.agents._target import Target
from jurybox.core import KIND_AGENT, Plugin, PluginError, PluginRegistry

ADAPTERS = BUILT_IN
"""jurybox's own adapter keys; ``adapter_names()`` adds those installed plug-ins register."""


def make_target(spec: Mapping[str, Any], *, base_dir: Path | None = None) -> Target:
    """Build the adapter a suite's ``agent:`` mapping asks for.

    Args:
        spec: Exactly one adapter key (``python: "module:attr"``, ``openai: {...}``,
            ``http: {...}``, ``mcp: {...}``, or one an installed plug-in registers) plus
            that adapter's options (see docs/agents.md).
        base_dir: The suite file's folder: put on ``sys.path`` for Python
            agents and used to resolve relative paths.

    Raises:
        TargetConfigError: the spec is malformed, or its adapter cannot be loaded here; the
            message names the field.
    """
    if not isinstance(spec, Mapping):
        raise TargetConfigError(f"agent: expected a mapping such as {{python: 'my_agent:respond'}}, got {spec!r}")
    registry = PluginRegistry.default()
    chosen = _adapter_keys(spec, registry)
    if not chosen and not registry.discovered:  # maybe an installed package's adapter
        registry.discover()
        chosen = _adapter_keys(spec, registry)
    if len(chosen) != 1:
        known = adapter_names()
        found = ", ".join(key for key, _ in chosen) if chosen else "none"
        hint = ""
        if not chosen:  # a typo of an adapter's key ("pythn") says which one was meant
            guesses = {str(key): difflib.get_close_matches(str(key), known, n=1) for key in spec}
            hint = "".join(f"; {key!r}: did you mean {close[0]!r}?" for key, close in guesses.items() if close)
        raise TargetConfigError(f"agent: give exactly one of {', '.join(known)} (found: {found}){hint}")
    key, plugin = chosen[0]
    try:
        adapter = as_adapter(registry.load(KIND_AGENT, plugin.name))
    except (PluginError, TypeError) as error:
        raise TargetConfigError(f"agent.{key}: {error}") from None
    allowed = {key, "name", *adapter.keys}
    unknown = sorted(str(other) for other in spec if other not in allowed)
    if unknown:
        valid = ", ".join(sorted(allowed))
        raise TargetConfigError(f"agent: unknown key(s) {', '.join(unknown)} for a {key} agent; valid: {valid}")
    name = spec.get("name")
    if name is not None and (not isinstance(name, str) or not name):
        raise TargetConfigError(f"agent.name: expected a non-empty string, got {name!r}")
    settings = spec[key]
    if adapter.settings_mapping and not isinstance(settings, Mapping):
        raise TargetConfigError(f"agent.{key}: expected a mapping of settings, got {settings!r}")
    return _built(adapter, key, settings, name=name, base_dir=base_dir, spec=spec)


def _adapter_keys(spec: Mapping[str, Any], registry: PluginRegistry) -> list[tuple[str, Plugin]]:
    """The keys of ``spec`` that name an adapter (by name or alias), in the order messages list adapters."""
    found = [(key, registry.get(KIND_AGENT, key)) for key in spec if isinstance(key, str)]
    named = [(key, plugin) for key, plugin in found if plugin is not None]
    order = {name: index for index, name in enumerate(BUILT_IN)}
    return sorted(named, key=lambda pair: (order.get(pair[1].name, len(order)), pair[1].name))


def _built(
    adapter: AgentAdapter,
    key: str,
    settings: Any,
    *,
    name: str | None,
    base_dir: Path | None,
    spec: Mapping[str, Any],
) -> Target:
    try:
        target = adapter.build(settings, name=name, base_dir=base_dir, spec=spec)
    except TargetConfigError:
        raise
    except (ValueError, TypeError, LookupError) as error:  # a plug-in's own word for a bad setting
        raise TargetConfigError(f"agent.{key}: {error}") from error
    if not isinstance(target, Target):
        raise TargetConfigError(
            f"agent.{key}: the adapter returned {type(target).__name__}, not a Target "
            "(name, respond, close_session, aclose)"
        )
    return target
