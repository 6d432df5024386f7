"""Seed schemas: which front-matter fields a seed file must have, of what type and range.

jurybox's own seed format is checked by ``_seeds._FrontMatter`` (free-text ``type``,
``valence`` in -1..1 or a word). Other formats are declared here as data: Spector
memory files have an integer ``valence`` in -20..20, a ``type`` from a fixed set
and a ``source`` that defaults to OBSERVED, and a suite may declare a schema of its own::

    seed_schema:
      fields:
        type: {type: choice, values: [note, review], required: true}
        rating: {type: integer, min: 1, max: 5}
        tags: {type: tags}
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, model_validator

FieldKind = Literal["string", "integer", "number", "boolean", "tags", "choice"]

#: The built-in schema names ``seed_schema:`` accepts; a mapping declares a schema instead.
SCHEMA_NAMES = ("auto", "jurybox", "spector")
SPECTOR_TYPES = ("EPISODIC", "SEMANTIC", "PROCEDURAL", "PROSPECTIVE")
SPECTOR_SOURCES = ("OBSERVED", "REFLECTED", "IMAGINED")


class FieldRule(BaseModel):
    """One declared field: its type, its allowed values or range, and whether it must be given.

    Attributes:
        type: ``string``, ``integer``, ``number``, ``boolean``, ``tags`` (a list of strings or
            one comma-separated string) or ``choice`` (one of ``values``).
        values: The allowed values of a ``choice`` (matched case-insensitively, stored as declared).
        min: Lowest allowed ``integer``/``number``.
        max: Highest allowed ``integer``/``number``.
        required: The file must give it.
        default: The value when the file leaves it out.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: FieldKind = "string"
    values: list[str] | None = None
    min: float | None = None
    max: float | None = None
    required: StrictBool = False
    default: Any = None

    @model_validator(mode="after")
    def _consistent(self) -> FieldRule:
        if self.type == "choice" and not self.values:
            raise ValueError("a 'choice' field needs 'values' (the allowed values)")
        if self.type != "choice" and self.values is not None:
            raise ValueError("'values' is only for type 'choice'")
        if self.type not in ("integer", "number") and (self.min is not None or self.max is not None):
            raise ValueError("'min'/'max' are only for type 'integer' or 'number'")
        if self.default is not None:
            _, problem = self.check(self.default)
            if problem:
                raise ValueError(f"'default' {problem}")
        return self

    def check(self, value: Any) -> tuple[Any, str | None]:
        """The value as stored, or a problem saying what is wrong with it."""
        checker = _CHECKERS[self.type]
        return checker(self, value)


class SeedSchema(BaseModel):
    """A declared seed format: every listed field is checked; fields not listed go to ``extra``.

    ``id`` is always required (ids must be unique across a folder) whether declared or not.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = "custom"
    fields: dict[str, FieldRule] = Field(min_length=1)

    def check(self, front: Mapping[str, Any]) -> tuple[dict[str, Any], list[tuple[str, str]]]:
        """The checked values (defaults filled in, other fields kept) and the ``(field, problem)`` list."""
        values = dict(front)
        problems: list[tuple[str, str]] = []
        if not isinstance(front.get("id"), str | int) or not str(front.get("id")).strip():
            problems.append(("id", "is required: a non-empty string naming this record"))
        else:
            values["id"] = str(front["id"])
        # ``tags`` is read as tags even when a schema leaves it out, so "tags: a, b" never becomes letters.
        for name, rule in {"tags": FieldRule(type="tags", default=[]), **self.fields}.items():
            if name == "id":
                continue
            if front.get(name) is None:
                if rule.required:
                    problems.append((name, f"is required{_choices(rule)}"))
                values[name] = rule.default
                continue
            checked, problem = rule.check(front[name])
            if problem:
                problems.append((name, problem))
            values[name] = checked
        return values, problems


def _choices(rule: FieldRule) -> str:
    return f": one of {', '.join(rule.values)}" if rule.values else ""


def _string(rule: FieldRule, value: Any) -> tuple[Any, str | None]:
    return (value, None) if isinstance(value, str) else (value, f"must be a string, got {value!r}")


def _boolean(rule: FieldRule, value: Any) -> tuple[Any, str | None]:
    return (value, None) if isinstance(value, bool) else (value, f"must be true or false, got {value!r}")


def _numeric(rule: FieldRule, value: Any, *, integer: bool) -> tuple[Any, str | None]:
    wanted = "an integer" if integer else "a number"
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return value, f"must be {wanted}, got {value!r}"
    if integer and isinstance(value, float):
        if not value.is_integer():
            return value, f"must be {wanted}, got {value!r}"
        value = int(value)
    low, high = rule.min, rule.max
    if (low is not None and value < low) or (high is not None and value > high):
        return value, f"must be in {_bound(low)}..{_bound(high)}, got {value!r}"
    return value, None


def _bound(value: float | None) -> str:
    if value is None:
        return ""
    return str(int(value)) if float(value).is_integer() else str(value)


def _tags(rule: FieldRule, value: Any) -> tuple[Any, str | None]:
    # Spector writes "tags: database, postgresql, connection-pool": one string, commas between.
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()], None
    if isinstance(value, list) and all(isinstance(item, str | int | float) for item in value):
        return [str(item) for item in value], None
    return value, f"must be a list of strings or one comma-separated string, got {value!r}"


def _choice(rule: FieldRule, value: Any) -> tuple[Any, str | None]:
    allowed = rule.values or []
    if isinstance(value, str):
        for choice in allowed:
            if value.strip().lower() == choice.lower():
                return choice, None
    return value, f"must be one of {', '.join(allowed)}, got {value!r}"


_CHECKERS = {
    "string": _string,
    "integer": lambda rule, value: _numeric(rule, value, integer=True),
    "number": lambda rule, value: _numeric(rule, value, integer=False),
    "boolean": _boolean,
    "tags": _tags,
    "choice": _choice,
}

SPECTOR = SeedSchema(
    name="spector",
    fields={
        "type": FieldRule(type="choice", values=list(SPECTOR_TYPES), required=True),
        "source": FieldRule(type="choice", values=list(SPECTOR_SOURCES), default="OBSERVED"),
        "tags": FieldRule(type="tags", default=[]),
        "valence": FieldRule(type="integer", min=-20, max=20, default=0),
    },
)
"""Spector's memory files: ``type`` EPISODIC/SEMANTIC/PROCEDURAL/PROSPECTIVE (required), ``source``
OBSERVED/REFLECTED/IMAGINED (default OBSERVED), integer ``valence`` -20..20 (default 0),
``tags`` a list or one comma-separated string."""

SeedSchemaRef = str | Mapping[str, Any] | SeedSchema | None
"""What ``schema=`` takes: a built-in name (``auto``, ``jurybox``, ``spector``), a declared schema
as data (``{"fields": {...}}``), a SeedSchema, or None (``auto``)."""


def resolve_schema(ref: SeedSchemaRef) -> SeedSchema | Literal["auto", "jurybox"]:
    """The schema a name or declaration stands for.

    Raises:
        ValueError: an unknown name, or a declaration that is not a valid schema.
    """
    if ref is None or ref == "auto":
        return "auto"
    if ref == "jurybox":
        return "jurybox"
    if ref == "spector":
        return SPECTOR
    if isinstance(ref, SeedSchema):
        return ref
    if isinstance(ref, Mapping):
        return SeedSchema.model_validate(ref)
    raise ValueError(f"unknown seed schema {ref!r}; use one of {', '.join(SCHEMA_NAMES)} or declare fields")


def is_spector_record(front: Mapping[str, Any]) -> bool:
    """Whether a file reads as a Spector memory: its ``type`` is one of Spector's four, spelt as Spector does.

    Upper case only: a jurybox record of ``type: semantic`` keeps jurybox's rules.
    """
    kind = front.get("type")
    return isinstance(kind, str) and kind.strip() in SPECTOR_TYPES
