"""A loaded suite: cases with their judges built and placed in cascade tiers, ready to run."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from jurybox.agents import TargetConfigError
from jurybox.core import Voting
from jurybox.suites._registry import TIER_LLM, TIERS
from jurybox.suites._seed import Seed
from jurybox.suites._spec import Criteria, Defaults, SqlCheck
from jurybox.suites._trials import Trial

if TYPE_CHECKING:
    from jurybox.suites._variants import Variant


@dataclass(frozen=True)
class BuiltJudge:
    """A judge built from a suite entry, the tier it runs in and the round it looks at.

    Attributes:
        judge: The judge (a callable ``Context -> Judgment``).
        tier: ``deterministic``, ``similarity``, ``llm_operations`` or ``llm_judge``.
        key: Its name in the case's verdict tree, e.g. ``round2.rubric``.
        label: What the suite file called it (``contains``, ``jury``, ``criteria``...).
        round: The round whose reply it judges (0-based), or None for the whole conversation.
        llm_calls: Judge-model calls it makes at most (0 for deterministic judges), re-asks included.
        fewest_llm_calls: Judge-model calls when every reply is readable (no re-ask).
        line: Where the entry is in the suite file.
        own_model: An LLM judge whose entry names its model (``model:``), or a jury or cascade
            whose every LLM member does: it can run when the suite has no judge model.
        threshold: The pass mark the judge was built with, or None when it has none of its
            own (a jury, a cascade, a check that only passes or fails); ``--dry-run`` shows it.
    """

    judge: Any
    tier: str
    key: str
    label: str
    round: int | None = None
    llm_calls: int = 0
    line: int | None = None
    own_model: bool = False
    fewest_llm_calls: int = 0
    threshold: float | None = None


@dataclass(frozen=True)
class RoundPlan:
    """One round to send: the prompt, its reference answer and the replies to clarifying questions."""

    prompt: str
    reference: str | None = None
    follow_ups: tuple[str, ...] = ()
    criteria: Criteria | None = None


@dataclass(frozen=True)
class Case:
    """One case, ready to run."""

    name: str
    rounds: tuple[RoundPlan, ...]
    judges: tuple[BuiltJudge, ...]
    description: str = ""
    tags: tuple[str, ...] = ()
    reference: str | None = None
    sources: tuple[str, ...] = ()
    voting: Voting | None = None
    sql_checks: tuple[SqlCheck, ...] = ()
    revive_between_rounds: bool = False
    max_follow_ups: int = 0
    timeout: float = 120.0
    retries: int = 1
    metadata: Mapping[str, Any] = field(default_factory=dict)
    skip: bool = False
    line: int | None = None
    spec: Mapping[str, Any] = field(default_factory=dict)
    """The case as written in the file (kept for the store's case history)."""
    mcp_call: Mapping[str, Any] | None = None
    """What the case asks the suite's MCP server directly (``tool``/``arguments``, ``list_tools``, ``resource``)."""
    trial: Trial | None = None
    """Which trial of a repeated case (``trials:``) this is; None for a case that runs once."""

    @property
    def multi_round(self) -> bool:
        return len(self.rounds) > 1

    def tiers(self, *, llm_enabled: bool = True) -> dict[str, list[BuiltJudge]]:
        """The judges by tier, in run order; the LLM tier only when it runs (``llm_tier_runs``)."""
        by_tier: dict[str, list[BuiltJudge]] = {}
        llm_runs = self.llm_tier_runs(llm_enabled=llm_enabled)
        for tier in TIERS:
            members = [j for j in self.judges if j.tier == tier]
            if members and (llm_runs or tier != TIER_LLM):
                by_tier[tier] = members
        return by_tier

    def llm_judges(self) -> list[BuiltJudge]:
        return [j for j in self.judges if j.tier == TIER_LLM]

    def llm_tier_runs(self, *, llm_enabled: bool) -> bool:
        """True when this case's LLM judges run: with the suite's judge model, or each with its own.

        All or none: a tier that ran some of its judges would decide on less than the
        case asks for, and be counted in the tier's pass rate as if it had not.
        """
        return llm_enabled or all(j.own_model for j in self.llm_judges())

    def skipped_without_model(self, *, llm_enabled: bool = False) -> list[BuiltJudge]:
        """The LLM judges left out of the case (all of them, or none: see ``llm_tier_runs``)."""
        return [] if self.llm_tier_runs(llm_enabled=llm_enabled) else self.llm_judges()

    def judge_calls(self, *, llm_enabled: bool = True) -> tuple[int, int]:
        """(fewest, most) judge-model calls the verdict needs: fewest when a cheap tier fails first."""
        llm_runs = self.llm_tier_runs(llm_enabled=llm_enabled)
        running = [j for j in self.judges if llm_runs or j.tier != TIER_LLM]
        most = sum(j.llm_calls for j in running)
        cheap = any(j.tier != TIER_LLM for j in running)
        fewest = 0 if cheap and self.voting is None else sum(j.fewest_llm_calls for j in running)
        return fewest, most

    def matches(self, selector: str) -> bool:
        """True when ``selector`` is the case name, one of its tags, or a glob on the name (a trial's case's too)."""
        return name_matches(self.name, self.tags, selector) or (
            self.trial is not None and name_matches(self.trial.of, (), selector)
        )


def name_matches(name: str, tags: Sequence[str], selector: str) -> bool:
    """True when ``selector`` is ``name``, one of ``tags``, or a glob on the name (``-k`` / ``--filter``)."""
    return selector == name or selector in tags or fnmatchcase(name, selector)


@dataclass(frozen=True)
class Suite:
    """A suite file, loaded and checked.

    Attributes:
        name: The suite's name (the store keys runs by it).
        path: The file it came from.
        agent: The ``agent:`` mapping for ``jurybox.agents.make_target``.
        cases: The cases, in file order.
        seeds: Seed records loaded from ``seeds:`` (fixtures for the agent).
        judge_model: The judge model the LLM judges were built with (a
            ``provider:model`` name), or None when the LLM tier is skipped.
    """

    name: str
    path: Path
    agent: Mapping[str, Any]
    cases: Sequence[Case]
    """A tuple; for a suite with a ``cases_file``, a ``StreamedCases`` that builds each case as it is reached."""
    defaults: Defaults = field(default_factory=Defaults)
    description: str = ""
    database: str | None = None
    concurrency: int | None = None
    seeds: tuple[Seed, ...] = ()
    judge_model: str | None = None
    model: Any = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    folder: Path | None = None
    """Where relative paths resolve (``load_suite(base_dir=...)``); None: the file's folder."""
    variants: tuple[Variant, ...] = ()
    """The ``variants:`` of the agent an experiment compares (``jurybox.suites.Variant``), in file order."""
    follow_up_model: Any = None
    """The suite's ``follow_up_model``: decides whether the agent asked a question and answers it (None: ``model``)."""
    written: Mapping[str, Any] | None = None
    """The file's top-level keys but ``cases``, as written (the store keeps agent, defaults and settings
    without reading a big file twice); None for a suite not loaded from a file."""

    @property
    def base_dir(self) -> Path:
        return self.folder if self.folder is not None else self.path.parent

    @property
    def llm_enabled(self) -> bool:
        return self.model is not None

    @property
    def sample_cases(self) -> Sequence[Case]:
        """Cases that show every judge the suite has, for passes over its judges (identities, preflight).

        Every case; for a suite with a ``cases_file``, its inline cases and one built case of the file
        per distinct set of judges (building a million cases again would take minutes).
        """
        file = getattr(self.cases, "file", None)
        if file is None:
            return self.cases
        return (*getattr(self.cases, "inline", ()), *file.samples)

    def select(self, selectors: Iterable[str] = ()) -> Sequence[Case]:
        """Cases not marked ``skip`` that match any selector (all of them when there is none).

        A tuple, or for a suite with a ``cases_file`` a lazy view that builds each case as it is reached.
        """
        streamed = getattr(self.cases, "select", None)
        if streamed is not None:
            return cast(Sequence[Case], streamed(selectors))
        chosen = [c for c in self.cases if not c.skip]
        wanted: Sequence[str] = list(selectors)
        if wanted:
            chosen = [c for c in chosen if any(c.matches(s) for s in wanted)]
        return tuple(chosen)


def seeded_agent(agent: Mapping[str, Any], seeds: Sequence[Seed]) -> Mapping[str, Any]:
    """The ``agent:`` mapping the runner builds: seed records go to a Python agent factory as ``seeds``.

    Raises:
        TargetConfigError: seed records for an agent that cannot take them (field ``seeds``).
    """
    spec = dict(agent)
    if not seeds:
        return spec
    if "python" not in spec:
        raise TargetConfigError(
            "seeds: seed records are handed to a Python agent factory as its 'seeds' keyword argument; "
            "for an openai/http/mcp agent load them into the agent yourself (jurybox.suites.load_seeds)"
        )
    if spec.get("kind") == "function":
        raise TargetConfigError(
            "seeds: seed records are handed to a Python agent factory as its 'seeds' keyword argument, "
            "and agent.kind says the agent is a respond function: point agent.python at a factory "
            "(module:make_agent) taking seeds=..."
        )
    options = dict(spec.get("options") or {})
    options.setdefault("seeds", [seed.to_dict() for seed in seeds])
    spec["options"] = options
    return spec
