"""Experiments in the run service: a suite's variants (and trials) become runs tied by one experiment id.

``prepare`` turns a suite with ``variants:`` into one planned suite per chosen
variant, each the suite with the variant's agent (and judge model) under the
name ``suite@variant``, so each variant is an ordinary run with its own history
and gate. A suite with ``trials:`` but no variants is an experiment of one.
``PreparedRun.open`` gives the experiment its id, or finds the experiment to
resume: a variant whose run completed is not run again, an unfinished one is
resumed, one never started starts under the same id; so every (case, variant,
trial) is judged exactly once however often the experiment is killed.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from jurybox.core import environment
from jurybox.runs._request import RESUME_LAST, RunRequestError
from jurybox.suites import Suite, Variant, load_suite, trial_config, variant_suite_name

if TYPE_CHECKING:
    from jurybox.store import Store


@dataclass
class ExperimentSlot:
    """The experiment a planned suite belongs to, and which of its variants it is.

    Attributes:
        suite: The suite's own name (its variants' runs are ``suite@variant``).
        variants: The variants the experiment runs, in the suite's order (empty: trials only).
        variant: This one (None for an experiment of trials only).
        id: The experiment's id, known once the run is opened.
        done: The variant's run completed before (a resumed experiment does not run it again).
        env: Environment variables set while the variant runs.
    """

    suite: str
    variants: tuple[str, ...]
    variant: Variant | None = None
    id: str | None = None
    done: bool = False
    env: Mapping[str, str] = field(default_factory=dict)

    def config(self, cases: Sequence[Any]) -> dict[str, Any]:
        """What the variant's run records of the experiment in its config (the view reads it back)."""
        found: dict[str, Any] = {
            "experiment": {
                "id": self.id,
                "suite": self.suite,
                "variants": list(self.variants),
                "variant": self.variant.name if self.variant is not None else None,
                "changes": dict(self.variant.changes) if self.variant is not None else {},
            }
        }
        rules = trial_config(cases)
        if rules:
            found["trials"] = rules
        return found


def new_experiment_id() -> str:
    """An experiment id in the run ids' form (sortable by time), marked as an experiment's."""
    return f"x{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


def experiment_suites(
    suite: Suite, chosen: Sequence[str], load: Mapping[str, Any]
) -> list[tuple[Suite, ExperimentSlot | None]]:
    """The suites ``suite`` runs as: one per chosen variant, itself in an experiment of trials, or itself.

    Raises:
        RunRequestError: a chosen variant the suite does not have (or variants chosen for a suite with none).
    """
    if not suite.variants:
        if chosen:
            raise RunRequestError(f"suite {suite.name!r} has no variants: drop --variant, or add variants: to it")
        # A cases file holds no trials (its check refuses them): only the inline cases are looked at, so a
        # million-line file is not built once more here.
        inline = getattr(suite.cases, "inline", suite.cases)
        trials = any(getattr(case, "trial", None) is not None for case in inline)
        return [(suite, ExperimentSlot(suite.name, ()) if trials else None)]
    by_name = {variant.name: variant for variant in suite.variants}
    unknown = [name for name in chosen if name not in by_name]
    if unknown:
        raise RunRequestError(
            f"suite {suite.name!r} has no variant {', '.join(map(repr, unknown))} (its variants: {', '.join(by_name)})"
        )
    picked = [v for v in suite.variants if not chosen or v.name in chosen]
    names = tuple(v.name for v in picked)
    made: list[tuple[Suite, ExperimentSlot | None]] = []
    for variant in picked:
        base = suite
        if variant.judge_model is not None:  # the judges are built with their model: load them again with this one
            base = load_suite(suite.path, **{**load, "judge_model": variant.judge_model})
        made.append(
            (
                replace(base, name=variant_suite_name(suite.name, variant.name), agent=variant.agent),
                ExperimentSlot(suite.name, names, variant, env=dict(variant.env)),
            )
        )
    return made


def experiment_to_resume(store: Store, names: Sequence[str], resume: str | None) -> str | None:
    """The id of the experiment these slots (one suite's variants) finish; None: a new experiment.

    ``last`` takes the suite's latest experiment if it is unfinished; any other value names one.

    Raises:
        StoreError: no experiment has that id, or its runs are another suite's.
    """
    if resume is None:
        return None
    if resume == RESUME_LAST:
        found = store.runs.latest_experiment(names)
        if found is None:
            return None
        runs = store.runs.of_experiment(found)
        finished = {run.suite for run in runs if run.finished}
        return None if all(name in finished for name in names) else found
    found = store.runs.resolve_experiment(resume)
    suites = {run.suite for run in store.runs.of_experiment(found)}
    if not suites & set(names):
        from jurybox.store import StoreError

        raise StoreError(f"experiment {found} ran {', '.join(sorted(suites))}, not {', '.join(names)}")
    return found


def variant_run(store: Store, experiment: str, suite: str) -> tuple[str | None, bool]:
    """The run of ``suite`` (one variant) in the experiment, and whether it completed; (None, False): none yet."""
    runs = [run for run in store.runs.of_experiment(experiment) if run.suite == suite]
    if not runs:
        return None, False
    latest = runs[-1]
    return latest.id, latest.finished


@contextlib.contextmanager
def variant_environment(env: Mapping[str, str]) -> Iterator[None]:
    """Set a variant's environment variables while it runs, and put the old values back after.

    The process's environment is one for all its threads: a server running several
    experiments at once would mix them, so the dashboard runs one run at a time.
    """
    with environment(env):
        yield
