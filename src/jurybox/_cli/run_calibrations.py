"""After a run: each LLM judge's pass rate next to its stored calibration, corrected when it can be.

A judge is known the way ``jurybox calibrate`` files it: by its identity key
(kind, model, prompt hash, settings). With a calibration under that key, the
report shows the judge's observed pass rate in this run (PASS / decided) and the
Rogan-Gladen estimate with its interval, or says the judge is too weak to
correct for. With a calibration under its name only, its prompt, model or
settings changed since: the report flags it as uncalibrated. Judges with no
calibration at all are not mentioned, so a store without calibrations leaves
every report as it was.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from jurybox.core import CaseRecord, Status, judge_name
from jurybox.report import CALIBRATIONS_KEY, CalibratedJudge
from jurybox.suites import TIER_LLM, Suite

if TYPE_CHECKING:
    from jurybox.calibrate import JudgeIdentity
    from jurybox.store import Store, StoredCalibration

JudgeRef = tuple[str, str]
"""(name, identity key): one judge as a report lists it."""


def run_calibrations(store: Store, suite: Suite, run_id: str, records: Iterable[CaseRecord]) -> list[CalibratedJudge]:
    """The calibration notes of a finished run, also kept in the run's config for the dashboard.

    Args:
        store: Where the calibrations are, and the run.
        suite: The suite that ran (its cases hold the built judges).
        run_id: The run.
        records: The run's case records (a pass over them is made only when the store has calibrations).
    """
    from jurybox.store import JUDGE_IDENTITIES_KEY

    identities = judge_identities(suite)
    if identities:
        # Kept so a person's review of any judgment names the judge exactly (prompt, model, settings).
        store.runs.update_config(run_id, {JUDGE_IDENTITIES_KEY: identities})
    if not store.calibrations.find(limit=1):  # nothing was ever calibrated: no judge to look up, no pass over the run
        return []
    notes = [_note(store, ref, passed, decided) for ref, (passed, decided) in _tallies(suite, records).items()]
    found = [note for note in notes if note is not None]
    if found:
        store.runs.update_config(run_id, {CALIBRATIONS_KEY: [note.to_dict() for note in found]})
    return found


def judge_identities(suite: Suite) -> dict[str, dict[str, Any]]:
    """Each LLM judge that ran, by its place in the verdict tree (``llm_judge/correctness``): its identity."""
    if not suite.llm_enabled or not any(built.tier == TIER_LLM for case in suite.sample_cases for built in case.judges):
        return {}
    from jurybox.calibrate import identify

    made: dict[int, dict[str, Any]] = {}
    found: dict[str, dict[str, Any]] = {}
    for case in suite.sample_cases:
        for built in case.judges:
            place = f"{built.tier}/{built.key}"
            # The first judge at a place names it: every case builds its own judge object, and identifying
            # 10,000 of them (a prompt hash each) only to keep the first cost more than the rest of the report.
            if built.tier != TIER_LLM or place in found:
                continue
            identity = made.get(id(built.judge))
            if identity is None:
                identity = made[id(built.judge)] = identify(built.judge, judge_name(built.judge)).to_dict()
            found[place] = identity
    return found


def _tallies(suite: Suite, records: Iterable[CaseRecord]) -> dict[JudgeRef, tuple[int, int]]:
    """(PASS, decided) per LLM judge over the run's cases, judges in the order they first appear."""
    # Imported here, not at the top: only a store with calibrations needs it, and every `jurybox run` loads this module.
    from jurybox.calibrate import identify

    identities: dict[int, JudgeIdentity] = {}  # one identity per judge object: cases may share one
    by_case: dict[str, list[tuple[str, JudgeRef]]] = {}
    for case in suite.cases:
        refs = []
        for built in case.judges:
            if built.tier != TIER_LLM:
                continue
            identity = identities.get(id(built.judge))
            if identity is None:
                identity = identities[id(built.judge)] = identify(built.judge, judge_name(built.judge))
            refs.append((built.key, (identity.name, identity.key)))
        by_case[case.name] = refs
    counts: dict[JudgeRef, list[int]] = {}
    for record in records:
        # The case verdict is a cascade: tier -> each judge's verdict under its key in the suite.
        tiers = record.judgment.children.values()
        verdicts = {key: verdict for tier in tiers for key, verdict in tier.children.items()}
        for key, ref in by_case.get(record.case, ()):
            tally = counts.setdefault(ref, [0, 0])
            verdict = verdicts.get(key)
            if verdict is not None and verdict.status in (Status.PASS, Status.FAIL):
                tally[0] += verdict.status is Status.PASS
                tally[1] += 1
    return {ref: (passed, decided) for ref, (passed, decided) in counts.items()}


def _note(store: Store, ref: JudgeRef, passed: int, decided: int) -> CalibratedJudge | None:
    from jurybox.calibrate import corrected_pass_rate

    name, key = ref
    stored = store.calibrations.latest(key)
    if stored is None:
        named = store.calibrations.find(name, limit=1)
        if not named:
            return None
        return CalibratedJudge(name, key, "uncalibrated", passed, decided, **_source(named[0]))
    tpr, tnr = stored.figure("tpr"), stored.figure("tnr")
    positives, negatives = stored.figure("positives"), stored.figure("negatives")
    source = {**_source(stored), "tpr": tpr, "tnr": tnr}
    if not decided:
        return CalibratedJudge(name, key, "undecided", passed, decided, **source)
    if tpr is None or tnr is None or not positives or not negatives:
        return CalibratedJudge(name, key, "uncorrectable", passed, decided, **source)
    rate = corrected_pass_rate(passed, decided, tpr=tpr, tnr=tnr, positives=int(positives), negatives=int(negatives))
    if rate.too_weak:
        return CalibratedJudge(name, key, "too_weak", passed, decided, **source)
    return CalibratedJudge(
        name, key, "corrected", passed, decided, corrected=rate.value, low=rate.low, high=rate.high, **source
    )


def _source(stored: StoredCalibration) -> dict[str, Any]:
    return {"calibration_id": stored.id, "calibrated_at": stored.created_at, "dataset": stored.dataset}
