"""Judge entries of a suite file -> judges, juries and cascades, each placed in a tier.

An entry is one key, the judge's name, mapping to its options::

    - contains: {text: ["Beach House"], all: true}   # keyword options
    - matches: "\\\\d+%"                              # one value: the first argument
    - valid_json                                      # no options
    - jury: {judges: [...], voting: {average: 0.6}}
    - cascade: [{judges: [...]}, {judges: [...], voting: majority}]
    - python: "my_checks:mentions_price"              # any judge object or function

A named entry's factory comes from the judge registry, which also says its tier
and whether the suite's pass mark (``threshold``) applies to it.

Every problem is collected with its file, line and field; the caller raises
them together, so a suite never half-loads.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import inspect
import re
import sys
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from jurybox.core import (
    AtLeast,
    Average,
    Cascade,
    Consensus,
    Jury,
    Majority,
    Median,
    PluginError,
    Tier,
    TierPolicy,
    Voting,
    Weighted,
    judge_name,
)
from jurybox.models import MeteredModel
from jurybox.suites._case import BuiltJudge
from jurybox.suites._errors import Problem
from jurybox.suites._judge_model import JudgeModelError, resolve_judge_model
from jurybox.suites._registry import (
    TIER_DETERMINISTIC,
    TIER_LLM,
    TIER_LLM_OPERATIONS,
    TIERS,
    JudgeFactory,
    JudgeRegistry,
    tier_of,
)
from jurybox.suites._yaml import Located, PathKey, format_path

SPECIAL_ENTRIES = ("jury", "cascade", "python")
_CALLABLE_PREFIX = re.compile(r"^[\w.]+\(\) ")  # "LLMJudge.__init__() " at the start of a TypeError
_UNEXPECTED = re.compile(r"unexpected keyword argument '(\w+)'")


def _unknown_option(judge: str, option: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(option, known, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown option {option!r} for {judge!r}{hint}; it accepts: {', '.join(known) or '(none)'}"


@functools.cache
def typed_settings_names(factory: Callable[..., Any]) -> tuple[str, ...]:
    """The keys of a factory's typed ``**settings: Unpack[SomeTypedDict]`` catch-all, or () when untyped."""
    try:
        hints = typing.get_type_hints(factory, include_extras=True)
    except Exception:  # an annotation that does not resolve: the catch-all is then taken as open
        return ()
    for parameter in inspect.signature(factory).parameters.values():
        if parameter.kind is parameter.VAR_KEYWORD:
            hint = hints.get(parameter.name)
            if typing.get_origin(hint) is typing.Unpack and typing.is_typeddict(typing.get_args(hint)[0]):
                return tuple(typing.get_type_hints(typing.get_args(hint)[0]))
    return ()


VOTINGS: dict[str, Callable[..., Voting]] = {
    "majority": Majority,
    "consensus": Consensus,
    "average": Average,
    "median": Median,
    "weighted": Weighted,
    "at_least": AtLeast,
}
# The option a bare value fills, e.g. ``average: 0.6`` -> ``Average(threshold=0.6)``.
_VOTING_SHORTHAND = {"average": "threshold", "median": "threshold", "at_least": "k", "majority": "tie"}


class Calls(NamedTuple):
    """Judge-model calls a judge makes: at most (re-asks of unreadable replies included), and at fewest."""

    most: int
    fewest: int


def _total(parts: Iterable[Calls]) -> Calls:
    items = list(parts)
    return Calls(sum(c.most for c in items), sum(c.fewest for c in items))


def _count(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else default


class BuildFailedError(Exception):
    """Raised inside the builder to stop building one entry; the problem is already recorded."""


class JudgeBuilder:
    """Builds the judges of one suite file, recording problems instead of stopping at the first.

    Args:
        doc: The parsed suite file (for line numbers).
        registry: Judge factories by name.
        model: The judge model given to every LLM judge that does not name its own.
        base_dir: Where ``python:`` references are imported from.
    """

    def __init__(self, doc: Located, registry: JudgeRegistry, *, model: Any, base_dir: Path) -> None:
        self.doc = doc
        self.registry = registry
        self.model = model
        self.base_dir = base_dir
        self.problems: list[Problem] = []
        self._models: dict[str, Any] = {}
        self._options_of: dict[int, tuple[JudgeFactory, list[str], frozenset[str], bool]] = {}

    # -- reporting ---------------------------------------------------------------------------------

    def problem(self, path: PathKey, message: str) -> BuildFailedError:
        self.problems.append(Problem(self.doc.file, self.doc.line_of(path), format_path(path), message))
        return BuildFailedError(message)

    def valid_names(self) -> str:
        return ", ".join([*self.registry.names(), *SPECIAL_ENTRIES])

    # -- entries -----------------------------------------------------------------------------------

    def build_entries(
        self, entries: Sequence[Any], path: PathKey, *, threshold: float | None
    ) -> list[tuple[Any, str, Calls]]:
        """Build a list of entries; bad ones are recorded and left out. Returns (judge, tier, llm calls)."""
        built = []
        for index, entry in enumerate(entries):
            try:
                built.append(self.build_entry(entry, (*path, index), threshold=threshold))
            except BuildFailedError:
                continue
        return built

    def build_entry(self, entry: Any, path: PathKey, *, threshold: float | None) -> tuple[Any, str, Calls]:
        """One entry -> (judge, tier, the judge-model calls it makes).

        ``threshold`` is the pass mark the suite, case or round sets (None: each judge keeps its own).
        """
        name, value = self._split(entry, path)
        if name == "jury":
            return self._jury(value, (*path, name), threshold=threshold)
        if name == "cascade":
            return self._cascade(value, (*path, name), threshold=threshold)
        if name == "python":
            return self._python(value, (*path, name))
        try:
            factory = self.registry.get(name)
        except PluginError as exc:  # registered lazily by a package whose module cannot be imported here
            raise self.problem(path, str(exc)) from None
        if factory is None:
            close = difflib.get_close_matches(name, [*self.registry.names(), *SPECIAL_ENTRIES], n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise self.problem(path, f"unknown judge {name!r}{hint}; valid judges: {self.valid_names()}")
        args, kwargs = self._options(value, (*path, name))
        tier = self._placed(factory, kwargs.pop("tier", None), (*path, name, "tier"))
        judge = self.make(factory, args, kwargs, (*path, name), threshold=threshold)
        return judge, tier, self.llm_calls(judge, factory.tier)

    def _placed(self, factory: JudgeFactory, asked: Any, path: PathKey) -> str:
        """The tier an entry runs in: its factory's, or ``llm_operations`` for a check of an LLM operation's output."""
        if asked is None or asked == factory.tier:
            return factory.tier
        if asked == TIER_LLM_OPERATIONS and factory.tier != TIER_LLM:
            return TIER_LLM_OPERATIONS
        raise self.problem(
            path,
            f"{factory.name} runs in tier {factory.tier!r}; 'tier' can only move a deterministic or similarity "
            f"check to {TIER_LLM_OPERATIONS!r} (it checks an LLM operation's output), got {asked!r}",
        )

    def make(
        self,
        factory: JudgeFactory,
        args: list[Any],
        kwargs: dict[str, Any],
        path: PathKey,
        *,
        threshold: float | None,
    ) -> Any:
        """Call a factory with the entry's options plus the suite's model and, if it takes it, its threshold."""
        kwargs = dict(kwargs)
        if threshold is not None and factory.suite_threshold and "threshold" not in kwargs:
            kwargs["threshold"] = threshold
        if factory.tier == TIER_LLM and factory.accepts("model"):
            if isinstance(kwargs.get("model"), str):
                kwargs["model"] = self.named_model(kwargs["model"], (*path, "model"))
            elif "model" not in kwargs and self.model is not None:
                kwargs["model"] = self.model
        known, names, typed = self._known_options(factory)
        for option in kwargs:
            # A typed **settings catch-all names its keys; an untyped one takes anything.
            if not factory.accepts(option) or (typed and option not in names):
                raise self.problem((*path, option), _unknown_option(factory.name, option, known))
        try:
            judge = factory.factory(*args, **kwargs)
        except TypeError as exc:
            unexpected = _UNEXPECTED.search(str(exc))
            if unexpected is not None:  # an option a catch-all passed on to a class that does not take it
                raise self.problem((*path, unexpected[1]), _unknown_option(factory.name, unexpected[1], known)) from exc
            # "LLMJudge.__init__() takes 2 positional arguments": the class is ours, not the user's to know.
            said = _CALLABLE_PREFIX.sub("", str(exc))
            accepted = ", ".join(known) or "(none)"
            raise self.problem(path, f"bad options for {factory.name!r}: {said}; it accepts: {accepted}") from exc
        except (ValueError, LookupError) as exc:
            raise self.problem(path, f"{factory.name}: {exc}") from exc
        except (
            Exception
        ) as exc:  # a factory's own code (a plug-in's, say) failed on these options: say so, no traceback
            raise self.problem(path, f"bad options for {factory.name!r}: {type(exc).__name__}: {exc}") from exc
        if not callable(judge):
            raise self.problem(path, f"{factory.name} did not return a judge (got {type(judge).__name__})")
        return judge

    def _known_options(self, factory: JudgeFactory) -> tuple[list[str], frozenset[str], bool]:
        """A factory's option names in order (its named ones, then a typed catch-all's), as a set, and whether
        the catch-all is typed; read once per factory, not once per entry of a 10,000-case suite."""
        found = self._options_of.get(id(factory))
        if found is None or found[0] is not factory:
            settings = typed_settings_names(factory.factory)
            known = [*factory.parameters(), *settings]
            found = (factory, known, frozenset(known), bool(settings))
            self._options_of[id(factory)] = found
        return found[1], found[2], found[3]

    def _split(self, entry: Any, path: PathKey) -> tuple[str, Any]:
        if type(entry) is dict and len(entry) == 1:  # the commonest entry, without the ABC checks below
            ((name, value),) = entry.items()
            if type(name) is str:
                return name, value
        if isinstance(entry, str) and entry:
            return entry, None
        if isinstance(entry, Mapping) and len(entry) == 1:
            ((name, value),) = entry.items()
            if isinstance(name, str):
                return name, value
        raise self.problem(
            path,
            "a judge entry is a judge name, or one key (the judge name) mapping to its options, "
            f"e.g. '- contains: {{text: hello}}'; got {entry!r:.80}",
        )

    def _options(self, value: Any, path: PathKey) -> tuple[list[Any], dict[str, Any]]:
        if value is None:
            return [], {}
        if type(value) is dict or isinstance(value, Mapping):
            bad = [k for k in value if not isinstance(k, str) or not k.isidentifier()]
            if bad:
                raise self.problem(path, f"option names must be identifiers; got {bad!r}")
            return [], dict(value)
        # A single value is the factory's first argument: ``- contains: "Beach House"``.
        return [value], {}

    def llm_calls(self, judge: Any, tier: str) -> Calls:
        if tier != TIER_LLM:
            return Calls(0, 0)
        most = _count(getattr(judge, "max_calls", 1), 1)
        return Calls(most, min(most, _count(getattr(judge, "min_calls", most), most)))

    def named_model(self, spec: str, path: PathKey) -> Any:
        """One model object per spec, so judges naming the same model share one client."""
        if spec not in self._models:
            try:
                self._models[spec] = MeteredModel(resolve_judge_model(spec))
            except JudgeModelError as exc:
                raise self.problem(path, f"cannot use judge model {spec!r}: {exc}") from exc
        return self._models[spec]

    # -- composite entries -------------------------------------------------------------------------

    def _members(self, value: Any, path: PathKey, *, threshold: float | None) -> list[tuple[Any, str, Calls]]:
        if not isinstance(value, list) or not value:
            raise self.problem(path, "'judges' must be a non-empty list of judge entries")
        count = len(self.problems)
        members = self.build_entries(value, path, threshold=threshold)
        if len(self.problems) > count:
            raise BuildFailedError("member failed")
        return members

    def _jury(self, value: Any, path: PathKey, *, threshold: float | None) -> tuple[Any, str, Calls]:
        if not isinstance(value, Mapping):
            raise self.problem(path, "a jury is a mapping: {judges: [...], voting: ..., errors: ..., name: ...}")
        unknown = sorted(set(value) - {"judges", "voting", "errors", "name"})
        if unknown:
            raise self.problem(
                (*path, unknown[0]), f"unknown jury key(s) {unknown}; valid: judges, voting, errors, name"
            )
        members = self._members(value.get("judges"), (*path, "judges"), threshold=threshold)
        voting = self.voting(value["voting"], (*path, "voting")) if value.get("voting") is not None else None
        try:
            jury = Jury(
                *(m[0] for m in members),
                voting=voting,
                errors=value.get("errors", "propagate"),
                name=str(value.get("name", "jury")),
            )
        except (TypeError, ValueError) as exc:
            raise self.problem(path, str(exc)) from exc
        return jury, _costliest(m[1] for m in members), _total(m[2] for m in members)

    def _cascade(self, value: Any, path: PathKey, *, threshold: float | None) -> tuple[Any, str, Calls]:
        name = "cascade"
        if isinstance(value, Mapping):
            name = str(value.get("name", name))
            path, value = (*path, "tiers"), value.get("tiers")
        if not isinstance(value, list) or not value:
            raise self.problem(path, "a cascade is a non-empty list of tiers, each {judges: [...], policy: ...}")
        tiers: list[Tier] = []
        tier_kinds: list[str] = []
        tier_calls: list[Calls] = []
        for index, raw in enumerate(value):
            tier_path = (*path, index)
            last = index == len(value) - 1
            spec = raw if isinstance(raw, Mapping) and "judges" in raw else {"judges": [raw]}
            unknown = sorted(set(spec) - {"judges", "policy", "voting", "errors", "name"})
            if unknown:
                raise self.problem(
                    tier_path, f"unknown tier key(s) {unknown}; valid: judges, policy, voting, errors, name"
                )
            members = self._members(spec["judges"], (*tier_path, "judges"), threshold=threshold)
            default_policy = TierPolicy.FINAL if last else TierPolicy.REJECT_ON_ANY_FAIL
            try:
                policy = TierPolicy(str(spec.get("policy", default_policy.value)))
            except ValueError:
                valid = ", ".join(p.value for p in TierPolicy)
                raise self.problem((*tier_path, "policy"), f"unknown policy; valid: {valid}") from None
            voting = self.voting(spec["voting"], (*tier_path, "voting")) if spec.get("voting") is not None else None
            try:
                tiers.append(
                    Tier(
                        tuple(m[0] for m in members),
                        policy,
                        voting=voting or (Consensus() if policy is TierPolicy.FINAL else None),
                        errors=spec.get("errors", "propagate"),  # type: ignore[arg-type]  # Tier checks it
                        name=str(spec.get("name", f"tier{index + 1}")),
                    )
                )
            except (TypeError, ValueError) as exc:
                raise self.problem(tier_path, str(exc)) from exc
            tier_kinds.extend(m[1] for m in members)
            tier_calls.append(_total(m[2] for m in members))
        try:
            cascade = Cascade(*tiers, name=name)
        except (TypeError, ValueError) as exc:
            raise self.problem(path, str(exc)) from exc
        # Every tier but the last can end the cascade, so at fewest only the first one runs.
        calls = Calls(sum(c.most for c in tier_calls), tier_calls[0].fewest)
        return cascade, _costliest(tier_kinds), calls

    def _python(self, value: Any, path: PathKey) -> tuple[Any, str, Calls]:
        options: dict[str, Any] = {}
        tier: str | None = None
        if isinstance(value, Mapping):
            unknown = sorted(set(value) - {"ref", "options", "tier"})
            if unknown:
                raise self.problem((*path, unknown[0]), f"unknown key(s) {unknown}; valid: ref, options, tier")
            ref, options, tier = value.get("ref"), dict(value.get("options") or {}), value.get("tier")
        else:
            ref = value
        if not isinstance(ref, str) or ":" not in ref:
            raise self.problem(path, f"a python judge is 'module:attribute'; got {ref!r}")
        if tier is not None and tier not in TIERS:
            raise self.problem((*path, "tier"), f"unknown tier {tier!r}; valid: {', '.join(TIERS)}")
        try:
            target = import_reference(ref, self.base_dir)
        except (ImportError, AttributeError) as exc:
            raise self.problem(path, f"cannot import {ref!r}: {exc}") from exc
        judge = target
        if options:
            try:
                judge = target(**options)
            except (TypeError, ValueError) as exc:
                raise self.problem(path, f"{ref}(**options) failed: {exc}") from exc
        if not callable(judge):
            raise self.problem(path, f"{ref} is not a judge (not callable)")
        resolved = tier or tier_of(judge)
        return judge, resolved, (Calls(1, 1) if resolved == TIER_LLM else Calls(0, 0))

    # -- voting ------------------------------------------------------------------------------------

    def voting(self, value: Any, path: PathKey) -> Voting:
        """``majority`` | ``{average: 0.6}`` | ``{weighted: {weights: {...}, threshold: 0.5}}`` ..."""
        if isinstance(value, str):
            name, options = value, None
        elif isinstance(value, Mapping) and len(value) == 1:
            ((name, options),) = value.items()
        else:
            raise self.problem(path, f"voting is a name or one key with options; valid: {', '.join(VOTINGS)}")
        factory = VOTINGS.get(str(name))
        if factory is None:
            raise self.problem(path, f"unknown voting {name!r}; valid: {', '.join(VOTINGS)}")
        try:
            if options is None:
                return factory()
            if isinstance(options, Mapping):
                return factory(**options)
            return factory(**{_VOTING_SHORTHAND.get(str(name), "threshold"): options})
        except (TypeError, ValueError) as exc:
            raise self.problem(path, f"{name}: {exc}") from exc


def built(
    judge: Any,
    tier: str,
    calls: Calls,
    *,
    key: str,
    label: str,
    round_index: int | None,
    line: int | None,
    suite_model: Any = None,
) -> BuiltJudge:
    """A BuiltJudge; ``suite_model`` is the model the builder gave judges that name none."""
    own_model = tier == TIER_LLM and has_own_model(judge, tier, suite_model)
    return BuiltJudge(
        judge=judge,
        tier=tier,
        key=key,
        label=label,
        round=round_index,
        llm_calls=calls.most,
        line=line,
        own_model=own_model,
        fewest_llm_calls=calls.fewest,
        threshold=_pass_mark(judge),
    )


def _pass_mark(judge: Any) -> float | None:
    """The threshold a judge was built with (what it will pass at), read from the judge itself."""
    mark = getattr(judge, "threshold", None)
    return float(mark) if isinstance(mark, int | float) and not isinstance(mark, bool) else None


def has_own_model(judge: Any, tier: str, suite_model: Any = None) -> bool:
    """True when a judge's every model-backed part was built with a model other than the suite's.

    ``tier`` is the entry's (a registered factory's judge need not say it is an LLM
    judge); inside a jury or cascade, each member's ``tier`` says. One with no
    model-backed part (a Python judge that only says it is an LLM judge) has none.
    """
    parts = _model_parts(judge, tier)
    return bool(parts) and all(getattr(part, "model", None) not in (None, suite_model) for part in parts)


def _model_parts(judge: Any, tier: str) -> list[Any]:
    if isinstance(judge, Jury):
        return [part for member in judge.judges for part in _model_parts(member, tier_of(member))]
    if isinstance(judge, Cascade):
        members = [member for level in judge.tiers for member in level.judges]
        return [part for member in members for part in _model_parts(member, tier_of(member))]
    return [judge] if tier == TIER_LLM and hasattr(judge, "model") else []


def entry_label(entry: Any, judge: Any) -> str:
    """The name a suite author wrote for an entry (``contains``, ``jury``...)."""
    if isinstance(entry, str):
        return entry
    if isinstance(entry, Mapping) and len(entry) == 1:
        return str(next(iter(entry)))
    return judge_name(judge)


def import_reference(ref: str, base_dir: Path) -> Any:
    """Import ``module:attr.path``, looking in ``base_dir`` too (the suite's folder)."""
    module_name, _, attribute = ref.partition(":")
    target: Any = import_module(module_name, base_dir)
    for part in attribute.split("."):
        target = getattr(target, part)
    return target


def import_module(name: str, base_dir: Path) -> Any:
    """Import a module, looking in ``base_dir`` too (the suite's folder)."""
    added = str(base_dir) not in sys.path
    if added:
        sys.path.insert(0, str(base_dir))
    try:
        return importlib.import_module(name)
    finally:
        if added:
            sys.path.remove(str(base_dir))


def _costliest(tiers: Any) -> str:
    ordered = [t for t in tiers if t in TIERS]
    return max(ordered, key=TIERS.index) if ordered else TIER_DETERMINISTIC
