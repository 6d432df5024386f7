"""What starting a run asks for: one frozen ``RunRequest``, checked whole when it is made.

A request that exists can be prepared: every field is in range and the fields
agree with each other (a resume needs a store, a stored suite cannot be mixed
with suite files, ...). What depends on this machine (``os.fork``) or on the
suites themselves is checked when the request is prepared.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jurybox.suites import MAX_CONCURRENCY, MAX_RETRIES, MAX_TIMEOUT

if TYPE_CHECKING:
    from jurybox.models import JudgeModel

RESUME_LAST = "last"
"""``RunRequest.resume`` for "the latest unfinished run of each suite"."""
EXECUTOR_OPTIONS: dict[str, frozenset[str]] = {
    "local": frozenset(),
    "processes": frozenset(),
    "ray": frozenset({"address", "actors"}),
}
"""The options each built-in executor takes; an executor a plug-in adds gets its options as they are."""


class RunRequestError(ValueError):
    """The request asks for something that cannot run; the message says what, in one line."""


class NoCasesError(RunRequestError):
    """No case is left to run: the filter matches none of a suite's cases (or the suite has none).

    Attributes:
        suites: The names of the suites with no case to run.
        selectors: The request's filter.
    """

    def __init__(self, suites: Sequence[str], selectors: Sequence[str]) -> None:
        self.suites = tuple(suites)
        self.selectors = tuple(selectors)
        matches = f"matches --filter {' '.join(selectors)}" if selectors else "is left to run"
        super().__init__(f"no case of suite {', '.join(suites)} {matches}")


@dataclass(frozen=True)
class RunRequest:
    """One run (or one per suite) to start: what to run, with which judge model, how and where it is kept.

    Attributes:
        suites: Suite files to run, one run each.
        stored_suites: Names of suites kept in the store (``jurybox store import``), instead of files:
            the current version of each runs, its relative paths resolved against the current directory.
        judge_model: The LLM judges' model (a spec such as ``openai:gpt-4o-mini``, or a JudgeModel);
            None: the suite's ``judge_model:``, then ``$JURYBOX_JUDGE_MODEL``.
        concurrency: Cases in flight at once; None: the suite's ``concurrency:``, else 8.
        selectors: Only the cases with one of these names, tags or name globs.
        timeout: Seconds per case, overriding the suite's.
        retries: Extra attempts after an agent crash or hang, overriding the suite's.
        judge_timeout: Seconds per judge-model attempt, overriding the suite's ``judge_timeout``.
        judge_retries: Retries after a judge-model fault, overriding the suite's ``judge_retries``.
        store: The store's URL; None: ``$JURYBOX_STORE``, else ``sqlite:///.jurybox/jurybox.db``.
        no_store: Keep the results in memory only (nothing is written, nothing can be resumed).
        resume: A run id (or a unique prefix) to finish, or ``last``: each suite's latest unfinished run.
        workers: Forked processes that run the cases (above 1: the ``processes`` executor).
        executor: The registered executor that runs the cases: ``local``, ``processes``, ``ray``, or one
            a plug-in adds.
        executor_options: The executor's own options: ``ray`` takes ``address`` and ``actors``; an
            executor a plug-in adds is handed them as its settings.
        lessons: Stored lessons each case is handed at most; None: the engine's default (5).
        extra_config: Facts to record in each run's config (an experiment's id, say), next to the git
            branch and dirty flag the service records itself.
        base_dir: Where the suites' relative paths resolve; None: each suite file's folder (the
            current directory for stored suites).
        variants: Of a suite with ``variants:``, only these (by name); empty: every variant.
            With ``resume``, ``last`` or an experiment's id finishes that experiment.
    """

    suites: tuple[Path, ...] = ()
    stored_suites: tuple[str, ...] = ()
    judge_model: str | JudgeModel | None = None
    concurrency: int | None = None
    selectors: tuple[str, ...] = ()
    timeout: float | None = None
    retries: int | None = None
    judge_timeout: float | None = None
    judge_retries: int | None = None
    store: str | None = None
    no_store: bool = False
    resume: str | None = None
    workers: int = 1
    executor: str = "local"
    executor_options: Mapping[str, Any] = field(default_factory=dict, hash=False)
    lessons: int | None = None
    extra_config: Mapping[str, Any] = field(default_factory=dict, hash=False)
    base_dir: Path | None = None
    variants: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # Lists and str paths are taken (a script writes them so), kept as tuples and Paths.
        object.__setattr__(self, "suites", _paths(self.suites))
        object.__setattr__(self, "stored_suites", _names("stored_suites", self.stored_suites))
        object.__setattr__(self, "selectors", _names("selectors", self.selectors))
        object.__setattr__(self, "variants", _names("variants", self.variants))
        object.__setattr__(self, "executor_options", _keyed("executor_options", self.executor_options))
        object.__setattr__(self, "extra_config", _keyed("extra_config", self.extra_config))
        if self.base_dir is not None:
            object.__setattr__(self, "base_dir", Path(self.base_dir))
        problem = _field_problem(self) or _combination_problem(self)
        if problem is not None:
            raise RunRequestError(problem)


def _sequence(name: str, value: object) -> tuple[Any, ...]:
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise RunRequestError(f"{name} is a list, got {type(value).__name__} {value!r:.80}")
    return tuple(value)


def _paths(value: object) -> tuple[Path, ...]:
    items = _sequence("suites", value)
    for item in items:
        if not isinstance(item, str | os.PathLike):
            raise RunRequestError(f"suites holds file paths, got {item!r:.80}")
    return tuple(Path(item) for item in items)


def _names(name: str, value: object) -> tuple[str, ...]:
    items = _sequence(name, value)
    for item in items:
        if not isinstance(item, str) or not item.strip():
            raise RunRequestError(f"{name} holds names, got {item!r:.80}")
    return items


def _keyed(name: str, value: object) -> dict[str, Any]:
    if not isinstance(value, Mapping) or not all(isinstance(key, str) for key in value):
        raise RunRequestError(f"{name} maps names to values, got {value!r:.80}")
    return dict(value)


def _whole(value: object, low: int, high: float) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _seconds(value: object) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and 0 < value <= MAX_TIMEOUT
    )


def _field_problem(request: RunRequest) -> str | None:
    """A field out of its range, or of the wrong type, in the command line's words where it has some."""
    checks: list[tuple[bool, str]] = [
        (
            request.concurrency is None or _whole(request.concurrency, 1, MAX_CONCURRENCY),
            f"concurrency is a whole number from 1 to {MAX_CONCURRENCY}, got {request.concurrency!r}",
        ),
        (
            request.timeout is None or _seconds(request.timeout),
            f"timeout is seconds above 0, at most {MAX_TIMEOUT:g}, got {request.timeout!r}",
        ),
        (
            request.judge_timeout is None or _seconds(request.judge_timeout),
            f"judge_timeout is seconds above 0, at most {MAX_TIMEOUT:g}, got {request.judge_timeout!r}",
        ),
        (
            request.retries is None or _whole(request.retries, 0, MAX_RETRIES),
            f"retries is a whole number from 0 to {MAX_RETRIES}, got {request.retries!r}",
        ),
        (
            request.judge_retries is None or _whole(request.judge_retries, 0, MAX_RETRIES),
            f"judge_retries is a whole number from 0 to {MAX_RETRIES}, got {request.judge_retries!r}",
        ),
        (_whole(request.workers, 1, math.inf), f"workers is a whole number from 1, got {request.workers!r}"),
        (
            request.lessons is None or _whole(request.lessons, 0, math.inf),
            f"lessons is a whole number from 0, got {request.lessons!r}",
        ),
        (
            isinstance(request.executor, str) and bool(request.executor.strip()),
            f"executor is a name, got {request.executor!r:.80}",
        ),
        (
            request.resume is None or (isinstance(request.resume, str) and bool(request.resume.strip())),
            f"resume is a run id or 'last', got {request.resume!r:.80}",
        ),
        (isinstance(request.no_store, bool), f"no_store is True or False, got {request.no_store!r:.80}"),
        (
            request.store is None or isinstance(request.store, str),
            f"store is a URL, got {type(request.store).__name__}",
        ),
    ]
    for ok, problem in checks:
        if not ok:
            return problem
    return _executor_options_problem(request)


def _executor_options_problem(request: RunRequest) -> str | None:
    known = EXECUTOR_OPTIONS.get(request.executor)
    unknown = sorted(set(request.executor_options) - known) if known is not None else []
    if unknown:
        takes = ", ".join(sorted(known or ())) or "none"
        return f"the {request.executor} executor takes no option {', '.join(unknown)} (its options: {takes})"
    address = request.executor_options.get("address")
    actors = request.executor_options.get("actors")
    if request.executor == "ray" and address is not None and not isinstance(address, str):
        return f"the ray executor's address is a string ('auto', ray://HOST:10001), got {address!r:.80}"
    if request.executor == "ray" and actors is not None and not _whole(actors, 1, math.inf):
        return f"the ray executor's actors is a whole number from 1, got {actors!r:.80}"
    return None


def _combination_problem(request: RunRequest) -> str | None:
    """Fields that cannot work together, in the order ``jurybox run`` has always checked them."""
    if request.stored_suites:
        if request.suites:
            return "give suite files or --suite NAME (a suite kept in the store), not both"
        if request.no_store:
            return "--suite reads the suite from the store; it cannot be used with --no-store"
        if len(set(request.stored_suites)) != len(request.stored_suites):
            return "a --suite is given twice"
    elif not request.suites:
        return "give a suite file, or --suite NAME to run a suite kept in the store"
    if request.resume is not None and request.no_store:
        return "--resume reads the earlier run from the store; it cannot be used with --no-store"
    if request.workers > 1 and request.no_store:
        return "--workers: each worker writes its results to the store; it cannot be used with --no-store"
    if request.resume is not None and request.selectors:
        return "--resume finishes the cases the run planned (with the --filter it was started with); drop --filter"
    if request.resume != RESUME_LAST and request.resume is not None and len(request.suites + request.stored_suites) > 1:
        return "--resume RUN_ID names one run of one suite; give a single suite (or use --resume last)"
    return None
