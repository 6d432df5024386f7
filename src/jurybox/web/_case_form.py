"""The case editor's form: a stored case definition <-> form fields, and loader problems -> the fields they are about.

The form covers what a non-engineer writes (name, description, tags, a prompt or
rounds with criteria, threshold and expected tools, reference, revival, follow-ups);
every other key of the case (judges, SQL checks, timeouts...) travels in the
"other keys" YAML box, so a save through the form never drops what it does not show.
Values are passed to the suite loader as typed ("abc" for a threshold stays text),
so the loader says what is wrong in the words ``jurybox run`` uses.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from jurybox.core import InputLimitError, read_json
from jurybox.inputs import InputError, read_yaml
from jurybox.suites import CASE_KEY_ALIASES, case_as_ours

MAX_ROUNDS = 5
"""Rounds the form shows (a form post has at most 50 fields); a longer case is edited as YAML."""
TOOL_MODES = ("", "strict", "ordered", "unordered", "subset", "superset")
ROUND_FIELDS = ("prompt", "criteria", "threshold", "tools", "tools_mode", "reference")
CASE_FIELDS = (
    "base_version", "name", "description", "tags", "shape", "prompt", "criteria", "threshold", "tools",
    "tools_mode", "reference", "revive", "max_follow_ups", "other",
)  # fmt: skip
FIELDS = (*CASE_FIELDS, *(f"r{i}_{name}" for i in range(MAX_ROUNDS) for name in ROUND_FIELDS))
"""Every field the case form posts (besides ``csrf``)."""

# The keys the form has a field for; every other key of a case is in the "other keys" box.
FORM_KEYS = (
    "name", "description", "tags", "prompt", "rounds", "reference", "criteria", "expect_tools", "threshold",
    "revive_between_rounds", "max_follow_ups",
)  # fmt: skip
ROUND_FORM_KEYS = ("prompt", "criteria", "threshold", "expect_tools", "reference")
# The suite format's order, so a saved case reads like one written by hand.
KEY_ORDER = (
    "name", "description", "tags", "prompt", "rounds", "reference", "sources", "criteria", "judges", "voting",
    "expect_tools", "sql_checks", "threshold", "revive_between_rounds", "max_follow_ups", "follow_ups", "timeout",
    "retries", "metadata", "skip",
)  # fmt: skip
ALIASES = CASE_KEY_ALIASES
"""Other accepted spellings of case keys (the loader takes both); the form shows and saves ours."""

_WEIGHT = re.compile(r"^(?P<text>.*?)\s*\[weight\s+(?P<weight>[^\]]+)\]\s*$")
_TOOL_LINE = re.compile(r"^(?P<name>[^\s{]+)\s*(?P<args>\{.*\})?\s*$")
MAX_OTHER_DEPTH = 40


class FormError(ValueError):
    """A field the form itself cannot read (before the loader sees it)."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(message)
        self.field = field_name


@dataclass
class CaseForm:
    """What the form shows: field values and problems by field name (``case`` for the whole case)."""

    values: dict[str, str]
    rounds: list[dict[str, str]]
    errors: dict[str, list[str]] = field(default_factory=dict)
    hidden_rounds: int = 0
    """Rounds past ``MAX_ROUNDS``: not in the form, kept as they are by a save."""

    def add_error(self, name: str, message: str) -> None:
        self.errors.setdefault(name, []).append(message)

    def view(self) -> dict[str, Any]:
        return {
            "values": self.values,
            "rounds": self.rounds,
            "errors": self.errors,
            "modes": TOOL_MODES,
            "hidden_rounds": self.hidden_rounds,
        }


def canonical(definition: Mapping[str, Any]) -> dict[str, Any]:
    """The case with other accepted key spellings replaced by ours (in rounds too), meaning kept."""
    return case_as_ours(definition)


def ordered(definition: Mapping[str, Any]) -> dict[str, Any]:
    known = {key: definition[key] for key in KEY_ORDER if key in definition}
    return {**known, **{key: value for key, value in definition.items() if key not in known}}


def form_of(definition: Mapping[str, Any] | None, base_version: int | None) -> CaseForm:
    """The form filled in from a stored definition (None: a new, empty case)."""
    case = canonical(definition or {})
    rounds_raw = case.get("rounds")
    rounds = rounds_raw if isinstance(rounds_raw, list) else []
    values = {
        "base_version": "" if base_version is None else str(base_version),
        "name": _text(case.get("name")),
        "description": _text(case.get("description")),
        "tags": ", ".join(str(t) for t in case.get("tags") or []) if isinstance(case.get("tags"), list) else "",
        "shape": "rounds" if rounds_raw is not None else "prompt",
        "prompt": _text(case.get("prompt")),
        "reference": _text(case.get("reference")),
        "revive": {True: "yes", False: "no"}.get(case.get("revive_between_rounds"), ""),  # type: ignore[arg-type]
        "max_follow_ups": _text(case.get("max_follow_ups")),
        **_judging_values(case),
        "other": _other_text(case, FORM_KEYS),
    }
    shown = [
        {name: _judging_values(r).get(name, _text(r.get(name))) for name in ROUND_FIELDS}
        for r in rounds[:MAX_ROUNDS]
        if isinstance(r, Mapping)
    ]
    shown += [dict.fromkeys(ROUND_FIELDS, "") for _ in range(MAX_ROUNDS - len(shown))]
    return CaseForm(values, shown, hidden_rounds=max(0, len(rounds) - MAX_ROUNDS))


def _judging_values(part: Mapping[str, Any]) -> dict[str, str]:
    tools = part.get("expect_tools")
    calls = tools.get("calls") if isinstance(tools, Mapping) else tools
    mode = tools.get("mode") if isinstance(tools, Mapping) else None
    return {
        "criteria": _criteria_text(part.get("criteria")),
        "threshold": _text(part.get("threshold")),
        "tools": "\n".join(_tool_line(call) for call in calls) if isinstance(calls, list) else "",
        "tools_mode": mode if isinstance(mode, str) else "",
    }


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value) if not isinstance(value, int | float) else str(value)


def _criteria_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(str(item) for item in value)
    if isinstance(value, Mapping):
        return "\n".join(f"{text} [weight {weight}]" for text, weight in value.items())
    return ""


def _tool_line(call: Any) -> str:
    if isinstance(call, Mapping) and "name" in call:
        arguments = call.get("arguments")
        return f"{call['name']} {json.dumps(arguments, ensure_ascii=False)}" if arguments else str(call["name"])
    return str(call)


def _other_text(part: Mapping[str, Any], shown: tuple[str, ...]) -> str:
    rest = {key: value for key, value in part.items() if key not in shown}
    return yaml.safe_dump(ordered(rest), sort_keys=False, allow_unicode=True, width=100) if rest else ""


def definition_of(form: Mapping[str, str], original: Mapping[str, Any] | None) -> tuple[dict[str, Any], list[int]]:
    """The case definition a posted form describes, and which form round each stored round came from.

    Keys the form does not show are taken from the "other keys" box; a round's keys the form does not
    show (its judges, follow-ups) are kept from the same round of ``original``.

    Raises:
        FormError: a field the form reads itself (tools, criteria weights, the YAML box) is malformed.
    """
    before = canonical(original or {})
    case: dict[str, Any] = _other(form.get("other", ""))
    clash = sorted(set(case) & set(FORM_KEYS) | set(case) & set(ALIASES))
    if clash:
        raise FormError("other", f"{', '.join(clash)} has its own field in this form: set it there")
    case["name"] = form.get("name", "").strip()
    _put(case, "description", form.get("description", "").strip())
    tags = [tag.strip() for tag in form.get("tags", "").split(",") if tag.strip()]
    if tags:
        case["tags"] = tags
    rounds_from: list[int] = []
    if form.get("shape") == "rounds":
        listed = before.get("rounds")
        old_rounds: list[Any] = listed if isinstance(listed, list) else []
        rounds = []
        for index in range(MAX_ROUNDS):
            kept = old_rounds[index] if index < len(old_rounds) and isinstance(old_rounds[index], Mapping) else {}
            extras = {key: value for key, value in kept.items() if key not in ROUND_FORM_KEYS}
            fields = {name: form.get(f"r{index}_{name}", "") for name in ROUND_FIELDS}
            if not any(value.strip() for value in fields.values()) and not extras:
                continue
            one: dict[str, Any] = {"prompt": fields["prompt"].strip()}
            _judging(one, form, kept, prefix=f"r{index}_")
            _put(one, "reference", fields["reference"].strip())
            rounds.append({**one, **extras})
            rounds_from.append(index)
        # Rounds past the form's last one are not shown: they stay as they were.
        rounds += old_rounds[MAX_ROUNDS:]
        rounds_from += [-1] * len(old_rounds[MAX_ROUNDS:])
        case["rounds"] = rounds
    else:
        _put(case, "prompt", form.get("prompt", "").strip())
    _put(case, "reference", form.get("reference", "").strip())
    _judging(case, form, before, prefix="")
    revive = form.get("revive", "")
    if revive in ("yes", "no"):
        case["revive_between_rounds"] = revive == "yes"
    elif revive:
        raise FormError("revive", "revival is yes, no, or the suite's default")
    _put(case, "max_follow_ups", _number(form.get("max_follow_ups", ""), whole=True))
    return ordered(case), rounds_from


def _judging(part: dict[str, Any], form: Mapping[str, str], before: Mapping[str, Any], *, prefix: str) -> None:
    criteria = _criteria(form.get(f"{prefix}criteria", ""), f"{prefix}criteria")
    _put(part, "criteria", criteria)
    _put(part, "threshold", _number(form.get(f"{prefix}threshold", ""), whole=False))
    calls = _calls(form.get(f"{prefix}tools", ""), f"{prefix}tools")
    mode = form.get(f"{prefix}tools_mode", "")
    if mode not in TOOL_MODES:
        raise FormError(f"{prefix}tools_mode", f"match mode is one of {', '.join(TOOL_MODES[1:])}")
    old = before.get("expect_tools")
    # What the form does not show of the old expectation (args, per_tool) stays as it was.
    extras = {k: v for k, v in old.items() if k not in ("calls", "mode")} if isinstance(old, Mapping) else {}
    if any(isinstance(call, Mapping) for call in calls) and "args" not in extras:
        # Arguments typed in the form are the ones that matter: others the agent passes are fine.
        extras = {**extras, "args": "subset"}
    if calls or mode:
        part["expect_tools"] = {"calls": calls, **({"mode": mode} if mode else {}), **extras}
        if not mode and not extras:
            part["expect_tools"] = calls


def _put(target: dict[str, Any], key: str, value: Any) -> None:
    if value is not None and value != "":
        target[key] = value


def _number(text: str, *, whole: bool) -> Any:
    """A number when the text is one; the text itself otherwise, for the loader to name the problem."""
    text = text.strip()
    if not text:
        return None
    try:
        return int(text) if whole else float(text)
    except ValueError:
        return text


def _criteria(text: str, name: str) -> Any:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return None
    weighted = [_WEIGHT.match(line) for line in lines]
    if not any(weighted):
        return lines[0] if len(lines) == 1 else lines
    result: dict[str, float] = {}
    for line, found in zip(lines, weighted, strict=True):
        if found is None:
            raise FormError(name, f"give every criterion a weight, or none: {line[:80]!r} has none")
        try:
            result[found.group("text")] = float(found.group("weight"))
        except ValueError:
            raise FormError(name, f"a weight is a number: {found.group('weight')[:40]!r}") from None
    return result


def _calls(text: str, name: str) -> list[Any]:
    calls: list[Any] = []
    for number, written in enumerate(text.splitlines(), start=1):
        line = written.strip()
        if not line:
            continue
        found = _TOOL_LINE.match(line)
        if found is None:
            raise FormError(name, f"line {number}: a tool name, then its arguments as a JSON object if any")
        if found.group("args") is None:
            calls.append(found.group("name"))
            continue
        try:
            arguments = read_json(found.group("args"), max_depth=MAX_OTHER_DEPTH)
        except json.JSONDecodeError as exc:
            raise FormError(name, f"line {number}: the arguments are not valid JSON: {exc.msg}") from None
        except InputLimitError as exc:
            raise FormError(name, f"line {number}: the arguments are {exc}") from None
        calls.append({"name": found.group("name"), "arguments": arguments})
    return calls


def _other(text: str) -> dict[str, Any]:
    return yaml_mapping(
        text, "other", "other keys are a YAML mapping of case keys (judges:, sql_checks:, timeout: ...)"
    )


def yaml_mapping(text: str, name: str, shape: str) -> dict[str, Any]:
    """A YAML mapping typed in a form, refused when too deep or alias-expanding (a form is hostile)."""
    if not text.strip():
        return {}
    try:
        data = read_yaml(text, name, lines=False, max_depth=MAX_OTHER_DEPTH).data
    except InputError as exc:
        where = f"line {exc.line}: " if exc.line is not None else ""
        problem = f"not valid YAML: {exc.problem}" if exc.syntax else exc.problem
        raise FormError(name, where + problem) from None
    if data is None:
        return {}
    if not isinstance(data, dict) or not all(isinstance(key, str) for key in data):
        raise FormError(name, shape)
    return data


_PATH = re.compile(r"^rounds\[(?P<index>\d+)\](?:\.(?P<key>\w+))?")
_FIELD_OF_KEY = {
    "name": "name",
    "description": "description",
    "tags": "tags",
    "prompt": "prompt",
    "rounds": "shape",
    "reference": "reference",
    "criteria": "criteria",
    "threshold": "threshold",
    "expect_tools": "tools",
    "revive_between_rounds": "revive",
    "max_follow_ups": "max_follow_ups",
}


def field_of(path: str, rounds_from: list[int]) -> str:
    """The form field a loader problem is about, from its path inside the case (``rounds[1].prompt``)."""
    if not path:
        return "case"
    found = _PATH.match(path)
    if found is not None:
        index = int(found.group("index"))
        slot = rounds_from[index] if index < len(rounds_from) else -1
        if slot < 0:
            return "case"
        key = found.group("key") or ""
        if key == "expect_tools":
            return f"r{slot}_tools_mode" if path.endswith(".mode") else f"r{slot}_tools"
        return f"r{slot}_{key}" if key in ROUND_FORM_KEYS else f"r{slot}"
    key = re.split(r"[.\[]", path, maxsplit=1)[0]
    if key == "expect_tools" and path.endswith(".mode"):
        return "tools_mode"
    return _FIELD_OF_KEY.get(key, "other")
