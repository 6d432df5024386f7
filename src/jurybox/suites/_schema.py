"""The JSON Schema of suite files, for editors: generated from the suite models and the plug-in registry.

``suite_schema()`` starts from the pydantic models of ``_spec.py`` (every key, its
type and range) and fills in what they leave open from the registry: each judge
with its options, their types (from the factory's signature) and their docs (from
its docstring) as descriptions; each agent adapter with its settings. An editor
given the schema (``# yaml-language-server: $schema=suite.schema.json``, see
docs/suites.md) completes judge names and options and marks a misspelt key.

The schema checks shape, as an editor can; the loader checks the rest (a judge
option's value, a file that must exist) and stays the authority. The schema is
written in JSON Schema 2020-12 but uses only keywords draft 7 also knows, so
editors that implement draft 7 (VS Code's YAML extension) check files the same way.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from jurybox.agents import AgentAdapter, adapter_names
from jurybox.core import (
    ERROR_POLICIES,
    KIND_AGENT,
    TIER_LLM,
    TIER_LLM_OPERATIONS,
    PluginError,
    PluginRegistry,
    TierPolicy,
)
from jurybox.suites._build import VOTINGS, typed_settings_names
from jurybox.suites._registry import JudgeFactory, JudgeRegistry
from jurybox.suites._spec import CASE_KEY_ALIASES, SuiteModel

DIALECT = "https://json-schema.org/draft/2020-12/schema"
ANY: dict[str, Any] = {}
_BOUNDS = {"ge": "minimum", "le": "maximum", "gt": "exclusiveMinimum", "lt": "exclusiveMaximum"}


def suite_schema(registry: JudgeRegistry | None = None) -> dict[str, Any]:
    """The JSON Schema (2020-12) of a suite file, with every registered judge and agent adapter.

    Args:
        registry: The judges to describe (default: ``JudgeRegistry.default()``, the installed plug-ins' included).
    """
    judges = registry or JudgeRegistry.default()
    schema = SuiteModel.model_json_schema()
    _standard_bounds(schema)
    defs: dict[str, Any] = schema["$defs"]
    for model in ("CaseModel", "RoundModel"):
        properties = defs[model]["properties"]
        properties["judges"] = {"type": "array", "items": {"$ref": "#/$defs/JudgeEntry"}, "title": "Judges"}
        properties["expect_tools"] = _with_shorthand(properties["expect_tools"])
        for alias, canonical in CASE_KEY_ALIASES.items():  # seed 001's names, which the loader accepts
            if canonical in properties:
                properties[alias] = {**properties[canonical], "description": f"Another name for {canonical}."}
    defs["CaseModel"]["properties"]["voting"] = {"$ref": "#/$defs/Voting"}
    defs.update(_judge_defs(judges))
    properties = schema["properties"]
    properties["agent"] = _agent_schema()
    properties["judge_model"] = _judge_model_schema()
    return {
        "$schema": DIALECT,
        "title": "jurybox suite file",
        "description": "A suite: the agent under test, defaults, seed data and cases (docs/suites.md).",
        **{key: value for key, value in schema.items() if key not in ("title", "description")},
    }


# -- judges ----------------------------------------------------------------------------------------


def _judge_defs(registry: JudgeRegistry) -> dict[str, Any]:
    factories = sorted(registry, key=lambda entry: entry.name)
    named = {entry.name: _judge_value(entry) for entry in factories}
    return {
        "JudgeEntry": {
            "description": "A judge: its name, or one key (the name) mapping to its options (jurybox judges).",
            "anyOf": [
                {"enum": sorted(named)},
                {
                    "type": "object",
                    "properties": {
                        **named,
                        "jury": {"$ref": "#/$defs/Jury"},
                        "cascade": {"$ref": "#/$defs/Cascade"},
                        "python": _python_entry(),
                    },
                    "additionalProperties": False,
                    "minProperties": 1,
                    "maxProperties": 1,
                },
            ],
        },
        "Jury": {
            "description": "Several judges, one verdict by voting.",
            "type": "object",
            "properties": {
                "judges": {"type": "array", "items": {"$ref": "#/$defs/JudgeEntry"}, "minItems": 1},
                "voting": {"$ref": "#/$defs/Voting"},
                "errors": {"enum": list(ERROR_POLICIES)},
                "name": {"type": "string"},
            },
            "required": ["judges"],
            "additionalProperties": False,
        },
        "Cascade": {
            "description": "Tiers of judges, cheapest first: a list of tiers, or {name, tiers}.",
            "anyOf": [
                {"$ref": "#/$defs/CascadeTiers"},
                {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "tiers": {"$ref": "#/$defs/CascadeTiers"}},
                    "required": ["tiers"],
                    "additionalProperties": False,
                },
            ],
        },
        "CascadeTiers": {
            "type": "array",
            "minItems": 1,
            "items": {
                "anyOf": [
                    {
                        "type": "object",
                        "properties": {
                            "judges": {"type": "array", "items": {"$ref": "#/$defs/JudgeEntry"}, "minItems": 1},
                            "policy": {"enum": [policy.value for policy in TierPolicy]},
                            "voting": {"$ref": "#/$defs/Voting"},
                            "errors": {"enum": list(ERROR_POLICIES)},
                            "name": {"type": "string"},
                        },
                        "required": ["judges"],
                        "additionalProperties": False,
                    },
                    {"$ref": "#/$defs/JudgeEntry"},
                ]
            },
        },
        "Voting": {
            "description": "How a jury's members decide: a name, or one key with its options ({average: 0.6}).",
            "anyOf": [
                {"type": "null"},
                {"enum": list(VOTINGS)},
                {
                    "type": "object",
                    "propertyNames": {"enum": list(VOTINGS)},
                    "minProperties": 1,
                    "maxProperties": 1,
                },
            ],
        },
    }


def _judge_value(entry: JudgeFactory) -> dict[str, Any]:
    """What may follow ``- NAME:``: nothing, its first argument, or its options by name."""
    hints = _hints(entry.factory)
    settings = typed_settings_names(entry.factory)
    options: dict[str, Any] = {}
    for option in entry.options:
        options[option.name] = {**_json_type(hints.get(option.name)), **_described(option.doc)}
    extra_doc = entry.extra_options.doc if entry.extra_options is not None else ""
    settings_hints = _settings_hints(entry.factory)
    for name in settings:
        options.setdefault(name, {**_json_type(settings_hints.get(name)), **_described(extra_doc)})
    tiers = sorted({entry.tier, TIER_LLM_OPERATIONS} if entry.tier != TIER_LLM else {entry.tier})
    options["tier"] = {"enum": tiers, "description": "Run a deterministic or similarity check in llm_operations."}
    by_name = {
        "type": "object",
        "properties": options,
        # An untyped **options catch-all takes any other keyword.
        "additionalProperties": entry.extra_options is not None and not settings,
    }
    forms: list[dict[str, Any]] = [{"type": "null"}, by_name]
    first = _first_argument(entry.factory)
    if first is not None:
        forms.append({**_json_type(hints.get(first)), "not": {"type": "object"}})
    threshold = f" Default pass mark {entry.threshold}." if entry.threshold is not None else ""
    return {"description": f"{entry.summary} Tier: {entry.tier}.{threshold}".strip(), "anyOf": forms}


def _python_entry() -> dict[str, Any]:
    reference = {"type": "string", "pattern": "^[^:]+:[^:]+$"}
    return {
        "description": "A judge object or function of your own: 'module:attribute', or {ref, options, tier}.",
        "anyOf": [
            reference,
            {
                "type": "object",
                "properties": {"ref": reference, "options": {"type": "object"}, "tier": {"type": "string"}},
                "required": ["ref"],
                "additionalProperties": False,
            },
        ],
    }


def _first_argument(factory: Callable[..., Any]) -> str | None:
    """The parameter a single value fills (``- contains: hello``), or None when it takes keywords only."""
    try:
        parameters = list(inspect.signature(factory).parameters.values())
    except (TypeError, ValueError):
        return None
    first = parameters[0] if parameters else None
    return (
        first.name if first is not None and first.kind in (first.POSITIONAL_ONLY, first.POSITIONAL_OR_KEYWORD) else None
    )


def _hints(factory: Callable[..., Any]) -> dict[str, Any]:
    try:
        return typing.get_type_hints(factory)
    except Exception:  # an annotation that does not resolve: its options are then described without types
        return {}


def _settings_hints(factory: Callable[..., Any]) -> dict[str, Any]:
    """The types of a typed ``**settings: Unpack[SomeTypedDict]`` catch-all's keys."""
    hints = _hints_with_extras(factory)
    for value in hints.values():
        if typing.get_origin(value) is typing.Unpack:
            (typed,) = typing.get_args(value)
            return _hints(typed)
    return {}


def _hints_with_extras(factory: Callable[..., Any]) -> dict[str, Any]:
    try:
        return typing.get_type_hints(factory, include_extras=True)
    except Exception:
        return {}


def _json_type(hint: Any) -> dict[str, Any]:
    """A Python annotation as JSON Schema, for the types YAML can write; ``{}`` (any) for the rest."""
    if hint is None:
        return {}
    if hint is type(None):
        return {"type": "null"}
    simple = {str: "string", bool: "boolean", int: "integer", float: "number"}
    if hint in simple:
        return {"type": simple[hint]}
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Literal:
        return {"enum": list(args)}
    if origin in (typing.Union, types.UnionType):
        members = [_json_type(arg) for arg in args]
        return {} if any(not member for member in members) else {"anyOf": members}
    if origin in (list, tuple, Sequence):
        return {"type": "array", **({"items": _json_type(args[0])} if args and args[0] is not Ellipsis else {})}
    if origin in (dict, Mapping):
        value = _json_type(args[1]) if len(args) == 2 else {}
        return {"type": "object", **({"additionalProperties": value} if value else {})}
    return {}


def _described(doc: str) -> dict[str, str]:
    return {"description": doc} if doc else {}


# -- agent and judge model ------------------------------------------------------------------------


def _agent_schema() -> dict[str, Any]:
    """One alternative per registered adapter: its key (settings), ``name`` and the keys it reads."""
    registry = PluginRegistry.default()
    forms = []
    for name in adapter_names():
        plugin = registry.get(KIND_AGENT, name)
        try:
            adapter = registry.load(KIND_AGENT, name)
        except PluginError:  # not importable here: its settings are left open
            adapter = None
        keys: Mapping[str, Mapping[str, Any]] = {}
        settings: Mapping[str, Any] = ANY
        if isinstance(adapter, AgentAdapter):
            keys, settings = adapter.keys, adapter.settings_schema or ANY
        summary = plugin.summary if plugin is not None else ""
        forms.append(
            {
                "title": name,
                "type": "object",
                "properties": {
                    name: {**_described(summary), **settings},
                    "name": {"type": "string", "minLength": 1, "description": "The agent's name in reports."},
                    **{key: dict(value) for key, value in keys.items()},
                },
                "required": [name],
                "additionalProperties": False,
            }
        )
    return {"description": "The agent under test: exactly one adapter key (docs/agents.md).", "oneOf": forms}


def _judge_model_schema() -> dict[str, Any]:
    return {
        "description": "The LLM judges' model: provider:model, provider:model@BASE_URL, http://host/v1#model, "
        "or a judge fleet {model, endpoints}.",
        "anyOf": [
            {"type": "string", "minLength": 1},
            {
                "type": "object",
                "properties": {
                    "model": {"type": "string", "minLength": 1},
                    "endpoints": {"type": "array", "items": {"type": "string", "pattern": "^https?://"}},
                    "provider": {"type": "string"},
                },
                "required": ["model", "endpoints"],
                "additionalProperties": False,
            },
            {"type": "null"},
        ],
    }


def _with_shorthand(expect_tools: dict[str, Any]) -> dict[str, Any]:
    """``expect_tools: [a, b]`` is short for ``expect_tools: {calls: [a, b]}``."""
    return {"anyOf": [*expect_tools.get("anyOf", [expect_tools]), {"$ref": "#/$defs/ExpectTools/properties/calls"}]}


def _standard_bounds(node: Any) -> None:
    """Bounds as JSON Schema names them: pydantic writes ``ge``/``le`` inside an ``Annotated`` with a validator."""
    if isinstance(node, dict):
        for short, long in _BOUNDS.items():
            if short in node and node.get("type") in ("number", "integer"):
                node[long] = node.pop(short)
        for value in node.values():
            _standard_bounds(value)
    elif isinstance(node, list):
        for value in node:
            _standard_bounds(value)
