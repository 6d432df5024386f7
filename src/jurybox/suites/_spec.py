"""The suite file format as pydantic models: suite, case, round, tool and database expectations.

These models check shape and types only; judge entries are checked against
the judge registry when the suite is built (see ``_build.py``), so a typo in a
judge name is reported with the list of valid names.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    field_validator,
    model_validator,
)

from jurybox.suites._experiment_spec import Trials, VariantModel
from jurybox.suites._judge_model import judge_model_text

ToolMode = Literal["strict", "ordered", "unordered", "subset", "superset"]
ArgsMode = Literal["exact", "ignore", "subset", "superset"]
Criteria = str | list[str] | dict[str, float]
"""What an answer is graded on: one sentence, several (equal weights), or sentence -> weight."""

#: Ranges every numeric setting is checked against before anything runs: a value outside them is
#: a typo (``concurrency: 1000000000``) or a YAML surprise (``.inf``, ``true`` read as 1).
MAX_CONCURRENCY = 4096
MAX_TIMEOUT = 86_400.0
MAX_RETRIES = 10
MAX_FOLLOW_UPS = 100
_DATABASE_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://")


def _database_url(value: str | None) -> str | None:
    if value is not None and not _DATABASE_URL.match(value):
        raise ValueError("must be a database URL such as sqlite:///app.db or postgresql://user@host/db")
    return value


def _not_bool(value: Any) -> Any:
    # YAML reads "yes"/"true" as a bool, and pydantic would then take it for the number 1.
    if isinstance(value, bool):
        raise ValueError("must be a number, not true/false")
    return value


Seconds = Annotated[float, BeforeValidator(_not_bool), Field(gt=0, le=MAX_TIMEOUT, allow_inf_nan=False)]
"""A timeout in seconds: finite, above 0, at most a day."""
Fraction = Annotated[float, BeforeValidator(_not_bool), Field(ge=0.0, le=1.0, allow_inf_nan=False)]
"""A pass mark in 0..1."""
Retries = Annotated[int, Field(strict=True, ge=0, le=MAX_RETRIES)]
Count = Annotated[int, Field(strict=True, ge=0)]
DatabaseUrl = Annotated[str | None, AfterValidator(_database_url)]
PromptText = Annotated[str, Field(strict=True, min_length=1, max_length=20_000)]
"""Text the suite author writes into a judge's prompt (instructions, a scoring guide): trusted, bounded."""


def _calls_only(value: Any) -> Any:
    """``expect_tools: [a, b]`` is short for ``expect_tools: {calls: [a, b]}``."""
    return {"calls": value} if isinstance(value, list) else value


class _Strict(BaseModel):
    # Unknown keys are errors: a misspelt key would otherwise be ignored silently. Validators are built
    # on first use, once for the suite model with the case models inside it, not once per nested model
    # on import as well.
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


#: Other spellings of case and round keys (test-case dicts written for earlier tools), accepted as aliases.
#: An error about a value names the key the file wrote; both spellings in one case is an error.
CASE_KEY_ALIASES = {
    "expected_tools": "expect_tools",
    "judge_prompt": "criteria",
    "judge_threshold": "threshold",
    "test_agent_revival": "revive_between_rounds",
}


#: What ``expected_tools`` means when it does not say: each listed tool was called (other calls are
#: fine) and the arguments it lists were passed with those values (other arguments are fine).
EXPECTED_TOOLS_DEFAULTS = {"mode": "subset", "args": "subset"}


def expected_tools_as_ours(value: Any) -> Any:
    """An ``expected_tools`` value as the ``expect_tools`` value that means the same.

    ``expected_tools: [get_listing_details]`` passes when ``get_listing_details`` was
    called, whatever else was: ``{calls: [...], mode: subset, args: subset}``. A mapping
    keeps the ``mode`` and ``args`` it gives (``strict``, ``ordered``...). Anything else is
    returned as it is, for the loader to say what is wrong with it.
    """
    if isinstance(value, list):
        return {"calls": value, **EXPECTED_TOOLS_DEFAULTS}
    if isinstance(value, dict) and "calls" in value:
        return {**value, **{key: value.get(key, default) for key, default in EXPECTED_TOOLS_DEFAULTS.items()}}
    return value


def case_as_ours(case: Mapping[str, Any]) -> dict[str, Any]:
    """A case mapping with every other accepted key spelling replaced by ours, in its rounds too.

    The meaning is kept: ``expected_tools`` becomes the ``expect_tools`` that checks the same
    (:func:`expected_tools_as_ours`). A key given in both spellings is left as written, for the
    loader to refuse. The store and the dashboard keep cases in this form, so a file written
    with either spelling stores one version.
    """
    out: dict[str, Any] = {}
    for key, value in case.items():
        ours = CASE_KEY_ALIASES.get(key, key) if isinstance(key, str) else key
        if ours != key and ours in case:
            ours = key  # both spellings: the loader names them
        out[ours] = expected_tools_as_ours(value) if key == "expected_tools" and ours != key else value
    rounds = out.get("rounds")
    if isinstance(rounds, list):
        out["rounds"] = [case_as_ours(item) if isinstance(item, Mapping) else item for item in rounds]
    return out


def _also(canonical: str) -> AliasChoices:
    """Our key, or another accepted spelling of it."""
    return AliasChoices(canonical, *(alias for alias, name in CASE_KEY_ALIASES.items() if name == canonical))


def written_key(raw: Any, canonical: str) -> str:
    """The spelling of ``canonical`` a case or round mapping used (an alias, or ours)."""
    if isinstance(raw, dict):
        for alias, name in CASE_KEY_ALIASES.items():
            if name == canonical and alias in raw:
                return alias
    return canonical


class _SeedAliased(_Strict):
    @model_validator(mode="before")
    @classmethod
    def _one_spelling(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for alias, canonical in CASE_KEY_ALIASES.items():
                if alias in data and canonical in data and canonical in cls.model_fields:
                    raise ValueError(f"'{alias}' is another name for '{canonical}': give one of them, not both")
            if "expected_tools" in data:
                data = {**data, "expected_tools": expected_tools_as_ours(data["expected_tools"])}
        return data


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
    rows: Count | None = None
    min_rows: Count | None = None
    max_rows: Count | None = None


class SqlCheck(_Strict):
    """A query against the agent's database; ``:session_id`` is bound to the case's session."""

    query: str = Field(min_length=1)
    expect: SqlExpect = Field(default_factory=SqlExpect)
    params: dict[str, Any] = Field(default_factory=dict)
    name: str | None = None
    database: DatabaseUrl = None


class RoundModel(_SeedAliased):
    """One round of a multi-round case."""

    prompt: str = Field(min_length=1)
    criteria: Criteria | None = Field(default=None, validation_alias=_also("criteria"))
    threshold: Fraction | None = Field(default=None, validation_alias=_also("threshold"))
    expect_tools: ExpectTools | None = Field(default=None, validation_alias=_also("expect_tools"))
    judges: list[Any] = Field(default_factory=list)
    reference: str | None = None
    follow_ups: list[str] = Field(default_factory=list)
    judge_instructions: PromptText | None = None
    scoring_guide: PromptText | None = None

    @field_validator("expect_tools", mode="before")
    @classmethod
    def _tools_list(cls, value: Any) -> Any:
        return _calls_only(value)


class McpCallModel(_Strict):
    """``mcp_call``: what a case asks the suite's MCP server, with no model in between."""

    tool: str | None = Field(default=None, min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)
    list_tools: StrictBool = False
    resource: str | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _one_kind(self) -> McpCallModel:
        if sum(bool(v) for v in (self.tool, self.list_tools, self.resource)) != 1:
            raise ValueError("give exactly one of tool (with arguments), list_tools: true or resource")
        if self.arguments and not self.tool:
            raise ValueError("arguments go with tool")
        return self


class CaseModel(_SeedAliased):
    """One test case: a prompt (or rounds), what good looks like, and how to judge it."""

    name: str = Field(min_length=1)
    description: str = ""
    tags: list[str] = Field(default_factory=list)
    prompt: str | None = None
    rounds: list[RoundModel] | None = None
    mcp_call: McpCallModel | None = None
    reference: str | None = None
    sources: list[str] = Field(default_factory=list)
    criteria: Criteria | None = Field(default=None, validation_alias=_also("criteria"))
    judges: list[Any] = Field(default_factory=list)
    voting: Any = None
    expect_tools: ExpectTools | None = Field(default=None, validation_alias=_also("expect_tools"))
    sql_checks: list[SqlCheck] = Field(default_factory=list)
    threshold: Fraction | None = Field(default=None, validation_alias=_also("threshold"))
    revive_between_rounds: StrictBool | None = Field(default=None, validation_alias=_also("revive_between_rounds"))
    max_follow_ups: Annotated[int, Field(strict=True, ge=0, le=MAX_FOLLOW_UPS)] | None = None
    follow_ups: list[str] = Field(default_factory=list)
    timeout: Seconds | None = None
    retries: Retries | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    skip: StrictBool = False
    # Runs of the agent for this case (overrides the suite's trials:), and how many must pass.
    trials: Trials | None = None
    judge_instructions: PromptText | None = None
    scoring_guide: PromptText | None = None

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
        given = sum(part is not None for part in (self.prompt, self.rounds, self.mcp_call))
        if given != 1:
            raise ValueError("a case needs exactly one of 'prompt', 'rounds' or 'mcp_call'")
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

    threshold: Fraction | None = None
    timeout: Seconds = 120.0
    retries: Retries = 1
    revive_between_rounds: StrictBool = False
    max_follow_ups: Annotated[int, Field(strict=True, ge=0, le=MAX_FOLLOW_UPS)] = 0
    judge_instructions: PromptText | None = None
    scoring_guide: PromptText | None = None


class SuiteModel(_Strict):
    """A suite file: the agent under test, defaults, seed data and cases."""

    name: str = Field(min_length=1)
    description: str = ""
    agent: dict[str, Any]
    database: DatabaseUrl = None
    # A spec string, or a judge fleet {model, endpoints: [...]} read as its spec string.
    judge_model: Annotated[str, BeforeValidator(judge_model_text), Field(strict=True, min_length=1)] | None = None
    # A (cheaper) model that decides whether the agent asked a clarifying question and writes the
    # user's answer; default the judge model.
    follow_up_model: Annotated[str, Field(strict=True, min_length=1)] | None = None
    concurrency: Annotated[int, Field(strict=True, ge=1, le=MAX_CONCURRENCY)] | None = None
    # The judge model's own limits: seconds per attempt and retries after a fault (5xx, timeout, empty body).
    judge_timeout: Seconds | None = None
    judge_retries: Retries | None = None
    seeds: str | list[str] | None = None
    # How seed files are checked: auto (default), jurybox, spector (Spector's memory files), or {fields: {...}}.
    seed_schema: str | dict[str, Any] | None = None
    # Modules imported (from the suite's folder too) before the cases are built, for the judges they register.
    plugins: list[str] = Field(default_factory=list)
    defaults: Defaults = Field(default_factory=Defaults)
    cases: list[CaseModel] = Field(default_factory=list)
    # A JSON Lines file of more cases (one case mapping per line), read as the run reaches them.
    cases_file: Annotated[str, Field(strict=True, min_length=1)] | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    # Variants of the agent compared in one experiment, and runs of each case per variant.
    variants: list[VariantModel] = Field(default_factory=list)
    trials: Trials | None = None

    @model_validator(mode="after")
    def _some_cases(self) -> SuiteModel:
        if not self.cases and self.cases_file is None:
            raise ValueError("a suite needs cases: a non-empty 'cases' list, or a 'cases_file' of JSON Lines")
        if self.cases_file is not None and (self.trials is not None or any(c.trials for c in self.cases)):
            raise ValueError("trials: are not supported with a cases_file yet; repeat the cases' lines instead")
        return self


def stored_case(case: Mapping[str, Any]) -> dict[str, Any]:
    """A case mapping in the one form a run stores it (our key names, values as checked, defaults left out).

    ``jurybox store import`` and ``jurybox run`` keep a case in this form, so importing
    a file the run has already stored adds no version. A case the loader would refuse
    is kept as written (with our key names), so the import can still store it and the
    run names its problem.
    """
    try:
        return CaseModel.model_validate(dict(case)).model_dump(mode="json", exclude_defaults=True)
    except ValueError:  # pydantic's ValidationError: the loader reports it with file and line
        return case_as_ours(case)
