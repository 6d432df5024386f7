"""Tool-call trajectories: did the agent call the right tools, in the right order, with the right arguments?

Tool calls are actions, so they are compared structurally and never softly.
The judgment names which expected call is missing, which call was not
expected, and which argument differs, not just a boolean.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from jurybox.core import TIER_DETERMINISTIC, Check, Context, Judgment, NumericScore, ToolCall, judge_factory
from jurybox.judges._base import DeterministicJudge

MatchMode = Literal["strict", "ordered", "unordered", "subset", "superset"]
ArgumentMode = Literal["exact", "ignore", "subset", "superset"]
MATCH_MODES: tuple[str, ...] = ("strict", "ordered", "unordered", "subset", "superset")
ARGUMENT_MODES: tuple[str, ...] = ("exact", "ignore", "subset", "superset")


@dataclass(frozen=True)
class ExpectedCall:
    """An expected call; ``arguments`` None means "any arguments" (only the name was given)."""

    name: str
    arguments: Mapping[str, Any] | None


def _expected(value: ToolCall | str | Mapping[str, Any]) -> ExpectedCall:
    if isinstance(value, str):
        return ExpectedCall(value, None)
    if isinstance(value, Mapping) and "arguments" not in value and "args" not in value:
        return ExpectedCall(ToolCall.coerce(value).name, None)
    call = ToolCall.coerce(value)
    return ExpectedCall(call.name, dict(call.arguments))


def argument_differences(expected: Mapping[str, Any], actual: Mapping[str, Any], mode: str) -> list[str]:
    """Human-readable differences between argument mappings under an argument mode."""
    if mode == "ignore":
        return []
    differences = []
    if mode in ("exact", "subset"):
        for key, value in expected.items():
            if key not in actual:
                differences.append(f"argument {key!r} missing (expected {value!r})")
            elif actual[key] != value:
                differences.append(f"argument {key!r}: expected {value!r}, got {actual[key]!r}")
    if mode in ("exact", "superset"):
        for key, value in actual.items():
            if key not in expected:
                differences.append(f"unexpected argument {key!r}={value!r}")
            elif mode == "superset" and expected[key] != value:
                differences.append(f"argument {key!r}: expected {expected[key]!r}, got {value!r}")
    return differences


class _ToolCalls(DeterministicJudge):
    def __init__(
        self,
        expected: Sequence[ExpectedCall],
        mode: str,
        args: str,
        per_tool: Mapping[str, str],
        name: str,
    ) -> None:
        super().__init__(name)
        self.expected = tuple(expected)
        self.mode = mode
        self.args = args
        self.per_tool = dict(per_tool)

    def differences(self, expected: ExpectedCall, actual: ToolCall) -> list[str]:
        if expected.name != actual.name:
            return [f"expected {expected.name}, got {actual.name}"]
        if expected.arguments is None:
            return []
        mode = self.per_tool.get(expected.name, self.args)
        return argument_differences(expected.arguments, actual.arguments, mode)

    def check(self, context: Context) -> Judgment:
        actual = context.tool_calls
        if self.mode == "strict":
            pairs, unexpected, near = self._strict(actual)
        elif self.mode == "ordered":
            pairs, unexpected, near = self._in_order(actual)
        else:
            pairs, unexpected, near = self._matched(actual)
        missing_fails = self.mode in ("strict", "ordered", "unordered", "subset")
        unexpected_fails = self.mode in ("strict", "unordered", "superset")
        checks: list[Check] = []
        problems: list[str] = []
        for index, call in enumerate(self.expected):
            if index in pairs:
                checks.append(Check(f"expected #{index + 1} {call.name}", True, f"made as call #{pairs[index] + 1}"))
                continue
            detail = near.get(index, "not called")
            checks.append(Check(f"expected #{index + 1} {call.name}", not missing_fails, detail))
            if missing_fails:
                problems.append(
                    f"expected {call.name} {detail}" if detail != "not called" else f"{call.name} not called"
                )
        for position in unexpected:
            made_call = actual[position]
            checks.append(
                Check(
                    f"call #{position + 1} {made_call.name}",
                    not unexpected_fails,
                    f"not expected (args {dict(made_call.arguments)!r})"
                    + ("" if unexpected_fails else f"; allowed in {self.mode} mode"),
                )
            )
            if unexpected_fails:
                problems.append(f"unexpected call #{position + 1} {made_call.name}")
        denominator = {
            "subset": len(self.expected),
            "ordered": len(self.expected),
            "superset": len(actual),
        }.get(self.mode, max(len(self.expected), len(actual)))
        score = NumericScore(len(pairs), 0, denominator) if denominator else NumericScore(1.0)
        made = ", ".join(context.tool_names) or "no calls"
        if problems:
            return Judgment.failed(
                score, f"{self.mode} match failed: {'; '.join(problems)} (made: {made})", checks=checks
            )
        return Judgment.passed(
            score, f"{self.mode} match: {len(pairs)} expected call(s) made (made: {made})", checks=checks
        )

    def _strict(self, actual: Sequence[ToolCall]) -> tuple[dict[int, int], list[int], dict[int, str]]:
        pairs: dict[int, int] = {}
        near: dict[int, str] = {}
        unexpected: list[int] = []
        for index in range(max(len(self.expected), len(actual))):
            if index >= len(self.expected):
                unexpected.append(index)
            elif index >= len(actual):
                near[index] = f"not called (only {len(actual)} call(s) made)"
            else:
                diffs = self.differences(self.expected[index], actual[index])
                if diffs:
                    near[index] = f"at position {index + 1}: " + "; ".join(diffs)
                    if actual[index].name != self.expected[index].name:
                        unexpected.append(index)
                else:
                    pairs[index] = index
        return pairs, unexpected, near

    def _in_order(self, actual: Sequence[ToolCall]) -> tuple[dict[int, int], list[int], dict[int, str]]:
        """Each expected call matched to a later call than the one before it; other calls may come between.

        Taking the first compatible call each time is optimal: a later choice never leaves more room.
        """
        pairs: dict[int, int] = {}
        near: dict[int, str] = {}
        position = 0
        for index, expected in enumerate(self.expected):
            found = next((j for j in range(position, len(actual)) if not self.differences(expected, actual[j])), None)
            if found is None:
                same_name = [j for j in range(len(actual)) if actual[j].name == expected.name]
                if not same_name:
                    continue
                j = same_name[0]
                diffs = self.differences(expected, actual[j])
                near[index] = f"called as #{j + 1} but " + (
                    "; ".join(diffs) if diffs else "out of order (after the call it must follow)"
                )
                continue
            pairs[index] = found
            position = found + 1
        matched = set(pairs.values())
        return pairs, [j for j in range(len(actual)) if j not in matched], near

    def _matched(self, actual: Sequence[ToolCall]) -> tuple[dict[int, int], list[int], dict[int, str]]:
        """Order-free matching: each expected call takes a distinct compatible actual call (max bipartite matching)."""
        compatible = [
            [j for j, call in enumerate(actual) if not self.differences(expected, call)] for expected in self.expected
        ]
        owner: dict[int, int] = {}  # actual index -> expected index

        def augment(i: int, seen: set[int]) -> bool:
            for j in compatible[i]:
                if j in seen:
                    continue
                seen.add(j)
                if j not in owner or augment(owner[j], seen):
                    owner[j] = i
                    return True
            return False

        for i in range(len(self.expected)):
            augment(i, set())
        pairs = {i: j for j, i in owner.items()}
        missing = [i for i in range(len(self.expected)) if i not in pairs]
        unexpected = [j for j in range(len(actual)) if j not in owner]
        near: dict[int, str] = {}
        for i in missing:
            same_name = [j for j in unexpected if actual[j].name == self.expected[i].name] or [
                j for j in range(len(actual)) if actual[j].name == self.expected[i].name
            ]
            if same_name:
                j = same_name[0]
                near[i] = f"called as #{j + 1} but " + "; ".join(self.differences(self.expected[i], actual[j]))
        return pairs, unexpected, near


@judge_factory(tier=TIER_DETERMINISTIC)
def tool_calls(
    expected: Sequence[ToolCall | str | Mapping[str, Any]],
    *,
    mode: MatchMode = "strict",
    args: ArgumentMode = "exact",
    per_tool: Mapping[str, ArgumentMode] | None = None,
    name: str | None = None,
) -> DeterministicJudge:
    """Compare the calls in ``Context.tool_calls`` with the expected trajectory.

    Args:
        expected: Tool names, ``{"name": ..., "arguments": {...}}`` dicts or
            ToolCalls. A bare name accepts any arguments.
        mode: How the calls must match the expected ones. ``strict``: the same
            calls in the same order, nothing else. ``ordered``: every expected
            call was made, in this order, other calls allowed before, between and
            after them. ``unordered``: the same calls in any order. ``subset``:
            every expected call was made (extra calls allowed). ``superset``:
            every call made was expected (some expected calls may be missing).
        args: How arguments compare. ``exact``; ``ignore``; ``subset`` (the
            expected arguments are present with those values, extra arguments
            allowed); ``superset`` (every argument passed was expected).
        per_tool: Argument mode per tool name, overriding ``args``.
        name: The judge's name in reports.

    Raises:
        ValueError: an unknown mode, or a malformed expected call.
    """
    if mode not in MATCH_MODES:
        raise ValueError(f"tool_calls(mode=...) must be one of {', '.join(MATCH_MODES)}; got {mode!r}")
    overrides = dict(per_tool or {})
    for tool, tool_mode in [("(args)", args), *overrides.items()]:
        if tool_mode not in ARGUMENT_MODES:
            raise ValueError(f"argument mode for {tool} must be one of {', '.join(ARGUMENT_MODES)}; got {tool_mode!r}")
    if isinstance(expected, str | Mapping):
        raise TypeError("tool_calls() takes a list of expected calls, e.g. ['get_listings']")
    calls = [_expected(item) for item in expected]
    label = ", ".join(c.name for c in calls) or "no calls"
    return _ToolCalls(calls, mode, args, overrides, name or f"tool_calls[{mode}]({label})")
