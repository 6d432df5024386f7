"""The suite file format as pydantic models: suite, case, round, tool and database expectations.

These models check shape and types only; judge entries are checked against
the judge registry when the suite is built (see ``_build.py``), so a typo in a
judge name is reported with the list of valid names.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

ToolMode = Literal["strict", "unordered", "subset", "superset"]
ArgsMode = Literal["exact", "ignore", "subset", "superset"]
Criteria = str | list[str] | dict[str, float]
"""What an answer is graded on: one sentence, several (equal weights), or sentence -> weight."""


def _calls_only(value: Any) -> Any:
    """``expect_tools: [a, b]`` is short for ``expect_tools: {calls: [a, b]}``."""
    return {"calls": value} if isinstance(value, list) else value


class _Strict(BaseModel):
    # Unknown keys are errors: a misspelt key would otherwise be ignored silently.
    model_config = ConfigDict(extra="forbid", frozen=True)


class ExpectTools(_Strict):
    """Expected tool calls, checked by the ``tool_calls`` judge."""

    calls: list[str | dict[str, Any]]
    mode: ToolMode | None = None
    args: ArgsMode | None = None
    per_tool: dict[str, Any] | None = None
    name: str | None = None


class SqlExpect(_Strict):
    """What an SQL check's result must be.

    ``equals``/``min``/``max``/``contains`` look at the first column of the
    first row; ``rows``/``min_rows``/``max_rows`` at the number of rows. With
    nothing given, the query must return at least one row.
    """

    equals: Any = None
    min: float | None = None
    max: float | None = None
    contains: str | None = None
    rows: int | None = Field(default=None, ge=0)
    min_rows: int | None = Field(default=None, ge=0)
    max_rows: int | None = Field(default=None, ge=0)


class SqlCheck(_Strict):
    """A query against the agent's database; ``:session_id`` is bound to the case's session."""

    query: str = Field(min_length=1)
    expect: SqlExpect = Field(default_factory=SqlExpect)
    params: dict[str, Any] = Field(default_factory=dict)
    name: str | None = None
    database: str | None = None


class RoundModel(_Strict):
    """One round of a multi-round case."""

    prompt: str = Field(min_length=1)
    criteria: Criteria | None = None
    threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    expect_tools: ExpectTools | None = None
    judges: list[Any] = Field(default_factory=list)
    reference: str | None = None
    follow_ups: list[str] = Field(default_factory=list)

    @field_validator("expect_tools", mode="before")
    @classmethod
    def _tools_list(cls, value: Any) -> Any:
        return _calls_only(value)


class CaseModel(_Strict):
    """One test case: a prompt (or rounds), what good looks like, and how to judge it."""

    name: str = Field(min_length=1)
    description: str = ""
    tags: list[str] = Field(default_factory=list)
    prompt: str | None = None
    rounds: list[RoundModel] | None = None
    reference: str | None = None
    sources: list[str] = Field(default_factory=list)
    criteria: Criteria | None = None
    judges: list[Any] = Field(default_factory=list)
    voting: Any = None
    expect_tools: ExpectTools | None = None
    sql_checks: list[SqlCheck] = Field(default_factory=list)
    threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    revive_between_rounds: bool | None = None
    max_follow_ups: int | None = Field(default=None, ge=0)
    follow_ups: list[str] = Field(default_factory=list)
    timeout: float | None = Field(default=None, gt=0)
    retries: int | None = Field(default=None, ge=0, le=10)
    metadata: dict[str, Any] = Field(default_factory=dict)
    skip: bool = False

    @field_validator("expect_tools", mode="before")
    @classmethod
    def _tools_list(cls, value: Any) -> Any:
        return _calls_only(value)

    @field_validator("tags")
    @classmethod
    def _tags_are_words(cls, tags: list[str]) -> list[str]:
        for tag in tags:
            if not tag.strip():
                raise ValueError("tags must be non-empty strings")
        return tags

    @model_validator(mode="after")
    def _prompt_or_rounds(self) -> CaseModel:
        if (self.prompt is None) == (self.rounds is None):
            raise ValueError("a case needs exactly one of 'prompt' or 'rounds'")
        if self.rounds is not None and not self.rounds:
            raise ValueError("'rounds' must list at least one round")
        if self.rounds is not None and self.follow_ups:
            raise ValueError("with 'rounds', put 'follow_ups' on the round they answer")
        return self


class Defaults(_Strict):
    """Values every case gets unless it sets its own.

    ``threshold`` is the pass mark of the judges that take the suite's (see ``jurybox judges``);
    None leaves each judge its own default.
    """

    threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    timeout: float = Field(default=120.0, gt=0)
    retries: int = Field(default=1, ge=0, le=10)
    revive_between_rounds: bool = False
    max_follow_ups: int = Field(default=0, ge=0)


class SuiteModel(_Strict):
    """A suite file: the agent under test, defaults, seed data and cases."""

    name: str = Field(min_length=1)
    description: str = ""
    agent: dict[str, Any]
    database: str | None = None
    judge_model: str | None = None
    concurrency: int | None = Field(default=None, ge=1)
    seeds: str | list[str] | None = None
    # Modules imported (from the suite's folder too) before the cases are built, for the judges they register.
    plugins: list[str] = Field(default_factory=list)
    defaults: Defaults = Field(default_factory=Defaults)
    cases: list[CaseModel] = Field(min_length=1)
    metadata: dict[str, Any] = Field(default_factory=dict)
