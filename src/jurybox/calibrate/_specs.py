"""Judge specs: which judge is calibrated, how its recorded replies are read, and who it is.

A spec is anything jurybox can run, named once:

* a registered judge: ``"correctness"``, or with options written as a suite
  file's entry, ``"correctness: {threshold: 0.8}"`` (a single value is the
  first argument: ``"similar: 0.9"``);
* ``"module:attr"``: any judge object or function, a Jury or a Cascade included;
* in Python, the judge object itself, or ``JudgeSpec.recorded(name, classifier)``
  to read recorded replies with a classifier and no judge at all.

Its ``identity`` (kind, model, template hash and settings) is what a stored
calibration is filed under: the same prompt, model and settings give the same
``identity.key``; change any of them and the judge counts as uncalibrated.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from jurybox import inputs

# Imported for their @judge_factory registrations: the built-in judges by name.
from jurybox import judges as _judges  # noqa: F401
from jurybox import llm as _llm  # noqa: F401
from jurybox.calibrate._errors import CalibrationInputError
from jurybox.calibrate._input import MAX_DEPTH
from jurybox.core import Cascade, JudgeRegistry, Jury, judge_name
from jurybox.llm import Classifier
from jurybox.models import ModelConfigError, ModelSpec

Mode = Literal["single", "pairwise", "ratings"]
"""How a judge's replies map to a row: one reply per row; one per order of a pair; one rating per output."""
Position = Literal["first", "second", "tie"]
DEFAULT_POSITIONS: Mapping[str, Position] = MappingProxyType({"A": "first", "B": "second", "C": "tie"})
_MODULE_ATTR = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


@dataclass(frozen=True)
class JudgeIdentity:
    """Who a judge is, for filing its calibration.

    Attributes:
        name: Its name in reports.
        kind: ``llm``, ``pairwise``, ``jury``, ``cascade``, ``deterministic`` or ``recorded``.
        model: The judge model's name or spec; None when it is the configured default or none.
        template_hash: SHA-256 (first 16 hex digits) of the prompt's system and user text, for LLM judges.
        settings: Everything else that changes verdicts (threshold, classifier, samples, members...), as JSON.
    """

    name: str
    kind: str
    model: str | None = None
    template_hash: str | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """A stable key of what makes verdicts differ (the name is left out: renaming changes nothing)."""
        data = {"kind": self.kind, "model": self.model, "template": self.template_hash, "settings": self.settings}
        text = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "model": self.model,
            "template_hash": self.template_hash,
            "settings": _plain(self.settings),
            "key": self.key,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> JudgeIdentity:
        return cls(
            name=str(data["name"]),
            kind=str(data["kind"]),
            model=data.get("model"),
            template_hash=data.get("template_hash"),
            settings=dict(data.get("settings") or {}),
        )


@dataclass(frozen=True)
class JudgeSpec:
    """A judge to calibrate.

    Attributes:
        name: Its column in the reports (unique within a calibration).
        judge: The judge to run on each row, or None for a recorded-only spec.
        readers: Classifiers that read recorded reply text, one per stage of a
            multi-stage judge (the last one reads any later stage too).
        mode: ``single``, ``pairwise`` (one reply per order, its label a
            position through ``positions``) or ``ratings`` (one rating per output).
        positions: Classifier label -> ``first`` / ``second`` / ``tie`` for pairwise replies.
        identity: Who the judge is.
    """

    name: str
    judge: Any = None
    readers: tuple[Classifier, ...] = ()
    mode: Mode = "single"
    positions: Mapping[str, Position] = field(default_factory=lambda: DEFAULT_POSITIONS)
    identity: JudgeIdentity | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"a judge spec needs a non-empty name, got {self.name!r}")
        if self.mode not in ("single", "pairwise", "ratings"):
            raise ValueError(f"mode must be single, pairwise or ratings, got {self.mode!r}")
        if self.judge is None and not self.readers:
            raise ValueError(f"judge spec {self.name!r} has neither a judge to run nor a classifier to read replies")
        object.__setattr__(self, "readers", tuple(self.readers))
        object.__setattr__(self, "positions", MappingProxyType(dict(self.positions)))
        if self.identity is None:
            object.__setattr__(self, "identity", identify(self.judge, self.name, self.readers, self.mode))

    @property
    def who(self) -> JudgeIdentity:
        assert self.identity is not None  # set in __post_init__
        return self.identity

    @classmethod
    def recorded(
        cls,
        name: str,
        *readers: Classifier,
        mode: Mode = "single",
        positions: Mapping[str, Position] | None = None,
        model: str | None = None,
    ) -> JudgeSpec:
        """A spec that only reads recorded replies with ``readers`` (one classifier per stage).

        Args:
            name: The judge's name; recorded rows name it in their ``judge`` field.
            *readers: The classifier of each stage, in order.
            mode: ``single``, ``pairwise`` or ``ratings``.
            positions: For pairwise: classifier label -> first / second / tie (default A, B, C).
            model: The model that wrote the replies, for the identity.
        """
        spec = cls(name=name, readers=readers, mode=mode, positions=positions or DEFAULT_POSITIONS)
        if model is not None:
            object.__setattr__(spec, "identity", JudgeIdentity(name, "recorded", model, None, spec.who.settings))
        return spec


def judge_spec(
    value: Any,
    *,
    name: str | None = None,
    model: Any = None,
    registry: JudgeRegistry | None = None,
    base_dir: Path | None = None,
) -> JudgeSpec:
    """Make a JudgeSpec from a spec string, a judge object or a JudgeSpec.

    Args:
        value: ``"name"``, ``"name: {options}"``, ``"module:attr"``, a judge, or a JudgeSpec.
        name: Its name in reports (default: the judge's own name).
        model: The judge model for registered judges whose options name none.
        registry: Where judge names are looked up (default: ``JudgeRegistry.default()``).
        base_dir: Put on ``sys.path`` to import ``module:attr`` (default: the working directory).

    Raises:
        CalibrationInputError: an unknown judge or option, or a module or attribute that cannot be imported.
    """
    if isinstance(value, JudgeSpec):
        if name and name != value.name:
            return JudgeSpec(name, value.judge, value.readers, value.mode, value.positions)
        return value
    if isinstance(value, str):
        judge = _from_text(value, model, registry or JudgeRegistry.default(), base_dir)
    elif callable(value):
        judge = value
    else:
        raise CalibrationInputError.one("--judge", None, "", f"not a judge: {value!r}")
    inner = getattr(judge, "judge", None)  # PairwiseJudge asks through an inner LLMJudge
    pairwise = inner is not None and hasattr(inner, "classifier") and hasattr(judge, "on_inconsistent")
    classifier = getattr(inner if pairwise else judge, "classifier", None)
    readers = (classifier,) if classifier is not None else ()
    return JudgeSpec(name or judge_name(judge), judge, readers, "pairwise" if pairwise else "single")


def _from_text(text: str, model: Any, registry: JudgeRegistry, base_dir: Path | None) -> Any:
    where = "--judge"
    stripped = text.strip()
    if _MODULE_ATTR.match(stripped) and stripped.split(":", 1)[0] not in registry:
        return _import(stripped, base_dir)
    try:
        data = inputs.read_yaml(stripped, where, lines=False, anchors=False, max_depth=MAX_DEPTH + 1).data
    except inputs.InputError as exc:
        if "anchors and aliases" in exc.problem:
            raise CalibrationInputError.one(
                where, None, "", f"{text!r}: YAML anchors and aliases are not allowed"
            ) from None
        raise CalibrationInputError.one(where, None, "", f"{text!r} is not a judge spec: {exc.problem}") from None
    if isinstance(data, str):
        judge_named, options = data, None
    elif isinstance(data, dict) and len(data) == 1:
        judge_named, options = next(iter(data.items()))
        judge_named = str(judge_named)
    else:
        raise CalibrationInputError.one(
            where, None, "", f"{text!r}: write a judge name, 'name: {{options}}' or module:attr"
        )
    entry = registry.get(judge_named)
    if entry is None:
        known = ", ".join(registry.names())
        raise CalibrationInputError.one(where, None, "", f"unknown judge {judge_named!r}; registered judges: {known}")
    kwargs: dict[str, Any] = {}
    args: list[Any] = []
    if isinstance(options, dict):
        kwargs = {str(k): v for k, v in options.items()}
    elif options is not None:
        args = [options]
    for option in kwargs:
        if not entry.accepts(option):
            valid = ", ".join(entry.parameters())
            raise CalibrationInputError.one(
                where, None, option, f"judge {judge_named!r} has no option {option!r}; options: {valid}"
            )
    if model is not None and "model" not in kwargs and entry.accepts("model"):
        kwargs["model"] = model
    try:
        return entry.factory(*args, **kwargs)
    except (TypeError, ValueError) as exc:
        raise CalibrationInputError.one(where, None, "", f"cannot build judge {judge_named!r}: {exc}") from None


def _import(target: str, base_dir: Path | None) -> Any:
    module_name, attr = target.split(":", 1)
    folder = str((base_dir or Path.cwd()).resolve())
    if folder not in sys.path:
        sys.path.insert(0, folder)
    try:
        value: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            value = getattr(value, part)
    except (ImportError, AttributeError) as exc:
        raise CalibrationInputError.one("--judge", None, "", f"cannot import {target!r}: {exc}") from None
    if not callable(value):
        raise CalibrationInputError.one("--judge", None, "", f"{target!r} is not a judge (not callable): {value!r}")
    return value


def identify(judge: Any, name: str, readers: Sequence[Any] = (), mode: str = "single") -> JudgeIdentity:
    """The identity of a judge object (or, with none, of the classifiers reading its recorded replies)."""
    if judge is None:
        settings = {"mode": mode, "readers": [repr(reader) for reader in readers]}
        return JudgeIdentity(name, "recorded", None, None, settings)
    description = _describe(judge)
    return JudgeIdentity(
        name,
        str(description.pop("kind")),
        description.pop("model", None),
        description.pop("template_hash", None),
        description,
    )


def _describe(judge: Any) -> dict[str, Any]:
    inner = getattr(judge, "judge", None)
    if inner is not None and hasattr(judge, "on_inconsistent"):
        described = _describe(inner)
        described.update(
            kind="pairwise", on_inconsistent=judge.on_inconsistent, baseline=getattr(judge, "baseline", None)
        )
        return described
    if isinstance(judge, Jury):
        members = [{"name": n, **_describe(m)} for n, m in zip(judge.names, judge.judges, strict=True)]
        return {"kind": "jury", "voting": repr(judge.voting), "errors": judge.errors, "members": members}
    if isinstance(judge, Cascade):
        tiers = [
            {"policy": tier.policy.value, "voting": repr(tier.voting), "members": [_describe(m) for m in tier.judges]}
            for tier in judge.tiers
        ]
        return {"kind": "cascade", "tiers": tiers}
    template = getattr(judge, "template", None)
    if template is not None and hasattr(judge, "classifier"):
        text = f"{template.system}\n\x00\n{template.user}"
        options = {k: v for k, v in getattr(judge, "options", {}).items() if isinstance(v, str | int | float | list)}
        return {
            "kind": "llm",
            "model": model_label(getattr(judge, "model", None)),
            "template_hash": hashlib.sha256(text.encode("utf-8")).hexdigest()[:16],
            "classifier": repr(judge.classifier),
            "threshold": getattr(judge, "threshold", None),
            "options": options,
            **{
                key: getattr(judge, key, None)
                for key in (
                    "retries",
                    "samples",
                    "temperature",
                    "max_tokens",
                    "seed",
                    "on_parse_failure",
                    "fallback_score",
                )
            },
        }
    threshold = getattr(judge, "threshold", None)
    return {"kind": str(getattr(judge, "kind", "deterministic")), "judge": repr(judge), "threshold": threshold}


def model_label(model: Any) -> str | None:
    """A model reference as text: the spec's ``provider:model``, the model object's name, or None (the default).

    A spec string is named as the model built from it names itself, so a judge given
    ``openai:m@http://host/v1`` by ``--model`` and the same judge built by a suite from
    that spec get one identity.
    """
    if model is None:
        return None
    if isinstance(model, str):
        try:
            return ModelSpec.parse(model).name
        except ModelConfigError:
            return model
    named = getattr(model, "name", None)
    return named if isinstance(named, str) else type(model).__name__


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))
