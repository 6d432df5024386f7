"""The suite file's experiment keys as pydantic models: ``variants:`` and ``trials:``.

Shape and types only, like the rest of ``_spec``: whether a variant's agent
settings are ones its adapter knows is checked when the suite is built
(``_variants``), so a misspelt option is reported with the variant's line.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

MAX_TRIALS = 1000
"""Runs of one case at most: more is a typo, and would be better spent on more cases."""
VARIANT_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"
"""A variant's name: it is part of its runs' suite name (``suite@name``) and of command lines."""


def _count_only(value: Any) -> Any:
    """``trials: 5`` is short for ``trials: {count: 5}``."""
    return {"count": value} if isinstance(value, int) and not isinstance(value, bool) else value


class TrialsModel(BaseModel):
    """How often a case runs, and which of its trials must pass for the case to pass.

    ``pass`` is ``all`` (the default), ``majority`` (more than half), or a whole number k
    (at least k of the trials).
    """

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    count: Annotated[int, Field(strict=True, ge=1, le=MAX_TRIALS)]
    pass_rule: Literal["all", "majority"] | Annotated[int, Field(strict=True, ge=1)] = Field(
        default="all", alias="pass"
    )

    @model_validator(mode="after")
    def _reachable(self) -> TrialsModel:
        if isinstance(self.pass_rule, int) and self.pass_rule > self.count:
            raise ValueError(f"pass: {self.pass_rule} of {self.count} trials can never happen; at most {self.count}")
        return self


Trials = Annotated[TrialsModel, BeforeValidator(_count_only)]


class VariantModel(BaseModel):
    """One variant of the agent: a name and what it changes of the suite's ``agent:`` (and judge model).

    ``model`` and ``system_prompt`` are short for the adapter's own settings (an ``openai``
    agent's ``model`` and ``system``; a ``python`` agent's factory options ``model`` and
    ``system_prompt``); ``options`` are more of the adapter's settings (a python agent's factory
    options); ``agent`` is merged into the suite's ``agent:`` mapping, or replaces it when it
    names another adapter; ``env`` is set in the environment while the variant runs.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(max_length=100)
    description: str = ""
    model: Annotated[str, Field(min_length=1)] | None = None
    system_prompt: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    agent: dict[str, Any] = Field(default_factory=dict)
    env: dict[str, str] = Field(default_factory=dict)
    judge_model: Annotated[str, Field(strict=True, min_length=1)] | None = None

    @field_validator("name")
    @classmethod
    def _name_is_a_word(cls, name: str) -> str:
        if not re.match(VARIANT_NAME, name):
            raise ValueError(
                f"a variant's name is letters, digits, '_', '.' and '-' (it names the variant's runs), got {name!r}"
            )
        return name

    @field_validator("env", mode="before")
    @classmethod
    def _env_text(cls, value: Any) -> Any:
        # Environment values are text; a YAML number or true is written as the shell would see it.
        if isinstance(value, dict):
            return {
                k: str(v).lower() if isinstance(v, bool) else v if isinstance(v, str) else str(v)
                for k, v in value.items()
            }
        return value
