"""make_target: turn a suite's ``agent:`` mapping into a Target."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jurybox.agents._errors import TargetConfigError
from jurybox.agents._target import Target

ADAPTERS = ("python", "openai", "http", "mcp")
# Keys each adapter reads next to its own key (the rest of an adapter's settings live under it).
_SHARED_KEYS = {
    "python": {"python", "kind", "options", "close_session", "threads", "name"},
    "openai": {"openai", "name"},
    "http": {"http", "name"},
    "mcp": {"mcp", "name"},
}


def make_target(spec: Mapping[str, Any], *, base_dir: Path | None = None) -> Target:
    """Build the adapter a suite's ``agent:`` mapping asks for.

    Args:
        spec: Exactly one of ``python: "module:attr"``, ``openai: {...}``,
            ``http: {...}`` or ``mcp: {...}``, plus that adapter's options
            (see docs/agents.md).
        base_dir: The suite file's folder: put on ``sys.path`` for Python
            agents and used to resolve relative paths.

    Raises:
        TargetConfigError: the spec is malformed; the message names the field.
    """
    if not isinstance(spec, Mapping):
        raise TargetConfigError(f"agent: expected a mapping such as {{python: 'my_agent:respond'}}, got {spec!r}")
    chosen = [key for key in ADAPTERS if key in spec]
    if len(chosen) != 1:
        found = ", ".join(chosen) if chosen else "none"
        hint = ""
        if not chosen:  # a typo of an adapter's key ("pythn") says which one was meant
            guesses = {str(key): difflib.get_close_matches(str(key), ADAPTERS, n=1) for key in spec}
            hint = "".join(f"; {key!r}: did you mean {close[0]!r}?" for key, close in guesses.items() if close)
        raise TargetConfigError(f"agent: give exactly one of {', '.join(ADAPTERS)} (found: {found}){hint}")
    adapter = chosen[0]
    unknown = sorted(str(key) for key in spec if key not in _SHARED_KEYS[adapter])
    if unknown:
        valid = ", ".join(sorted(_SHARED_KEYS[adapter]))
        raise TargetConfigError(f"agent: unknown key(s) {', '.join(unknown)} for a {adapter} agent; valid: {valid}")
    name = spec.get("name")
    if name is not None and (not isinstance(name, str) or not name):
        raise TargetConfigError(f"agent.name: expected a non-empty string, got {name!r}")
    if adapter == "python":
        from jurybox.agents._python import python_target

        return python_target(spec, base_dir=base_dir)
    options = spec[adapter]
    if not isinstance(options, Mapping):
        raise TargetConfigError(f"agent.{adapter}: expected a mapping of settings, got {options!r}")
    if adapter == "openai":
        from jurybox.agents._openai import openai_target

        return openai_target(options, name=name)
    if adapter == "http":
        from jurybox.agents._http import http_target

        return http_target(options, name=name)
    from jurybox.agents._mcp import mcp_target

    return mcp_target(options, name=name, base_dir=base_dir)
