"""``load_suite``: a suite file -> a checked Suite, or one SuiteError listing every problem."""

from __future__ import annotations

import contextlib
import difflib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from jurybox.core import judge_name
from jurybox.inputs import InputError, read_text
from jurybox.models import MeteredModel
from jurybox.suites._build import BuildFailedError, Calls, JudgeBuilder, built, entry_label, import_module
from jurybox.suites._case import BuiltJudge, Case, RoundPlan, Suite
from jurybox.suites._case_file import StreamedCases
from jurybox.suites._errors import Problem, SuiteError
from jurybox.suites._experiment_spec import TrialsModel, VariantModel
from jurybox.suites._judge_model import JudgeModelError, model_label, resolve_judge_model
from jurybox.suites._loader_agent import agent_problems
from jurybox.suites._loader_stream import streamed_cases
from jurybox.suites._registry import TIER_DETERMINISTIC, TIER_LLM, JudgeRegistry
from jurybox.suites._seed import Seed
from jurybox.suites._spec import (
    CaseModel,
    Criteria,
    Defaults,
    ExpectTools,
    RoundModel,
    SqlCheck,
    SqlExpect,
    SuiteModel,
    written_key,
)
from jurybox.suites._trials import expand, trials_of
from jurybox.suites._variants import build_variants
from jurybox.suites._yaml import Located, PathKey, format_path, load_yaml

# Which model a key path's parent is, for "unknown key; valid keys: ..." messages.
_MODELS_BY_KEY: dict[str | None, type[BaseModel]] = {
    None: SuiteModel,
    "cases": CaseModel,
    "rounds": RoundModel,
    "defaults": Defaults,
    "sql_checks": SqlCheck,
    "expect": SqlExpect,
    "expect_tools": ExpectTools,
    "variants": VariantModel,
    "trials": TrialsModel,
}


def load_suite(
    path: str | Path,
    *,
    judge_model: Any = None,
    registry: JudgeRegistry | None = None,
    concurrency: int | None = None,
    check_agent: bool = True,
    judge_timeout: float | None = None,
    judge_retries: int | None = None,
    base_dir: Path | None = None,
    check_cases_file: bool | Literal["background"] = True,
    on_model: Callable[[Any], None] | None = None,
) -> Suite:
    """Load and check a suite file.

    Args:
        path: The YAML file.
        judge_model: A JudgeModel or ``provider:model`` name for the LLM judges;
            None uses the suite's ``judge_model:`` key, then ``JURYBOX_JUDGE_MODEL``.
            When none is configured the suite still loads; its LLM tier is
            skipped when it runs.
        registry: Judge factories by name (default: ``JudgeRegistry.default()``, every built-in judge
            and every one registered with ``@judge_factory``, the suite's ``plugins`` included).
        concurrency: Cases the run will keep in flight (default: the suite's
            ``concurrency:``); the judge model allows at least as many calls at once.
        check_agent: Build the suite's ``agent:`` (and drop it) to report a bad spec with its
            line; False for a suite run with a target of your own (``SuiteRunner(target=...)``).
        judge_timeout: Seconds per judge-model attempt, overriding the suite's ``judge_timeout``.
        judge_retries: Retries after a judge-model fault, overriding the suite's ``judge_retries``.
        base_dir: Where the suite's relative paths (agent module or file, seeds, plugins, ``python:``
            judges) resolve; default the file's folder. A suite exported from the store to a temporary
            file resolves them against the current directory.
        check_cases_file: Build every line of the suite's ``cases_file`` once to check it (False: trust it,
            as a Ray actor does for the driver that checked it; a bad line then fails when it is reached).
            ``"background"``: a big file (``BACKGROUND_BYTES``) has its first lines checked now and the
            whole file in a forked child while the run starts (``CaseFile.settle()`` gives its problems:
            ``jurybox.runs`` stops the run on them); a smaller one is checked now.
        on_model: Told the suite's judge model as soon as it is built, before the cases are: ``jurybox run``
            starts checking its server then, so the round trip overlaps building the cases.

    Raises:
        SuiteError: naming file, line and field of every problem found.
        JudgeModelError: ``judge_model`` (or ``$JURYBOX_JUDGE_MODEL``) names a model that cannot be built.
    """
    file = Path(path)
    folder = Path(base_dir) if base_dir is not None else file.parent
    try:
        text = read_text(file)
    except InputError as exc:
        raise SuiteError.at(file, exc.line, "", f"cannot read suite file: {exc.problem}") from None
    doc = load_yaml(text, file)
    if not isinstance(doc.data, dict):
        raise SuiteError.at(
            file, doc.line_of(()) or 1, "", "a suite file is a YAML mapping with 'name', 'agent' and 'cases'"
        )
    try:
        spec = SuiteModel.model_validate(doc.data)
    except ValidationError as exc:
        # With the judge problems of the cases that are valid on their own: one pass to fix it all.
        problems = _validation_problems(exc, doc)
        problems.extend(_judge_problems_of_valid_cases(doc, registry, folder, judge_model))
        raise SuiteError(problems) from None
    try:
        resolved = resolve_judge_model(
            judge_model,
            spec.judge_model,
            concurrency=concurrency or spec.concurrency,
            timeout=judge_timeout if judge_timeout is not None else spec.judge_timeout,
            retries=judge_retries if judge_retries is not None else spec.judge_retries,
        )
    except JudgeModelError as exc:
        if judge_model is None and spec.judge_model is not None:
            raise SuiteError.at(file, doc.line_of(("judge_model",)), "judge_model", str(exc)) from exc
        raise  # the model came from the caller or the environment, not from this file
    # One metered wrapper per run: every LLM judge shares it, and it counts calls, tokens and cost.
    model = MeteredModel(resolved) if resolved is not None else None
    if model is not None and on_model is not None and spec.cases_file is None:
        on_model(model)
    problems = _import_plugins(doc, spec.plugins, folder)
    builder = JudgeBuilder(doc, registry or JudgeRegistry.default(), model=model, base_dir=folder)
    written = _written_cases(spec)
    cases = [_build_case(builder, spec, index, raw, written=written[index]) for index, raw in enumerate(spec.cases)]
    follow_up_model = None
    if spec.follow_up_model is not None:
        with contextlib.suppress(BuildFailedError):  # the builder recorded the problem with its line
            follow_up_model = builder.named_model(spec.follow_up_model, ("follow_up_model",))
    problems.extend(builder.problems)
    problems.extend(_duplicate_names(doc, spec))
    # A case with trials: runs as its trials, each a case of its own (``case~k``).
    inline = tuple(
        t
        for c, raw in zip(cases, spec.cases, strict=True)
        if c is not None
        for t in expand(c, trials_of(spec.trials, raw.trials))
    )
    all_cases: Sequence[Case] = inline
    if spec.cases_file is not None and not problems:
        streamed, file_problems = streamed_cases(
            doc, spec, builder, folder, inline, _build_case, check=check_cases_file, llm_enabled=model is not None
        )
        problems.extend(file_problems)
        all_cases = streamed if streamed is not None else inline
    if model is not None and on_model is not None and spec.cases_file is not None:
        # After the file's check has forked (a child forked beside a running thread may deadlock).
        on_model(model)
    seeds: list[Seed] = []
    if spec.seeds is not None or spec.seed_schema is not None:
        seeds = _seeds_of(doc, spec, folder, problems)
    if check_agent:
        problems.extend(agent_problems(doc, spec.agent, folder, seeds))
    variants, variant_problems = build_variants(doc, spec.agent, spec.variants, folder, seeds, check=check_agent)
    problems.extend(variant_problems)
    if problems:
        if isinstance(all_cases, StreamedCases) and all_cases.file.pending is not None:
            all_cases.file.pending.cancel()  # the suite will not run: its file's check must not go on alone
        raise SuiteError(problems)
    return Suite(
        name=spec.name,
        path=file,
        agent=spec.agent,
        cases=all_cases,
        defaults=spec.defaults,
        description=spec.description,
        database=spec.database,
        concurrency=spec.concurrency,
        seeds=tuple(seeds),
        judge_model=model_label(model),
        model=model,
        metadata=spec.metadata,
        folder=folder,
        variants=tuple(variants),
        follow_up_model=follow_up_model,
        written={key: value for key, value in doc.data.items() if key != "cases"},
    )


def _written_cases(spec: SuiteModel) -> list[dict[str, Any]]:
    """Each case as written (``Case.spec``), from one call of pydantic's serializer instead of one a case."""
    dumped = spec.model_dump(mode="json", exclude_defaults=True, include={"cases"}).get("cases")
    if isinstance(dumped, list) and len(dumped) == len(spec.cases):
        return dumped
    return [case.model_dump(mode="json", exclude_defaults=True) for case in spec.cases]  # no cases: nothing dumped


def _seeds_of(doc: Located, spec: SuiteModel, folder: Path, problems: list[Problem]) -> list[Seed]:
    """The suite's seed records (its schema checked first); problems go to ``problems``."""
    # Imported here: the seed parser and its schemas are for suites that have seeds.
    from jurybox.suites._seeds import load_seeds, seed_schema_problems

    schema_problems = seed_schema_problems(doc, spec.seed_schema)
    problems.extend(schema_problems)
    if spec.seeds is None or schema_problems:
        return []
    entries = [spec.seeds] if isinstance(spec.seeds, str) else spec.seeds
    try:
        return load_seeds(*(folder / entry for entry in entries), schema=spec.seed_schema)
    except SuiteError as exc:
        problems.extend(exc.problems)
        return []


def _build_case(
    builder: JudgeBuilder,
    spec: SuiteModel,
    index: int,
    case: CaseModel,
    *,
    path: PathKey | None = None,
    written: dict[str, Any] | None = None,
) -> Case | None:
    """One case, built; None when it cannot be (its problems are on ``builder``).

    ``path`` is where the case is in ``builder.doc``: ``cases[index]`` in the suite file, ``()`` for a
    line of a cases file (whose own line is the case). ``written`` is the case's ``model_dump`` when the
    caller made every case's at once (``_written_cases``).
    """
    path = ("cases", index) if path is None else path
    defaults = spec.defaults
    threshold = case.threshold if case.threshold is not None else defaults.threshold
    judges: list[BuiltJudge] = []
    mcp_call = case.mcp_call.model_dump(exclude_defaults=True) if case.mcp_call is not None else None
    if mcp_call is not None and "mcp" not in spec.agent:
        builder.problem(
            (*path, "mcp_call"), "mcp_call asks an MCP server: the suite's agent must be one (agent: {mcp: ...})"
        )
    if mcp_call is not None:
        from jurybox.agents import McpCall  # the MCP client, for such a case only

        # The call is the case's one round: reports show it where a prompt would be.
        rounds = [RoundPlan(prompt=McpCall.from_spec(mcp_call).prompt, reference=case.reference)]
    elif case.rounds is None:
        assert case.prompt is not None  # the model validator guarantees prompt, rounds or mcp_call
        rounds = [RoundPlan(prompt=case.prompt, reference=case.reference, follow_ups=tuple(case.follow_ups))]
    else:
        rounds = []
        for number, round_spec in enumerate(case.rounds):
            round_path = (*path, "rounds", number)
            rounds.append(
                RoundPlan(
                    prompt=round_spec.prompt,
                    reference=round_spec.reference,
                    follow_ups=tuple(round_spec.follow_ups),
                    criteria=round_spec.criteria,
                )
            )
            round_threshold = round_spec.threshold if round_spec.threshold is not None else threshold
            judges.extend(
                _judges_for(
                    builder,
                    round_path,
                    entries=round_spec.judges,
                    expect_tools=round_spec.expect_tools,
                    criteria=round_spec.criteria,
                    threshold=round_threshold,
                    round_index=number,
                    prompt_options=_prompt_options(round_spec, case, defaults),
                )
            )
    judges.extend(
        _judges_for(
            builder,
            path,
            entries=case.judges,
            expect_tools=case.expect_tools,
            criteria=case.criteria,
            threshold=threshold,
            round_index=None,
            prompt_options=_prompt_options(case, defaults),
        )
    )
    voting = None
    if case.voting is not None:
        try:
            voting = builder.voting(case.voting, (*path, "voting"))
        except BuildFailedError:
            return None
    for number, check in enumerate(case.sql_checks):
        if check.database is None and spec.database is None:
            builder.problem(
                (*path, "sql_checks", number),
                "an SQL check needs the agent's database: set 'database:' (an SQLAlchemy URL) on the suite or check",
            )
    # A case whose judges all failed to build has judges: their own problems say what is wrong.
    parts = [case, *(case.rounds or ())]
    declared = any(p.judges or p.criteria is not None or p.expect_tools is not None for p in parts)
    if not judges and not case.sql_checks and not declared:
        builder.problem(
            path, f"case {case.name!r} has nothing to judge it: add judges, criteria, expect_tools or sql_checks"
        )
        return None
    return Case(
        name=case.name,
        rounds=tuple(rounds),
        judges=tuple(_unique_keys(judges)),
        description=case.description,
        tags=tuple(case.tags),
        reference=case.reference,
        sources=tuple(case.sources),
        voting=voting,
        sql_checks=tuple(case.sql_checks),
        revive_between_rounds=(
            case.revive_between_rounds if case.revive_between_rounds is not None else defaults.revive_between_rounds
        ),
        max_follow_ups=case.max_follow_ups if case.max_follow_ups is not None else defaults.max_follow_ups,
        timeout=case.timeout if case.timeout is not None else defaults.timeout,
        retries=case.retries if case.retries is not None else defaults.retries,
        metadata=case.metadata,
        skip=case.skip,
        line=builder.doc.line_of(path),
        spec=written if written is not None else case.model_dump(mode="json", exclude_defaults=True),
        mcp_call=mcp_call,
    )


def _judges_for(
    builder: JudgeBuilder,
    path: PathKey,
    *,
    entries: Sequence[Any],
    expect_tools: ExpectTools | None,
    criteria: Criteria | None,
    threshold: float | None,
    round_index: int | None,
    prompt_options: dict[str, str] | None = None,
) -> list[BuiltJudge]:
    prefix = f"round{round_index + 1}." if round_index is not None else ""
    line_of = builder.doc.line_of
    result: list[BuiltJudge] = []
    if expect_tools is not None:
        tools_path = (*path, written_key(builder.doc.sub(path).data, "expect_tools"))
        factory = builder.registry.get("tool_calls")
        if factory is None:
            builder.problem(tools_path, "expect_tools needs the 'tool_calls' judge, which is not registered")
        else:
            options = expect_tools.model_dump(exclude_none=True, exclude={"calls"})
            try:
                judge = builder.make(factory, [expect_tools.calls], options, tools_path, threshold=threshold)
                result.append(
                    built(
                        judge,
                        TIER_DETERMINISTIC,
                        Calls(0, 0),
                        key=prefix + judge_name(judge),
                        label="expect_tools",
                        round_index=round_index,
                        line=line_of(tools_path),
                    )
                )
            except BuildFailedError:
                pass
    for index, entry in enumerate(entries):
        entry_path = (*path, "judges", index)
        try:
            judge, tier, calls = builder.build_entry(entry, entry_path, threshold=threshold)
        except BuildFailedError:
            continue
        result.append(
            built(
                judge,
                tier,
                calls,
                key=prefix + judge_name(judge),
                label=entry_label(entry, judge),
                round_index=round_index,
                line=line_of(entry_path),
                suite_model=builder.model,
            )
        )
    if criteria is not None:
        criteria_path = (*path, written_key(builder.doc.sub(path).data, "criteria"))
        factory = builder.registry.get("rubric")
        if factory is None:
            builder.problem(
                criteria_path, "criteria need the LLM judges (jurybox.llm 'rubric'), which are not installed"
            )
        else:
            try:
                graded = [criteria] if isinstance(criteria, str) else criteria
                options = {"name": "criteria", **(prompt_options or {})}
                judge = builder.make(factory, [graded], options, criteria_path, threshold=threshold)
                result.append(
                    built(
                        judge,
                        TIER_LLM,
                        builder.llm_calls(judge, TIER_LLM),
                        key=prefix + "criteria",
                        label="criteria",
                        round_index=round_index,
                        line=line_of(criteria_path),
                        suite_model=builder.model,
                    )
                )
            except BuildFailedError:
                pass
    return result


def _prompt_options(*parts: RoundModel | CaseModel | Defaults) -> dict[str, str]:
    """The criteria judge's own instructions and scoring guide: the round's, else the case's, else the suite's."""
    options = {}
    for key, option in (("judge_instructions", "instructions"), ("scoring_guide", "scoring_guide")):
        for part in parts:
            value = getattr(part, key)
            if value is not None:
                options[option] = value
                break
    return options


def _import_plugins(doc: Located, plugins: Sequence[str], base_dir: Path) -> list[Problem]:
    """Import the suite's plugin modules, so the judges they register can be named in its cases."""
    problems = []
    for index, module in enumerate(plugins):
        try:
            import_module(module, base_dir)
        except Exception as exc:  # the plugin's own code runs here: any error it raises is a problem in the suite
            path = ("plugins", index)
            message = f"cannot import plugin {module!r}: {type(exc).__name__}: {exc}"
            problems.append(Problem(doc.file, doc.line_of(path), format_path(path), message))
    return problems


def _unique_keys(judges: list[BuiltJudge]) -> list[BuiltJudge]:
    """Give repeated keys a ``#2``, ``#3`` so every verdict keeps its own place in the tree."""
    if len(judges) < 2:
        return judges  # most cases have one judge: nothing can repeat
    from dataclasses import replace

    seen: dict[str, int] = {}
    unique = []
    for item in judges:
        seen[item.key] = seen.get(item.key, 0) + 1
        unique.append(item if seen[item.key] == 1 else replace(item, key=f"{item.key}#{seen[item.key]}"))
    return unique


def _duplicate_names(doc: Located, spec: SuiteModel) -> list[Problem]:
    problems = []
    first: dict[str, int] = {}
    for index, case in enumerate(spec.cases):
        if case.name in first:
            path = ("cases", index, "name")
            problems.append(
                Problem(
                    doc.file,
                    doc.line_of(path),
                    format_path(path),
                    f"duplicate case name {case.name!r} (first at line {doc.line_of(('cases', first[case.name]))})",
                )
            )
        else:
            first[case.name] = index
    return problems


def _validation_problems(exc: ValidationError, doc: Located) -> list[Problem]:
    problems = []
    for error in exc.errors():
        path = _data_path(doc.data, error["loc"])
        message = error["msg"]
        if error["type"] == "extra_forbidden":
            message = _unknown_key_message(path)
        elif error["type"] == "missing":
            message = "required field is missing"
        elif message.startswith("Value error, "):
            message = message.removeprefix("Value error, ")
        problems.append(Problem(doc.file, doc.line_of(path), format_path(path), message))
    return problems


def _data_path(data: Any, loc: Sequence[str | int]) -> PathKey:
    """Pydantic's error location with its union-member labels dropped, so it indexes the YAML data."""
    path: list[str | int] = []
    current = data
    for part in loc:
        if _has(current, part):
            current = current[part]
            path.append(part)
        elif isinstance(part, str) and (part[:1].isupper() or "[" in part or part.startswith("function-")):
            continue  # a union member such as 'ExpectTools' or 'list[str]'
        else:
            path.append(part)
            current = None
    return tuple(path)


def _has(container: Any, part: str | int) -> bool:
    if isinstance(container, Mapping):
        return part in container
    return isinstance(container, list) and isinstance(part, int) and 0 <= part < len(container)


def _unknown_key_message(path: PathKey) -> str:
    key = str(path[-1]) if path else ""
    parent = next((p for p in reversed(path[:-1]) if isinstance(p, str)), None)
    model = _MODELS_BY_KEY.get(parent, SuiteModel)
    valid = list(model.model_fields)
    close = difflib.get_close_matches(key, valid, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    if not close and parent is None:  # a case's or the defaults' key at the top: say where it goes
        home = next((name for name in ("defaults", "cases") if _close_in(key, _MODELS_BY_KEY[name])), None)
        hint = f" (did you mean {_close_in(key, _MODELS_BY_KEY[home])!r} under {home}:?)" if home else ""
    return f"unknown key {key!r}{hint}; valid keys: {', '.join(valid)}"


def _close_in(key: str, model: type[BaseModel]) -> str | None:
    """The field of ``model`` that ``key`` is a typo of (or is), if any."""
    close = difflib.get_close_matches(key, list(model.model_fields), n=1)
    return close[0] if close else None


def _judge_problems_of_valid_cases(
    doc: Located, registry: JudgeRegistry | None, base_dir: Path, judge_model: Any
) -> list[Problem]:
    """The judge problems of each case that validates on its own, in a suite that does not.

    Best effort: when the suite's defaults or its judge model are themselves wrong, the
    cases cannot be built as they would be, and only the validation problems are reported.
    """
    data = doc.data if isinstance(doc.data, dict) else {}
    raw_cases = data.get("cases")
    if not isinstance(raw_cases, list):
        return []
    try:
        defaults = Defaults.model_validate(data.get("defaults") or {})
        suite_model = data.get("judge_model")
        if suite_model is not None and not isinstance(suite_model, str):
            return []  # the validation problems name it
        resolved = resolve_judge_model(judge_model, suite_model, concurrency=None)
    except (ValidationError, JudgeModelError, TypeError):
        return []
    database = data.get("database")
    partial = SuiteModel.model_construct(defaults=defaults, database=database if isinstance(database, str) else None)
    model = MeteredModel(resolved) if resolved is not None else None
    raw_plugins = data.get("plugins")
    # A malformed plugins: key is in the validation problems already.
    plugins = raw_plugins if isinstance(raw_plugins, list) and all(isinstance(p, str) for p in raw_plugins) else []
    problems = _import_plugins(doc, plugins, base_dir)
    builder = JudgeBuilder(doc, registry or JudgeRegistry.default(), model=model, base_dir=base_dir)
    for index, raw in enumerate(raw_cases):
        try:
            case = CaseModel.model_validate(raw)
        except ValidationError:
            continue  # its own problems are in the suite's validation problems already
        _build_case(builder, partial, index, case)
    return [*problems, *builder.problems]
