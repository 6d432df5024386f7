"""``load_judges``: a judges file (the judge entries of a suite, alone) -> built judges.

What ``jurybox judge-traces --judges judges.yaml`` applies to each trace::

    judge_model: openai:gpt-4o-mini      # optional: for the LLM judges (else $JURYBOX_JUDGE_MODEL)
    threshold: 0.7                       # optional: the pass mark of judges that take the suite's
    judges:
      - tool_calls: {calls: [search_hotels]}
      - contains: {text: EUR}
      - correctness                      # any judge a suite case may name

Entries are a suite case's ``judges:`` entries, checked the same way: every problem is
reported with its file, line and field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jurybox.core import judge_name
from jurybox.inputs import InputError, read_text
from jurybox.models import MeteredModel
from jurybox.suites._build import BuildFailedError, JudgeBuilder, built, entry_label
from jurybox.suites._case import BuiltJudge
from jurybox.suites._errors import Problem, SuiteError
from jurybox.suites._judge_model import JudgeModelError, resolve_judge_model
from jurybox.suites._registry import JudgeRegistry
from jurybox.suites._yaml import load_yaml

JUDGES_FILE_KEYS = ("judges", "judge_model", "threshold")


def load_judges(
    path: str | Path, *, judge_model: Any = None, registry: JudgeRegistry | None = None
) -> list[BuiltJudge]:
    """Read and build a judges file.

    Args:
        path: The YAML file.
        judge_model: A JudgeModel or spec for the LLM judges, over the file's ``judge_model``.
        registry: Judge factories by name (default: every registered judge).

    Raises:
        SuiteError: naming file, line and field of every problem.
        JudgeModelError: ``judge_model`` (or ``$JURYBOX_JUDGE_MODEL``) cannot be built.
    """
    file = Path(path)
    try:
        text = read_text(file)
    except InputError as exc:
        raise SuiteError.at(file, exc.line, "", f"cannot read judges file: {exc.problem}") from None
    doc = load_yaml(text, file)
    data = doc.data
    if isinstance(data, list):
        data = {"judges": data}
        from_list = True
    else:
        from_list = False
    if not isinstance(data, dict):
        raise SuiteError.at(file, doc.line_of(()) or 1, "", "a judges file is a mapping with 'judges' (or a list)")
    problems = [
        Problem(str(file), doc.line_of((key,)), str(key), f"unknown key; valid keys: {', '.join(JUDGES_FILE_KEYS)}")
        for key in data
        if key not in JUDGES_FILE_KEYS
    ]
    entries = data.get("judges")
    if not isinstance(entries, list) or not entries:
        problems.append(Problem(str(file), doc.line_of(("judges",)), "judges", "a non-empty list of judge entries"))
    threshold = data.get("threshold")
    if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, int | float)):
        problems.append(Problem(str(file), doc.line_of(("threshold",)), "threshold", "a number between 0 and 1"))
        threshold = None
    spec = data.get("judge_model")
    if spec is not None and not isinstance(spec, str | dict):
        problems.append(Problem(str(file), doc.line_of(("judge_model",)), "judge_model", "a model spec"))
        spec = None
    if problems:
        raise SuiteError(problems)
    try:
        resolved = resolve_judge_model(judge_model, spec)
    except JudgeModelError as exc:
        if judge_model is None and spec is not None:
            raise SuiteError.at(file, doc.line_of(("judge_model",)), "judge_model", str(exc)) from exc
        raise
    model = MeteredModel(resolved) if resolved is not None else None
    builder = JudgeBuilder(doc, registry or JudgeRegistry.default(), model=model, base_dir=file.parent)
    judges: list[BuiltJudge] = []
    assert isinstance(entries, list)
    for index, entry in enumerate(entries):
        path_key: tuple[str | int, ...] = (index,) if from_list else ("judges", index)
        try:
            judge, tier, calls = builder.build_entry(entry, path_key, threshold=threshold)
        except BuildFailedError:
            continue
        judges.append(
            built(
                judge,
                tier,
                calls,
                key=judge_name(judge),
                label=entry_label(entry, judge),
                round_index=None,
                line=doc.line_of(path_key),
                suite_model=model,
            )
        )
    if builder.problems:
        raise SuiteError(builder.problems)
    return judges
