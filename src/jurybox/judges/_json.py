"""Judges on structured output: valid JSON, and JSON that satisfies a JSON Schema."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from jurybox.core import TIER_DETERMINISTIC, Check, Context, InputLimitError, Judgment, judge_factory, read_json
from jurybox.judges._base import DeterministicJudge

MAX_REPORTED_ERRORS = 10


def parse_output(context: Context) -> tuple[Any, Judgment | None]:
    """The output parsed as JSON, or the judgment instead: FAIL saying where parsing stopped, ERROR over a limit.

    The output is read with the input limits (``jurybox.core.read_json``): an answer nested deeper than
    100 levels, or holding more than 2,000,000 values, is not judged (ERROR, with the limit named), where
    ``json.loads`` would have raised RecursionError or built it all.
    """
    try:
        return read_json(context.output), None
    except InputLimitError as exc:
        return None, Judgment.errored(f"output not checked: the JSON is {str(exc).removeprefix('refused: ')}")
    except json.JSONDecodeError as exc:
        snippet = context.output[max(0, exc.pos - 20) : exc.pos + 20]
        return None, Judgment.failed(
            False, f"output is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno} (near {snippet!r})"
        )


class _ValidJson(DeterministicJudge):
    def check(self, context: Context) -> Judgment:
        value, failure = parse_output(context)
        if failure is not None:
            return failure
        return Judgment.passed(True, f"output is valid JSON ({type(value).__name__})")


@judge_factory(tier=TIER_DETERMINISTIC)
def valid_json(*, name: str | None = None) -> DeterministicJudge:
    """Pass when the whole output parses as JSON (no code fences, no chatter around it).

    Args:
        name: The judge's name in reports.
    """
    return _ValidJson(name or "valid_json")


class _JsonSchema(DeterministicJudge):
    def __init__(self, schema: Mapping[str, Any], name: str) -> None:
        # Imported here: jsonschema and its referencing stack cost every run a few MB and most suites never use it.
        import jsonschema
        from jsonschema.exceptions import SchemaError
        from jsonschema.validators import validator_for

        super().__init__(name)
        schema = dict(schema)
        validator_class = validator_for(schema)
        try:
            validator_class.check_schema(schema)
        except SchemaError as exc:
            path = "/".join(str(p) for p in exc.absolute_path) or "(root)"
            raise ValueError(f"invalid JSON Schema at {path}: {exc.message}") from exc
        self.validator = validator_class(schema, format_checker=jsonschema.FormatChecker())

    def check(self, context: Context) -> Judgment:
        value, failure = parse_output(context)
        if failure is not None:
            return failure
        errors = sorted(self.validator.iter_errors(value), key=lambda e: list(e.absolute_path))
        if not errors:
            return Judgment.passed(True, "output matches the schema")
        checks = [
            Check(
                f"$.{'.'.join(str(p) for p in error.absolute_path)}" if error.absolute_path else "$",
                False,
                error.message,
            )
            for error in errors[:MAX_REPORTED_ERRORS]
        ]
        more = f" (+{len(errors) - MAX_REPORTED_ERRORS} more)" if len(errors) > MAX_REPORTED_ERRORS else ""
        return Judgment.failed(
            False, f"{len(errors)} schema violation(s): {checks[0].name}: {checks[0].message}{more}", checks=checks
        )


@judge_factory(tier=TIER_DETERMINISTIC)
def json_schema(schema: Mapping[str, Any], *, name: str | None = None) -> DeterministicJudge:
    """Pass when the output is JSON that validates against ``schema``.

    Each violation is a failed check naming its JSON path.

    Args:
        schema: The JSON Schema (any draft ``jsonschema`` knows).
        name: The judge's name in reports.

    Raises:
        ValueError: the schema itself is invalid (checked when the judge is built).
    """
    if not isinstance(schema, Mapping):
        raise TypeError(f"json_schema() needs a schema mapping, got {type(schema).__name__}")
    return _JsonSchema(schema, name or "json_schema")
