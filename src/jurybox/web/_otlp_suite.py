"""A stored suite's judges, for online evaluation (``jurybox serve --otlp --otlp-suite NAME``).

The suite is exported from the store and loaded by the suite loader, as a run of it
would be: its judges are built with the suite's judge model (``judge_model:``, else
``$JURYBOX_JUDGE_MODEL``), its judge limits (``judge_timeout``, ``judge_retries``) and
its pass mark (``defaults.threshold``), and its ``concurrency`` bounds the traces judged
at once. A production trace has no case of its own, so it gets the judges of the cases
tagged ``production``, or of every case when none is: each distinct judge once (a judge
of a later round is left out: a trace is one answer). LLM judges with no model to call
are left out and named, never counted as passed.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from jurybox.store import Store, StoreError
from jurybox.suites import TIER_LLM, BuiltJudge, JudgeModelError, SuiteError, load_suite

PRODUCTION_TAG = "production"
"""Cases with this tag hold the judges production traces get (when no case has it: every case)."""
PLACEHOLDER_AGENT = {"python": "not_run:respond"}
"""The agent of a suite stored without one: the loader wants one, and production traces never run it."""


class SuiteJudgesError(ValueError):
    """A stored suite that cannot judge production traces (missing, broken, or no judge left to run)."""


@dataclass(frozen=True)
class SuiteJudges:
    """The judges production traces of one stored suite get.

    Attributes:
        suite: The stored suite's name.
        judges: Built judges, each distinct one once, in the suite's order.
        concurrency: The suite's ``concurrency`` (traces judged at once), or None when it sets none.
        left_out: Labels of the LLM judges left out for want of a judge model.
        source: The exported suite the judges were built from (a changed suite is loaded again).
    """

    suite: str
    judges: tuple[BuiltJudge, ...]
    concurrency: int | None
    left_out: tuple[str, ...]
    source: dict[str, Any]


def stored_suite_data(store: Store, name: str) -> dict[str, Any]:
    """The suite as stored (``store.suites.export``).

    Raises:
        SuiteJudgesError: the store holds no suite of that name.
    """
    try:
        return store.suites.export(name)
    except StoreError as exc:
        raise SuiteJudgesError(f"{exc}: import it first (jurybox store import FILE)") from None


def load_suite_judges(store: Store, name: str, *, data: dict[str, Any] | None = None) -> SuiteJudges:
    """Build the judges of stored suite ``name`` for production traces.

    Args:
        store: The store holding the suite.
        name: The suite's name.
        data: The suite as exported, when the caller has read it already.

    Raises:
        SuiteJudgesError: no such suite, one the loader refuses (its problems named), or one
            with no judge left to run.
    """
    source = data if data is not None else stored_suite_data(store, name)
    exported = dict(source)
    exported.setdefault("agent", PLACEHOLDER_AGENT)
    folder = store.suites.folder(name)
    with tempfile.TemporaryDirectory(prefix="jurybox-otlp-") as scratch:
        # The file is named after nothing the suite says: a hostile name never reaches a path.
        path = Path(scratch) / "stored-suite.yaml"
        export_from(exported, path)
        try:
            suite = load_suite(
                path, check_agent=False, base_dir=Path(folder) if folder else None, check_cases_file=False
            )
        except (SuiteError, JudgeModelError) as exc:
            raise SuiteJudgesError(f"stored suite {name!r} cannot be loaded: {exc}") from None
    cases = [case for case in suite.cases if not case.skip]
    tagged = [case for case in cases if PRODUCTION_TAG in case.tags]
    chosen: dict[str, BuiltJudge] = {}
    for case in tagged or cases:
        for built in case.judges:
            if built.round in (None, 0):
                chosen.setdefault(_identity(built), built)
    usable = [b for b in chosen.values() if b.tier != TIER_LLM or suite.llm_enabled or b.own_model]
    left_out = tuple(b.label for b in chosen.values() if b not in usable)
    if not usable:
        why = " (its LLM judges need a judge model: judge_model: in the suite, or $JURYBOX_JUDGE_MODEL)"
        raise SuiteJudgesError(f"stored suite {name!r} has no judge to run on traces{why if left_out else ''}")
    return SuiteJudges(name, tuple(usable), suite.concurrency, left_out, source)


def export_from(data: dict[str, Any], path: Path) -> None:
    """Write an exported suite mapping as a suite file (as ``jurybox store export`` writes one)."""
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100), encoding="utf-8")


def _identity(built: BuiltJudge) -> str:
    """Two cases naming the same judge with the same settings give it once (``contains('EUR')``)."""
    key = built.key.split(".", 1)[1] if built.key.startswith("round") and "." in built.key else built.key
    return f"{built.tier}:{key}"
