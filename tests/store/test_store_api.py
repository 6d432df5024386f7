"""The Store API the runner depends on, against SQLite and PostgreSQL."""

from __future__ import annotations

import enum
import math
import threading
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
from sqlalchemy import event, func, select
from store_testkit import make_multi_round_record, make_record, nodes_per_record, single_round

from jurybox.core import CategoricalScore, Check, Context, ErrorInfo, Judgment, NumericScore, Status
from jurybox.store import CaseRecord, Rate, RoundRecord, Store, StoreError, open_store
from jurybox.store._cases import upsert_case_versions
from jurybox.store._json import db_jsonable as to_jsonable
from jurybox.store._json import dumps, encode_json, hashed_definition, jsonable_hash
from jurybox.store._record_rows import insert_records, metadata_cost, usage_tokens
from jurybox.store._schema import cases_table, judgments_table, results_table, run_cases_table, suites_table


def test_records_round_trip_with_trees_contexts_and_rounds(store: Store) -> None:
    records = [
        make_record("a"),
        make_record("b", llm=False),
        make_record("c", deterministic=False),
        make_multi_round_record("d"),
    ]
    run_id = store.runs.begin("suite", cases={r.case: {"prompt": r.case} for r in records}, judge_model="fake:1")
    for record in records:
        assert store.results.record(run_id, record) is True

    rebuilt = store.results.read_all(run_id)

    assert rebuilt == records
    assert rebuilt[1].judgment.find("correctness") == records[1].judgment.find("correctness")
    assert rebuilt[3].rounds[0].follow_ups == (("Which city?", "Paris"),)
    assert rebuilt[0].context is not None and rebuilt[0].context.tool_calls[0].arguments == {"q": "a"}


def test_exotic_scores_errors_and_values_survive(store: Store) -> None:
    judgment = Judgment(
        Status.ERROR,
        score=CategoricalScore("B", {"A": 1.0, "B": 0.5}),
        reasoning="provider said 500",
        error=ErrorInfo("ModelError", "HTTP 500", "Traceback ..."),
        children={"n": Judgment.failed(NumericScore(3, 1, 10), "3 of 10", confidence=0.4, degraded=True)},
        metadata={"raw": "no verdict", "nan": math.nan, "when": Path("/tmp/x")},
    )
    record = CaseRecord(
        "weird",
        judgment,
        context=Context(output="NUL\x00byte", metadata={"tuple": (1, 2)}),
        error="agent crashed",
    )
    run_id = store.runs.begin("suite", cases={"weird": {}})
    store.results.record(run_id, record)

    (back,) = store.results.read_all(run_id)

    assert back.judgment.status is Status.ERROR
    assert back.judgment.score == judgment.score
    assert back.judgment.error == judgment.error
    assert back.judgment.children["n"].score == NumericScore(3, 1, 10)
    assert back.judgment.children["n"].degraded is True
    assert back.judgment.metadata["nan"] == "nan"  # JSON has no NaN; kept visibly, never as a number
    assert back.context is not None and back.context.output == "NUL\ufffdbyte"
    assert back.error == "agent crashed"


def test_second_write_of_a_case_changes_nothing(store: Store) -> None:
    run_id = store.runs.begin("suite", cases={"a": {}})
    first = make_record("a")
    assert store.results.record(run_id, first) is True
    assert store.results.record(run_id, make_record("a", llm=False, cost=9.0)) is False

    (back,) = store.results.read_all(run_id)
    assert back == first
    with store.engine.connect() as connection:
        rows = connection.execute(select(func.count()).select_from(judgments_table)).scalar_one()
    assert rows == nodes_per_record(first)


def test_a_batch_is_written_in_one_transaction_all_or_nothing(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    run_id = store.runs.begin("suite", cases={"a": {}, "b": {}, "c": {}, "c2": {}})
    a, b = make_record("a"), make_multi_round_record("b")

    assert store.results.record_many(run_id, [a, b, make_record("a", llm=False)]) == [True, True, False]
    assert store.results.read_all(run_id) == [a, b]

    # A failure after the batch's inserts (here: of its last statement) rolls back every case in it.
    batches: list[list[str]] = []

    def fail_after_inserts(connection: Any, run: str, prepared: list[Any], url: str) -> list[bool]:
        batches.append([name for name, _, _, _ in prepared])
        insert_records(connection, run, prepared, url)
        assert connection.execute(select(func.count()).select_from(results_table)).scalar_one() == 4
        raise RuntimeError("disk full")

    monkeypatch.setattr("jurybox.store._results.insert_records", fail_after_inserts)  # where record_many finds it
    with pytest.raises(RuntimeError, match="disk full"):
        store.results.record_many(run_id, [make_record("c"), make_record("c2")])
    assert batches == [["c", "c2"]]
    assert store.results.recorded(run_id) == {"a", "b"}
    with pytest.raises(TypeError, match="CaseRecord"):
        store.results.record_many(run_id, [make_record("c"), "c"])  # type: ignore[list-item]
    assert store.results.recorded(run_id) == {"a", "b"}


def test_resume_helpers_and_plan_order(store: Store) -> None:
    names = [f"case-{i}" for i in (3, 1, 2, 0)]
    run_id = store.runs.begin("suite", cases={n: {"i": n} for n in names})
    store.results.record(run_id, make_record("case-2"))
    store.results.record(run_id, make_record("case-3"))

    assert store.results.recorded(run_id) == {"case-2", "case-3"}
    assert store.results.missing(run_id) == ["case-1", "case-0"]
    assert [r.case for r in store.results.read_all(run_id)] == ["case-3", "case-2"]  # plan order, not write order
    assert store.runs.latest("suite", unfinished=True) is not None

    store.finish_run(run_id, "interrupted")
    assert store.runs.get(run_id).status == "interrupted"
    assert store.runs.latest("suite", unfinished=True) == store.runs.get(run_id)
    store.results.record(run_id, make_record("case-1"))  # a resumed write reopens the run
    assert store.runs.get(run_id).status == "running"
    store.results.record(run_id, make_record("case-0"))
    store.finish_run(run_id)

    info = store.runs.get(run_id)
    assert (info.status, info.planned, info.recorded, info.passed) == ("completed", 4, 4, 4)
    assert info.finished_at is not None and info.wall_time is not None
    assert store.runs.latest("suite", unfinished=True) is None
    assert [r.case for r in store.results.read_all(run_id)] == names


def test_totals_tokens_cost_and_status_counts(store: Store) -> None:
    run_id = store.runs.begin(
        "suite", cases={c: {} for c in "abc"}, git_commit="abc123", agent_version="2.1", config={"k": 1}
    )
    store.results.record(run_id, make_record("a", cost=0.25, duration=1.0))
    store.results.record(run_id, make_record("b", llm=False, cost=None, duration=2.0))
    store.results.record(run_id, CaseRecord("c", Judgment.errored("agent timed out"), error="AgentTimeout: 30 s"))
    store.finish_run(run_id)

    info = store.runs.get(run_id)

    assert (info.recorded, info.passed, info.failed, info.errored) == (3, 1, 1, 1)
    assert info.cost == pytest.approx(0.25)
    assert info.tokens == 300
    assert info.duration == pytest.approx(3.0)
    assert (info.git_commit, info.agent_version, info.config) == ("abc123", "2.1", {"k": 1})
    assert info.pass_rate == pytest.approx(1 / 3)


def test_judgment_rows_carry_path_tier_and_tokens(store: Store) -> None:
    run_id = store.runs.begin("suite", cases={"a": {}})
    store.results.record(run_id, make_record("a"))
    with store.engine.connect() as connection:
        rows = connection.execute(
            select(
                judgments_table.c.path,
                judgments_table.c.depth,
                judgments_table.c.tier,
                judgments_table.c.status,
                judgments_table.c.tokens,
            ).order_by(judgments_table.c.id)
        ).all()
    assert [tuple(r) for r in rows] == [
        ("", 0, None, "pass", None),
        ("deterministic", 1, "deterministic", "pass", None),
        ("deterministic/contains", 2, "deterministic", "pass", None),
        ("llm_judge", 1, "llm_judge", "pass", None),
        ("llm_judge/correctness", 2, "llm_judge", "pass", 150),
    ]
    assert store.metrics.rates(run_id)["llm_judge"].value == 1.0


def test_errors_for_unknown_and_completed_runs(store: Store) -> None:
    with pytest.raises(StoreError, match="unknown run 'nope'"):
        store.results.record("nope", make_record("a"))
    with pytest.raises(StoreError, match="no run 'nope'"):
        store.runs.get("nope")
    run_id = store.runs.begin("suite", cases={"a": {}})
    store.finish_run(run_id)
    with pytest.raises(StoreError, match="is completed"):
        store.results.record(run_id, make_record("a"))
    with pytest.raises(ValueError, match="finishes as one of"):
        store.finish_run(run_id, "done")  # type: ignore[arg-type]


def test_resolve_run_by_prefix_and_last(store: Store) -> None:
    first = store.runs.begin("s1", cases={})
    second = store.runs.begin("s2", cases={})
    assert store.runs.resolve("last").id == second
    assert store.runs.resolve("last", suite="s1").id == first
    assert store.runs.resolve(first[:-2]).id == first
    with pytest.raises(StoreError, match="several runs"):
        store.runs.resolve(first[:4])
    assert store.suites.names() == ["s1", "s2"]


def test_edited_case_gets_a_version_and_old_runs_keep_theirs(store: Store) -> None:
    old_run = store.runs.begin("suite", cases={"a": {"prompt": "v1"}, "b": {"prompt": "same"}})
    new_run = store.runs.begin("suite", cases={"b": {"prompt": "same"}, "a": {"prompt": "v2"}})
    with store.engine.connect() as connection:
        versions = connection.execute(
            select(cases_table.c.name, cases_table.c.definition).order_by(cases_table.c.id)
        ).all()
        planned: dict[str, object] = dict(
            connection.execute(
                select(run_cases_table.c.run_id, cases_table.c.definition)
                .join(cases_table, cases_table.c.id == run_cases_table.c.case_id)
                .where(run_cases_table.c.case_name == "a")
            ).all()
        )
    assert [tuple(v) for v in versions] == [("a", {"prompt": "v1"}), ("b", {"prompt": "same"}), ("a", {"prompt": "v2"})]
    assert planned == {old_run: {"prompt": "v1"}, new_run: {"prompt": "v2"}}
    assert store.suites.export("suite")["cases"] == [{"name": "b", "prompt": "same"}, {"name": "a", "prompt": "v2"}]


def test_result_rows_reference_the_case_version_they_ran(store: Store) -> None:
    run_id = store.runs.begin("suite", cases={"a": {"prompt": "v1"}})
    store.results.record(run_id, make_record("a"))
    with store.engine.connect() as connection:
        definition = connection.execute(
            select(cases_table.c.definition).join(results_table, results_table.c.case_id == cases_table.c.id)
        ).scalar_one()
    assert definition == {"prompt": "v1"}


def test_default_url_is_a_sqlite_file_under_dot_jurybox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JURYBOX_STORE", raising=False)
    with open_store() as store:
        store.runs.begin("suite", cases={})
    assert (tmp_path / ".jurybox" / "jurybox.db").is_file()

    monkeypatch.setenv("JURYBOX_STORE", f"sqlite:///{tmp_path / 'env.db'}")
    with open_store() as store:
        assert store.url.endswith("env.db")
        with store.engine.connect() as connection:
            assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"


def test_bad_urls_are_refused_clearly() -> None:
    with pytest.raises(StoreError, match="invalid store URL"):
        open_store("not a url")
    with pytest.raises(StoreError, match="unsupported store URL"):
        open_store("mysql://u@h/db")


def test_iter_records_streams_batches_with_their_rounds(store: Store) -> None:
    records = [make_multi_round_record(f"m{i}") if i % 2 else make_record(f"m{i}") for i in range(7)]
    run_id = store.runs.begin("suite", cases={r.case: {} for r in records})
    for record in records:
        store.results.record(run_id, record)

    assert list(store.results.stream(run_id, batch=3)) == records


@pytest.mark.parametrize("named_in_sql", [0, 2, 500])
def test_streaming_named_cases_gives_them_in_plan_order_by_sql_or_by_scan(
    store: Store, monkeypatch: pytest.MonkeyPatch, named_in_sql: int
) -> None:
    monkeypatch.setattr("jurybox.store._results.NAMED_IN_SQL", named_in_sql)
    records = [make_multi_round_record(f"m{i}") if i % 2 else make_record(f"m{i}") for i in range(9)]
    run_id = store.runs.begin("suite", cases={r.case: {} for r in reversed(records)})  # plan order: m8 first
    for record in records:
        store.results.record(run_id, record)
    wanted = {"m1", "m4", "m8", "not-a-case", "m%"}
    streamed = list(store.results.stream(run_id, batch=2, cases=wanted))
    assert streamed == [r for r in reversed(records) if r.case in wanted]
    assert list(store.results.stream(run_id, cases=set())) == []


def test_in_memory_sqlite_store_works_for_quick_experiments() -> None:
    with open_store("sqlite://") as store:
        run_id = store.runs.begin("suite", cases={"a": {}})
        store.results.record(run_id, make_multi_round_record("a"))
        assert [r.case for r in store.results.read_all(run_id)] == ["a"]


class _Colour(enum.Enum):
    RED = "red"


class _Opaque:
    def __repr__(self) -> str:
        return "<opaque>"  # what to_jsonable keeps of a value JSON has no form for


@pytest.mark.parametrize(
    "value",
    [
        {"a": [1, 2.5, "x", None, True], "nested": {"k": [{"z": "é ü 漢"}]}},
        ("a", 1, ("b", 2.0)),
        {3: "an int key", 1.5: "a float key"},
        float("nan"),
        {"inf": float("-inf")},
        {"when": datetime(2026, 11, 21, 12, 0, tzinfo=UTC)},
        {"set": {3, 1, 2}},
        "a NUL \x00 inside",
        {"status": Status.PASS, "colour": _Colour.RED},
        {"path": Path("a/b")},
        [Check("json_valid", True, "ok")],
        {"object": _Opaque()},
        [],
        (),
        {},
    ],
    ids=lambda value: type(value).__name__,
)
def test_encode_json_writes_what_to_jsonable_then_dumps_would(value: Any) -> None:
    text = encode_json(value).text
    assert text == dumps(to_jsonable(value))
    assert "\\u0000" not in text


@pytest.mark.parametrize(
    "definition",
    [
        {"prompt": "What are my listings?", "judges": [{"contains": {"text": ["Beach House"], "all": True}}]},
        {"nested": {"k": [{"z": "é ü 漢", "n": None, "f": 2.5, "i": 3}]}, "tags": []},
        {"tuple": ("a", 1)},
        {True: "a bool key"},
        {3: "an int key"},
        {"mixed": {1: "x", "a": "y"}},
        {"nan": float("nan")},
        {"when": datetime(2026, 11, 21, 12, 0, tzinfo=UTC)},
        {"set": {3, 1, 2}},
        {"prompt": "a NUL \x00 inside"},
        {"colour": _Colour.RED, "status": Status.PASS},
        {},
    ],
    ids=repr,
)
def test_hashed_definition_stores_and_hashes_what_the_to_jsonable_copy_would(definition: dict[Any, Any]) -> None:
    # The shortcut for plain JSON data must give the very hash and column value of the full path,
    # or an unchanged case would get a new version in a store written before it.
    data, digest = hashed_definition(definition)
    reference = to_jsonable(definition)
    assert digest == jsonable_hash(reference)
    assert dumps(data) == dumps(reference)


def test_encode_json_refuses_a_cyclic_value_with_recursion_error() -> None:
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    with pytest.raises(RecursionError):
        encode_json({"loop": cyclic})
    assert encode_json({"after": [1]}).text == '{"after":[1]}'  # the shared encoder is left usable


def test_encode_json_keeps_json_s_own_names_for_bool_and_none_keys() -> None:
    assert encode_json({True: 1, None: 2}).text == '{"true":1,"null":2}'
    assert dumps(encode_json([1, "x"])) == '[1,"x"]'


@pytest.mark.parametrize(
    ("metadata", "tokens"),
    [
        ({}, None),
        ({"tokens": 150}, 150),
        ({"tokens": 7.9}, 7),
        ({"tokens": float("nan"), "usage": {"total_tokens": 5}}, 5),
        ({"tokens": True}, None),
        ({"tokens": {"total_tokens": 9, "input_tokens": 1}}, 9),
        ({"tokens": {"total_tokens": False, "input_tokens": 3, "output_tokens": 4}}, 7),
        ({"usage": {"prompt_tokens": 3, "completion_tokens": 4.5}}, 7),
        ({"usage": {"input_tokens": 2, "output_tokens": True}}, 2),
        ({"tokens": {"input": 368, "output": 22, "total": 390}}, 390),  # an LLM judge's own names
        ({"tokens": {"input": 368, "output": 22, "total": None}}, 390),
        ({"tokens": {"input": None, "output": None, "total": None}}, None),  # the provider said nothing
        ({"tokens": {"prompt": 3, "answer": 4}}, None),  # names it does not know
        ({"tokens": {}, "usage": {}}, None),
        ({"tokens": "150"}, None),
    ],
)
def test_usage_tokens_reads_a_count_or_a_usage_mapping(metadata: dict[str, Any], tokens: int | None) -> None:
    assert usage_tokens(metadata) == tokens
    assert usage_tokens(MappingProxyType(metadata)) == tokens


def test_metadata_cost_is_a_finite_number_or_none() -> None:
    assert metadata_cost({"cost": 1}) == 1.0
    assert metadata_cost({"cost": 0.25}) == 0.25
    assert [metadata_cost(m) for m in ({}, {"cost": True}, {"cost": math.inf}, {"cost": "1"})] == [None] * 4


def test_a_nul_in_a_judge_error_message_is_recorded_not_refused(store: Store) -> None:
    # A judge's error can quote a garbage reply; PostgreSQL text refuses NUL, which once lost the whole batch.
    judgment = Judgment(Status.ERROR, reasoning="judge failed", error=ErrorInfo("ParseError", "reply was \x00\x01"))
    record = CaseRecord(
        "nul-error", judgment, rounds=(RoundRecord(0, "q", Context(input="q"), judgment),), error="judge failed"
    )
    run_id = store.runs.begin("suite", cases={"nul-error": {}})

    assert store.results.record(run_id, record) is True

    (back,) = store.results.read_all(run_id)
    assert back.judgment.error is not None and back.judgment.error.message == "reply was \ufffd\x01"
    with store.engine.connect() as connection:
        errors = connection.exec_driver_sql("select error from round_results").scalars().all()
    assert errors == ["ParseError: reply was \ufffd\x01"]


def test_a_single_round_case_counts_once_in_tier_rates_and_failing_cases(store: Store) -> None:
    run_id = store.runs.begin("suite", cases={"single": {}, "multi": {}})
    single = single_round(make_record("single", llm=False))
    store.results.record(run_id, single)
    store.results.record(run_id, make_multi_round_record("multi"))

    # The single-round case's verdict once, and each of the two-round case's round verdicts.
    assert store.metrics.rates(run_id)["llm_judge"] == Rate(passed=2, total=3)
    failing, total = store.metrics.failing(run_id, "llm_judge")
    assert total == 1 and [row["case"] for row in failing] == ["single"]
    with store.engine.connect() as connection:
        rows = connection.execute(select(func.count()).select_from(judgments_table)).scalar_one()
    assert rows == nodes_per_record(single) + nodes_per_record(make_multi_round_record("multi"))


def test_planning_an_unchanged_suite_again_writes_no_case_row(store: Store) -> None:
    cases = {name: {"prompt": f"q {name}"} for name in "abc"}
    store.runs.begin("suite", cases=cases)

    def case_writes(plan: dict[str, Any]) -> list[str]:
        statements: list[str] = []

        def seen(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
            if statement.lstrip().upper().startswith(("INSERT INTO CASES", "UPDATE CASES")):
                statements.append(statement.split(maxsplit=1)[0].upper())

        event.listen(store.engine, "before_cursor_execute", seen)
        try:
            store.runs.begin("suite", cases=plan)
        finally:
            event.remove(store.engine, "before_cursor_execute", seen)
        return statements

    assert case_writes(cases) == []  # the same plan again: nothing to write
    edited = {"b": {"prompt": "q b"}, "a": {"prompt": "edited"}, "c": {"prompt": "q c"}}
    # a's new version, the old one no longer current, and b moved to the front.
    assert case_writes(edited) == ["INSERT", "UPDATE", "UPDATE"]
    with store.engine.connect() as connection:
        current = connection.execute(
            select(cases_table.c.name, cases_table.c.definition, cases_table.c.position)
            .where(cases_table.c.current.is_(True))
            .order_by(cases_table.c.position)
        ).all()
    assert [tuple(row) for row in current] == [
        ("b", {"prompt": "q b"}, 0),
        ("a", {"prompt": "edited"}, 1),
        ("c", {"prompt": "q c"}, 2),
    ]


def test_two_plans_at_once_leave_one_current_version_of_a_case(store_url: str) -> None:
    """The second planner waits for the first (PostgreSQL's row lock; SQLite's write lock) and sees its version."""
    with open_store(store_url) as store, open_store(store_url) as other:
        store.runs.begin("suite", cases={"x": {"v": 0}})
        with store.engine.connect() as connection:
            suite_key = connection.execute(select(suites_table.c.id)).scalar_one()
        done = threading.Event()
        with store.engine.connect() as first, first.begin():
            upsert_case_versions(first, suite_key, [("x", {"v": 1})])  # not committed yet
            planner = threading.Thread(
                target=lambda: (other.runs.begin("suite", cases={"x": {"v": 2}}), done.set()), daemon=True
            )
            planner.start()
            assert not done.wait(0.5)  # it waits for the first plan's transaction
        planner.join(30)
        assert done.is_set()
        with store.engine.connect() as connection:
            current = connection.execute(
                select(cases_table.c.definition).where(cases_table.c.name == "x", cases_table.c.current.is_(True))
            ).all()
    assert [row[0] for row in current] == [{"v": 2}]
