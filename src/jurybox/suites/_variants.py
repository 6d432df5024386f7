"""``variants:``: each variant's ``agent:`` mapping, made from the suite's and checked while the suite loads.

A variant says what it changes (the model, the system prompt, any option of the
adapter, the environment, the agent spec itself, the judge model); what it
runs is the suite's ``agent:`` with those changes, built here once as the
runner will build it, so a setting the adapter does not know is a
``file:line: variants[i].field`` problem before anything runs.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jurybox.agents import TargetConfigError, adapter_names, make_target
from jurybox.suites._case import seeded_agent
from jurybox.suites._errors import Problem
from jurybox.suites._experiment_spec import VariantModel
from jurybox.suites._seed import Seed
from jurybox.suites._yaml import Located, format_path

VARIANT_MARK = "@"
"""Between a suite's name and its variant's: the runs of variant ``terse`` of suite ``faq`` are ``faq@terse``."""
_SYSTEM_KEY = {"openai": "system"}
"""An adapter's name for the system prompt where it is not ``system_prompt``."""


@dataclass(frozen=True)
class Variant:
    """One variant of a suite's agent, ready to run.

    Attributes:
        name: Its name in the suite.
        agent: The ``agent:`` mapping it runs (the suite's with its changes).
        env: Environment variables set while it runs.
        judge_model: The judge model its cases are judged with; None: the suite's.
        description: What it is, as the suite says.
        changes: What it changes, as written (for reports).
        line: Where it is in the suite file.
    """

    name: str
    agent: Mapping[str, Any]
    env: Mapping[str, str] = field(default_factory=dict)
    judge_model: str | None = None
    description: str = ""
    changes: Mapping[str, Any] = field(default_factory=dict)
    line: int | None = None


def variant_suite_name(suite: str, variant: str) -> str:
    """The suite name a variant's runs are stored under, so each variant keeps its own history and gate."""
    return f"{suite}{VARIANT_MARK}{variant}"


def build_variants(
    doc: Located,
    agent: Mapping[str, Any],
    variants: Sequence[VariantModel],
    base_dir: Path,
    seeds: Sequence[Seed],
    *,
    check: bool = True,
) -> tuple[list[Variant], list[Problem]]:
    """Each variant's agent made and checked (built once, unless ``check`` is False); problems name line and field."""
    built: list[Variant] = []
    problems: list[Problem] = []
    first: dict[str, int] = {}
    for index, spec in enumerate(variants):
        path = ("variants", index)
        if spec.name in first:
            where = ("variants", index, "name")
            problems.append(
                Problem(doc.file, doc.line_of(where), format_path(where), f"variant {spec.name!r} is named twice")
            )
            continue
        first[spec.name] = index
        made, problem = _variant_agent(agent, spec)
        if problem is None and check:
            problem = _build_problem(made, spec, base_dir, seeds)
        if problem is not None:
            key, text = problem
            where = (*path, key)
            problems.append(Problem(doc.file, doc.line_of(where), format_path(where), text))
            continue
        built.append(
            Variant(
                name=spec.name,
                agent=made,
                env=dict(spec.env),
                judge_model=spec.judge_model,
                description=spec.description,
                changes=spec.model_dump(mode="json", exclude_defaults=True, exclude={"name", "description"}),
                line=doc.line_of(path),
            )
        )
    return built, problems


def _adapter_of(spec: Mapping[str, Any]) -> str | None:
    known = set(adapter_names())
    return next((key for key in spec if key in known), None)


def _variant_agent(base: Mapping[str, Any], variant: VariantModel) -> tuple[dict[str, Any], tuple[str, str] | None]:
    """The suite's agent with the variant's changes; or the variant's key and why it cannot apply."""
    spec = copy.deepcopy(dict(base))
    if variant.agent:
        other = _adapter_of(variant.agent)
        # Another adapter is another agent: its spec replaces the suite's rather than mixing with it.
        spec = (
            copy.deepcopy(variant.agent)
            if other is not None and other != _adapter_of(spec)
            else _merged(spec, variant.agent)
        )
    adapter = _adapter_of(spec)
    settings: dict[str, Any] = {}
    if variant.model is not None:
        settings["model"] = variant.model
    if variant.system_prompt is not None:
        settings[_SYSTEM_KEY.get(adapter or "", "system_prompt")] = variant.system_prompt
    settings.update(variant.options)
    if not settings:
        return spec, None
    key = next(k for k in ("model", "system_prompt", "options") if getattr(variant, k))
    if adapter == "python":
        spec["options"] = {**dict(spec.get("options") or {}), **settings}
    elif adapter is not None and isinstance(spec.get(adapter), Mapping):
        spec[adapter] = {**dict(spec[adapter]), **settings}
    else:
        return spec, (key, f"the agent ({adapter or 'none'}) has no settings mapping to change; change it under agent:")
    return spec, None


def _merged(base: dict[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``changes`` merged in, mapping into mapping; any other value replaces."""
    merged = dict(base)
    for key, value in changes.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = _merged(dict(merged[key]), value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def _build_problem(
    agent: Mapping[str, Any], variant: VariantModel, base_dir: Path, seeds: Sequence[Seed]
) -> tuple[str, str] | None:
    """The variant's agent built as the runner will build it (and dropped); the variant's key and what is wrong."""
    try:
        make_target(seeded_agent(agent, seeds), base_dir=base_dir)
    except TargetConfigError as exc:
        return _blamed(variant, str(exc)), str(exc)
    return None


def _blamed(variant: VariantModel, message: str) -> str:
    """The variant's key that set what the message names (an option's name), else the first key it set."""
    written = variant.model_dump(exclude_defaults=True, exclude={"name", "description", "env", "judge_model"})
    for key in ("options", "agent"):
        if any(str(name) in message for name in _names(written.get(key))):
            return key
    return next(iter(written), "agent")


def _names(value: Any) -> list[str]:
    if not isinstance(value, Mapping):
        return []
    return [str(k) for k in value] + [name for v in value.values() for name in _names(v)]
