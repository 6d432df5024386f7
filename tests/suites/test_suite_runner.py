"""The runner: agent failures become ERROR cases, retries are bounded, conversations, tiers and the store."""

from __future__ import annotations

import asyncio
import gc
import io
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console
from suite_helpers import TOY_HEADER, grading_model, stub_reply

from jurybox._cli.progress import RichProgress
from jurybox.core import Status
from jurybox.engine import LLM_SKIPPED, RunOptions, SuiteRunner
from jurybox.models import FakeModel
from jurybox.report import summarize_case
from jurybox.store import CaseRecord, StoredRecords, open_store
from jurybox.stubs import StubServer
from jurybox.suites import TIER_DETERMINISTIC, TIER_LLM, SuiteError, load_suite, plan_run

FAILURES = (
    TOY_HEADER
    + """\
cases:
  - name: crashes
    prompt: "please crash"
    judges: [{contains: x}]
  - name: hangs
    prompt: "please hang"
    timeout: 0.3
    judges: [{contains: x}]
  - name: garbage
    prompt: "garbage please"
    judges: [{contains: x}]
  - name: fine
    prompt: "What are my listings?"
    judges: [{contains: "Beach House"}]
"""
)


async def test_crash_hang_and_garbage_are_errors_with_reasons_and_the_run_goes_on(
    toy_suite: Callable[[str], Path],
) -> None:
    suite = load_suite(toy_suite(FAILURES))

    result = await SuiteRunner(suite, RunOptions(concurrency=4)).run()

    by_name = {r.case: r for r in result.records}
    assert [r.case for r in result.records] == ["crashes", "hangs", "garbage", "fine"]  # suite order
    assert by_name["fine"].status is Status.PASS
    for name, reason in [
        ("crashes", "RuntimeError: the toy agent crashed on purpose"),
        ("hangs", "within 0.3s"),
        ("garbage", "returned int"),
    ]:
        record = by_name[name]
        assert record.status is Status.ERROR
        assert reason in (record.error or "")
        assert reason in record.judgment.reasoning
    assert result.status == "completed" and not result.ok


async def test_retries_are_bounded_and_a_flaky_agent_passes_on_retry(toy_suite: Callable[[str], Path]) -> None:
    text = (
        TOY_HEADER
        + """\
cases:
  - name: flaky
    prompt: "flaky: What are my listings?"
    retries: 1
    judges: [{contains: "Beach House"}]
  - name: always-crashes
    prompt: "crash"
    retries: 2
    judges: [{contains: x}]
"""
    )
    suite = load_suite(toy_suite(text))

    result = await SuiteRunner(suite).run()

    flaky, crashes = result.records
    assert flaky.status is Status.PASS and flaky.metadata["attempts"] == 2
    assert crashes.status is Status.ERROR
    assert crashes.metadata["attempts"] == 3  # one try and two retries, no more
    assert [r.split(":")[0] for r in crashes.metadata["reasons"]] == ["attempt 1", "attempt 2", "attempt 3"]


CONVERSATION = (
    TOY_HEADER
    + """\
cases:
  - name: occupancy-of-first
    revive_between_rounds: true
    rounds:
      - prompt: "What are my listings?"
        expect_tools: [get_listings]
        criteria: "Lists all properties"
      - prompt: "What's the occupancy for the first one?"
        judges: [{contains: "82%"}]
        criteria: "Gives the first listing's occupancy"
    sql_checks:
      - name: stored
        query: "select count(*) from messages where session_id = :session_id"
        expect: {min: 4}
      - name: too-many
        query: "select count(*) from messages where session_id = :session_id"
        expect: {max: 3}
  - name: revenue
    prompt: "What was my revenue?"
    max_follow_ups: 1
    follow_ups: ["last month"]
    expect_tools: [get_revenue]
    judges: [{contains: "$4,200"}]
"""
)


async def test_a_clarifying_question_nobody_answered_is_named_in_the_reason(toy_suite: Callable[[str], Path]) -> None:
    # No scripted follow-up and no judge model to write one: the reply stays a question, and the
    # report says so instead of only "none of the texts found".
    text = TOY_HEADER + (
        "cases:\n  - name: asks\n    prompt: 'What was my revenue?'\n    max_follow_ups: 2\n"
        "    judges: [{contains: '$4,200'}]\n"
    )
    result = await SuiteRunner(load_suite(toy_suite(text))).run()

    case = summarize_case(result.records[0])
    assert case.record.status is Status.FAIL
    assert case.reason.startswith("contains('$4,200')")
    assert "in round 1 the agent asked a clarifying question that was not answered" in case.reason


async def test_multi_round_revival_follow_ups_and_sql_checks(toy_suite: Callable[[str], Path]) -> None:
    suite = load_suite(toy_suite(CONVERSATION), judge_model=grading_model())

    result = await SuiteRunner(suite).run()

    occupancy, revenue = result.records
    # Revival: the second round still knew the listings, because the agent stored them.
    assert [r.context.output for r in occupancy.rounds][1] == "Beach House occupancy is 82% this month."
    assert occupancy.rounds[1].context.metadata["revived"] is True
    # The SQL checks ran against the agent's database for this case's session: one passes, one fails.
    deterministic = occupancy.judgment.children[TIER_DETERMINISTIC]
    assert deterministic.children["stored"].status is Status.PASS
    assert deterministic.children["too-many"].status is Status.FAIL
    assert "expected at most 3" in deterministic.children["too-many"].reasoning
    # ...so the case fails in the deterministic tier and its LLM judges are never called.
    assert occupancy.status is Status.FAIL
    assert occupancy.judgment.decided_by == TIER_DETERMINISTIC
    assert TIER_LLM in occupancy.judgment.metadata["skipped"]
    assert occupancy.judge_calls == 0
    # Each round has its own verdict, from its own judges; its LLM judge never ran, so no round passes.
    assert occupancy.rounds[0].judgment.status is Status.ABSTAIN
    assert occupancy.rounds[0].judgment.metadata["not_run"] == ["criteria"]
    assert set(occupancy.rounds[1].judgment.children) == {"contains('82%')"}
    # Follow-up: the agent asked which period, the case's scripted reply answered it.
    assert revenue.status is Status.PASS
    assert revenue.rounds[0].follow_ups == (("Which period do you mean: this month or last month?", "last month"),)
    assert revenue.context.output == "Revenue for that period: $4,200."
    # The model-backed clarification detector ran (a judge model is configured): counted as judge calls.
    assert revenue.judge_calls >= 1


async def test_llm_tier_runs_after_cheap_tiers_pass_and_is_skipped_without_a_model(
    toy_suite: Callable[[str], Path],
) -> None:
    text = (
        TOY_HEADER
        + """\
cases:
  - name: lists
    prompt: "What are my listings?"
    judges:
      - contains: "Beach House"
      - correctness: {reference: "Beach House, Mountain Cabin, City Apartment"}
  - name: cheap-fail
    prompt: "What are my listings?"
    judges:
      - contains: "Lighthouse"
      - correctness: {reference: "Beach House, Mountain Cabin, City Apartment"}
  - name: only-llm
    prompt: "What are my listings?"
    criteria: "Lists the properties"
"""
    )
    path = toy_suite(text)
    model = grading_model()

    judged = await SuiteRunner(load_suite(path, judge_model=model)).run()

    lists, cheap_fail, only_llm = judged.records
    assert lists.status is Status.PASS and lists.judgment.decided_by == TIER_LLM
    assert list(lists.judgment.children) == [TIER_DETERMINISTIC, TIER_LLM]  # cheap tier first
    assert lists.judge_calls == 1
    assert cheap_fail.status is Status.FAIL and cheap_fail.judge_calls == 0  # no tokens spent after a cheap fail
    assert only_llm.status is Status.PASS
    assert model.calls == 2

    offline = await SuiteRunner(load_suite(path)).run()

    lists, cheap_fail, only_llm = offline.records
    assert offline.llm_skipped
    assert lists.status is Status.PASS and lists.metadata["llm_tier"] == LLM_SKIPPED
    assert lists.metadata["skipped_judges"] == ["correctness"]
    assert "llm tier skipped" in lists.judgment.reasoning
    assert lists.metadata["skipped_tiers"][TIER_LLM].startswith("no judge model configured")
    # A case with only LLM judges is not judged at all, and says so: never a silent pass.
    assert only_llm.status is Status.ABSTAIN
    assert "(no judge model configured)" in only_llm.judgment.reasoning  # how to configure one: the run's notes


async def test_a_judge_with_its_own_model_runs_when_the_suite_has_none(toy_suite: Callable[[str], Path]) -> None:
    with StubServer("openai", stub_reply) as stub:
        own = f"openai:gpt-4o-mini@{stub.base_url}"
        text = (
            TOY_HEADER
            + f"""\
cases:
  - name: own-model
    prompt: "What are my listings?"
    judges:
      - contains: "Beach House"
      - correctness: {{reference: "Beach House, Mountain Cabin, City Apartment", model: "{own}"}}
  - name: jury-half-own
    prompt: "What are my listings?"
    judges:
      - contains: "Beach House"
      - jury: {{judges: [{{correctness: {{reference: "Beach House", model: "{own}"}}}}, {{relevance: {{}}}}]}}
  - name: suite-model
    prompt: "What are my listings?"
    judges:
      - contains: "Beach House"
      - correctness: {{reference: "Beach House"}}
  - name: mixed
    prompt: "What are my listings?"
    judges:
      - contains: "Beach House"
      - correctness: {{reference: "Beach House", model: "{own}"}}
      - relevance: {{}}
"""
        )
        suite = load_suite(toy_suite(text))
        plan = plan_run(suite, suite.cases)
        result = await SuiteRunner(suite).run()

    assert not suite.llm_enabled
    assert [(c.skipped, c.min_calls, c.max_calls) for c in plan.cases] == [
        ([], 0, 3),  # one call, asked again up to twice when unreadable
        (["jury"], 0, 0),  # a jury runs only when every member has a model to call
        (["correctness"], 0, 0),
        (["correctness", "relevance"], 0, 0),  # and a case's LLM tier when every LLM judge has one
    ]
    assert plan.estimated_cost() is None  # the judges' own models are not priced here
    own_model, jury, suite_model, mixed = result.records
    assert own_model.status is Status.PASS and own_model.judgment.decided_by == TIER_LLM
    assert own_model.judge_calls == 1 and "llm_tier" not in own_model.metadata
    assert jury.metadata["llm_tier"] == LLM_SKIPPED and jury.metadata["skipped_judges"] == ["jury"]
    assert suite_model.metadata["llm_tier"] == LLM_SKIPPED
    assert mixed.metadata["skipped_judges"] == ["correctness", "relevance"]
    assert mixed.judgment.decided_by == TIER_DETERMINISTIC and mixed.judge_calls == 0
    assert len(stub.requests) == 1
    assert result.llm_skipped and result.llm_skipped_cases == 3


async def test_case_voting_overrides_all_must_pass(toy_suite: Callable[[str], Path]) -> None:
    text = (
        TOY_HEADER
        + """\
cases:
  - name: two-of-three
    prompt: "What are my listings?"
    voting: {at_least: 2}
    judges: [{contains: "Beach House"}, {contains: "Mountain Cabin"}, {contains: "Lighthouse"}]
"""
    )

    result = await SuiteRunner(load_suite(toy_suite(text))).run()

    assert result.records[0].status is Status.PASS


async def test_seeds_reach_a_python_agent_factory(toy_suite: Callable[[str], Path], tmp_path: Path) -> None:
    (tmp_path / "seeds").mkdir()
    for seed_id in ("b-note", "a-note"):
        (tmp_path / "seeds" / f"{seed_id}.md").write_text(f"---\nid: {seed_id}\ntype: note\n---\ntext\n")
    text = TOY_HEADER + "seeds: seeds\ncases:\n  - name: s\n    prompt: list seeds\n    judges: [{contains: a-note}]\n"

    result = await SuiteRunner(load_suite(toy_suite(text))).run()

    assert result.records[0].context.output == "Seeds: a-note, b-note"


class MemoryStore:
    """The runner's store contract, in memory, counting writes (its ``runs`` and ``results`` are itself)."""

    def __init__(self) -> None:
        self.stored: dict[str, dict[str, CaseRecord]] = {}
        self.writes = 0
        self.status: dict[str, str] = {}
        self.planned_runs: dict[str, list[str]] = {}
        self.runs = self
        self.results = self

    def begin(self, suite: str, *, cases: dict[str, object], **_: object) -> str:
        run_id = f"run-{len(self.stored) + 1}"
        self.stored[run_id] = {}
        self.planned_runs[run_id] = list(cases)
        return run_id

    def record(self, run_id: str, record: CaseRecord) -> bool:
        self.writes += 1
        if record.case in self.stored[run_id]:
            return False
        self.stored[run_id][record.case] = record
        return True

    def record_many(self, run_id: str, records: list[CaseRecord]) -> list[bool]:
        return [self.record(run_id, record) for record in records]

    def recorded(self, run_id: str) -> set[str]:
        return set(self.stored[run_id])

    def planned(self, run_id: str) -> list[str]:
        return self.planned_runs[run_id]

    def records(self, run_id: str, *, cases: object = None) -> list[CaseRecord]:
        return list(self.stored[run_id].values())

    def finish_run(self, run_id: str, status: str = "completed") -> None:
        self.status[run_id] = status


MANY = (
    TOY_HEADER
    + "cases:\n"
    + "".join(
        f"  - name: case-{i}\n    prompt: 'What are my listings?'\n    judges: [{{contains: Beach House}}]\n"
        for i in range(12)
    )
)


async def test_stop_then_resume_judges_every_case_exactly_once(toy_suite: Callable[[str], Path]) -> None:
    suite = load_suite(toy_suite(MANY))
    store = MemoryStore()

    class StopAfter:
        def __init__(self, runner_ref: list[SuiteRunner], after: int) -> None:
            self.runner_ref, self.after, self.done = runner_ref, after, 0

        def start(self, suite: str, total: int, done: int) -> None:
            return None

        def case_done(self, record: CaseRecord, spend: object) -> None:
            self.done += 1
            if self.done == self.after:
                self.runner_ref[0].stop()  # what Ctrl-C does

        def stop(self) -> None:
            return None

    holder: list[SuiteRunner] = []
    runner = SuiteRunner(suite, RunOptions(concurrency=2), store=store, progress=StopAfter(holder, 5))  # type: ignore[arg-type]
    holder.append(runner)
    first = await runner.run()

    assert first.status == "interrupted"
    assert store.status[first.run_id] == "interrupted"
    finished = store.results.recorded(first.run_id)
    assert 5 <= len(finished) < 12  # what finished was written; the rest was abandoned

    second = await SuiteRunner(suite, RunOptions(concurrency=3), store=store).run(resume=first.run_id)

    assert second.status == "completed" and second.resumed == len(finished)
    assert [r.case for r in second.records] == [f"case-{i}" for i in range(12)]  # the whole run, in order
    assert store.writes == 12  # every case judged and written exactly once
    assert second.ok


async def test_results_stream_to_a_real_store(toy_suite: Callable[[str], Path], tmp_path: Path) -> None:
    suite = load_suite(toy_suite(FAILURES))
    store = open_store(f"sqlite:///{tmp_path / 'runs.db'}")
    try:
        result = await SuiteRunner(suite, store=store).run()
        stored = {r.case: r for r in store.results.read_all(result.run_id)}
        info = store.runs.get(result.run_id)
    finally:
        store.close()

    assert set(stored) == {"crashes", "hangs", "garbage", "fine"}
    assert stored["crashes"].status is Status.ERROR and "crashed on purpose" in (stored["crashes"].error or "")
    assert info.status == "completed" and info.recorded == 4


async def test_with_a_store_the_runner_holds_no_finished_record(
    toy_suite: Callable[[str], Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Memory must not grow with the run: each record is written and dropped, and the
    # result reads them back from the store on demand. A small writer queue makes the
    # bound hold however slowly the store's thread gets its turn (a loaded CI machine).
    monkeypatch.setattr("jurybox.engine._writer.MAX_PENDING_WRITES", 4)
    monkeypatch.setattr("jurybox.engine._writer.WRITE_BATCH", 4)
    cases = 60
    text = (
        TOY_HEADER
        + "cases:\n"
        + "".join(
            f"  - name: case-{i}\n    prompt: 'What are my listings?'\n    judges: [{{contains: Beach House}}]\n"
            for i in range(cases)
        )
    )
    alive: list[int] = []

    class CountRecords:
        def start(self, suite: str, total: int, done: int) -> None:
            return None

        def case_done(self, record: CaseRecord, spend: object) -> None:
            alive.append(sum(1 for o in gc.get_objects() if type(o) is CaseRecord))

        def stop(self) -> None:
            return None

    gc.collect()
    with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        options = RunOptions(concurrency=2)
        result = await SuiteRunner(load_suite(toy_suite(text)), options, store=store, progress=CountRecords()).run()
        assert isinstance(result.records, StoredRecords)
        assert len(result.records) == cases and result.ok and result.count(Status.PASS) == cases
        assert [r.case for r in result.records] == [f"case-{i}" for i in range(cases)]
    assert len(alive) == cases
    # Those in flight (2) and those queued for the store's writer thread (at most 4 + 2 waiting, and the
    # batch it writes), never the whole run.
    assert max(alive) <= 16, alive


async def test_a_slow_store_holds_back_the_workers_instead_of_queueing_the_run(
    toy_suite: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("jurybox.engine._writer.MAX_PENDING_WRITES", 3)
    text = (
        TOY_HEADER
        + "cases:\n"
        + "".join(
            f"  - name: case-{i}\n    prompt: 'What are my listings?'\n    judges: [{{contains: Beach House}}]\n"
            for i in range(15)
        )
    )

    class SlowStore(MemoryStore):
        def record(self, run_id: str, record: CaseRecord) -> bool:
            time.sleep(0.05)
            return super().record(run_id, record)

    queued: list[int] = []

    class WatchQueue:
        def start(self, suite: str, total: int, done: int) -> None:
            return None

        def case_done(self, record: CaseRecord, spend: object) -> None:
            queued.append(len(runner._writer.pending if runner._writer is not None else ()))

        def stop(self) -> None:
            return None

    store = SlowStore()
    runner = SuiteRunner(load_suite(toy_suite(text)), RunOptions(concurrency=1), store=store, progress=WatchQueue())  # type: ignore[arg-type]
    result = await runner.run()

    assert result.ok and store.writes == 15
    assert max(queued) <= 3, queued


async def test_a_failed_batch_is_retried_case_by_case_so_only_the_bad_case_is_lost(
    toy_suite: Callable[[str], Path],
) -> None:
    class PickyStore(MemoryStore):
        def record_many(self, run_id: str, records: list[CaseRecord]) -> list[bool]:
            if any(r.case == "case-3" for r in records):
                raise RuntimeError("batch refused")
            return super().record_many(run_id, records)

        def record(self, run_id: str, record: CaseRecord) -> bool:
            if record.case == "case-3":
                raise RuntimeError("value too long")
            return super().record(run_id, record)

    store = PickyStore()
    result = await SuiteRunner(load_suite(toy_suite(MANY)), RunOptions(concurrency=4), store=store).run()  # type: ignore[arg-type]

    assert result.store_errors == ["case-3: RuntimeError: value too long"]
    assert store.results.recorded(result.run_id) == {f"case-{i}" for i in range(12)} - {"case-3"}
    assert not result.ok


async def test_judge_spend_is_counted_per_case(toy_suite: Callable[[str], Path]) -> None:
    text = TOY_HEADER + "cases:\n  - name: a\n    prompt: hi\n    criteria: polite\n"
    model = FakeModel('{"scores": {"polite": 80}, "reasoning": "fine"}')

    result = await SuiteRunner(load_suite(toy_suite(text), judge_model=model)).run()

    record = result.records[0]
    assert record.status is Status.PASS
    assert record.judge_calls == 1 == result.spend.calls


def test_bad_options_are_rejected() -> None:
    with pytest.raises(ValueError, match="concurrency"):
        RunOptions(concurrency=0)


async def test_the_progress_bar_counts_cases_and_spend(toy_suite: Callable[[str], Path]) -> None:
    text = TOY_HEADER + "cases:\n  - name: a\n    prompt: listings\n    criteria: polite\n"
    text += "  - name: b\n    prompt: crash\n    judges: [{contains: x}]\n"
    output = io.StringIO()
    progress = RichProgress(Console(file=output, force_terminal=True, width=160))
    model = FakeModel('{"scores": {"polite": 80}, "reasoning": "fine"}')

    await SuiteRunner(load_suite(toy_suite(text), judge_model=model), progress=progress).run()

    shown = output.getvalue()
    assert "2/2" in shown and "1 pass" in shown and "1 error" in shown and "judge calls 1" in shown


def test_the_plan_counts_judge_calls_per_tier(toy_suite: Callable[[str], Path]) -> None:
    text = (
        TOY_HEADER
        + """\
cases:
  - name: cheap-first
    prompt: hi
    judges: [{contains: x}, {correctness: {reference: y}}]
  - name: llm-only
    rounds: [{prompt: a, criteria: c}, {prompt: b, criteria: d}]
  - name: asks
    prompt: revenue
    max_follow_ups: 1
    judges: [{contains: x}]
"""
    )
    path = toy_suite(text)

    with_model = plan_run(load_suite(path, judge_model=grading_model()), load_suite(path).cases)
    offline = plan_run(load_suite(path), load_suite(path).cases)

    calls = {p.case.name: (p.min_calls, p.max_calls) for p in with_model.cases}
    # An LLM judge asks again (up to its retries, 2 by default) when a reply holds no readable verdict.
    assert calls == {"cheap-first": (0, 3), "llm-only": (2, 6), "asks": (1, 3)}
    assert with_model.cases[0].tiers == {"deterministic": ["contains('x')"], "llm_judge": ["correctness"]}
    assert offline.max_calls == 0 and offline.skipped_judges == 3
    assert offline.cases[1].skipped == ["round1.criteria", "round2.criteria"]


def test_the_call_range_of_juries_and_cascades_counts_re_asks_only_at_most(toy_suite: Callable[[str], Path]) -> None:
    text = TOY_HEADER + (
        "cases:\n"
        "  - name: jury\n    prompt: hi\n"
        "    judges: [{jury: {judges: [{correctness: {reference: a}}, {relevance: {}}]}}]\n"
        "  - name: cascade\n    prompt: hi\n"
        "    judges: [{cascade: [{judges: [{contains: x}]}, {judges: [{correctness: {reference: a}}]}]}]\n"
    )
    path = toy_suite(text)

    plan = plan_run(load_suite(path, judge_model=grading_model()), load_suite(path).cases)

    calls = {p.case.name: (p.min_calls, p.max_calls) for p in plan.cases}
    # A jury asks each member once when replies are readable; a cascade whose cheap first tier
    # rejects makes no call. At most, every LLM judge asks again twice (retries=2).
    assert calls == {"jury": (2, 6), "cascade": (0, 3)}


def test_seeds_need_a_python_agent(toy_suite: Callable[[str], Path], tmp_path: Path) -> None:
    (tmp_path / "seeds").mkdir()
    (tmp_path / "seeds" / "a.md").write_text("---\nid: a\ntype: note\n---\ntext\n")
    text = "name: t\nagent: {http: {url: 'http://127.0.0.1:9/chat'}}\nseeds: seeds\n"
    text += "cases:\n  - name: a\n    prompt: hi\n    judges: [{contains: x}]\n"

    # Found by loading the suite (so by --dry-run too), at the seeds: line.
    with pytest.raises(SuiteError, match=r"suite.yaml:3: seeds: .*for an openai/http/mcp agent load them"):
        load_suite(toy_suite(text))


async def test_a_round_whose_judges_never_ran_is_not_shown_as_passed(toy_suite: Callable[[str], Path]) -> None:
    # Round 2's cheap judge fails, so the cascade stops before the LLM tier; round 1's
    # criteria judge never ran, so round 1 was not shown to pass, whatever its cheap judge said.
    text = (
        TOY_HEADER
        + """\
cases:
  - name: two-rounds
    rounds:
      - prompt: "What are my listings?"
        judges: [{contains: "Beach House"}]
        criteria: "Lists all properties"
      - prompt: "What are my listings again?"
        judges: [{contains: "Lighthouse"}]
"""
    )
    model = grading_model()

    result = await SuiteRunner(load_suite(toy_suite(text), judge_model=model)).run()

    (record,) = result.records
    assert record.status is Status.FAIL and record.judgment.decided_by == TIER_DETERMINISTIC
    assert model.calls == 0
    first, second = record.rounds
    assert second.judgment.status is Status.FAIL
    assert first.judgment.status is Status.ABSTAIN
    assert "criteria" in first.judgment.reasoning and "did not run" in first.judgment.reasoning
    assert first.judgment.metadata["not_run"] == ["criteria"]


async def test_an_agent_that_fails_to_close_its_session_is_an_error_not_a_pass(
    toy_suite: Callable[[str], Path],
) -> None:
    # Closing the session is where an agent flushes what it stored; its failure must not be
    # swallowed while the case passes on the reply alone.
    path = toy_suite(
        """\
name: closing
agent: {python: "closing_agent:answer", close_session: "closing_agent:close"}
cases:
  - name: answers
    prompt: hi
    judges: [{contains: "hello"}]
"""
    )
    (path.parent / "closing_agent.py").write_text(
        "def answer(message, session_id):\n"
        "    return 'hello'\n\n"
        "def close(session_id):\n"
        "    raise OSError('could not save the conversation')\n",
        encoding="utf-8",
    )

    result = await SuiteRunner(load_suite(path)).run()

    (record,) = result.records
    assert record.status is Status.ERROR
    assert record.error is not None and "could not save the conversation" in record.error
    assert [r.context.output for r in record.rounds] == ["hello"]


async def test_a_run_that_judged_no_case_is_not_ok(toy_suite: Callable[[str], Path]) -> None:
    # A selector matching nothing runs nothing; a gate on RunResult.ok must not pass on that.
    suite = load_suite(toy_suite(FAILURES))

    result = await SuiteRunner(suite, RunOptions(selectors=("no-such-case",))).run()

    assert result.records == [] and result.status == "completed"
    assert not result.ok


class BatchStore(MemoryStore):
    """Counts the records of each ``record_many`` call (one call = one transaction in a real store)."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[int] = []

    def record_many(self, run_id: str, records: list[CaseRecord]) -> list[bool]:
        self.batches.append(len(records))
        return super().record_many(run_id, records)


async def test_cases_that_finish_close_together_are_committed_together(toy_suite: Callable[[str], Path]) -> None:
    store = BatchStore()
    result = await SuiteRunner(load_suite(toy_suite(MANY)), RunOptions(concurrency=12), store=store).run()  # type: ignore[arg-type]

    assert result.ok
    assert store.results.recorded(result.run_id) == {f"case-{i}" for i in range(12)}
    assert sum(store.batches) == 12
    assert len(store.batches) < 12, store.batches  # they waited WRITE_LINGER for each other


async def test_the_end_of_a_run_writes_what_is_lingering_without_waiting_for_the_timer(
    toy_suite: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("jurybox.engine._writer.WRITE_LINGER", 3600.0)
    store = BatchStore()
    runner = SuiteRunner(load_suite(toy_suite(MANY)), RunOptions(concurrency=3), store=store)  # type: ignore[arg-type]

    result = await asyncio.wait_for(runner.run(), timeout=30)

    assert store.results.recorded(result.run_id) == {f"case-{i}" for i in range(12)}
    assert store.batches == [12]  # nothing was written before the drain, then everything at once
    assert store.status[result.run_id] == "completed"


async def test_a_full_batch_is_written_without_lingering(
    toy_suite: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("jurybox.engine._writer.WRITE_LINGER", 3600.0)
    monkeypatch.setattr("jurybox.engine._writer.WRITE_BATCH", 4)
    store = BatchStore()
    result = await SuiteRunner(load_suite(toy_suite(MANY)), RunOptions(concurrency=1), store=store).run()  # type: ignore[arg-type]

    assert result.ok
    assert store.batches[0] == 4  # written when the fourth case ended, not at the end of the run
    assert sum(store.batches) == 12


HANGING_AGENT = """
import asyncio


class Agent:
    async def respond(self, message: str, session_id: str) -> str:
        await asyncio.sleep(3600)  # never answers
        return ""

    async def close(self) -> None:
        await asyncio.Event().wait()  # a graceful close that waits for the work in flight: never returns
"""


async def test_a_timed_out_case_whose_agent_never_closes_still_ends(tmp_path: Path) -> None:
    """The runner's case timeout bounds the conversation; the session's close after it keeps a bound of its own."""
    (tmp_path / "hanging_agent.py").write_text(HANGING_AGENT, encoding="utf-8")
    (tmp_path / "suite.yaml").write_text(
        "name: hangs\n"
        'agent: {python: "hanging_agent:Agent"}\n'
        "defaults: {retries: 0}\n"
        "cases:\n"
        "  - name: hangs\n"
        '    prompt: "hi"\n'
        "    timeout: 0.3\n"
        "    judges: [{contains: x}]\n",
        encoding="utf-8",
    )
    started = time.monotonic()
    result = await asyncio.wait_for(SuiteRunner(load_suite(tmp_path / "suite.yaml"), RunOptions()).run(), timeout=20)

    [record] = result.records
    assert record.status is Status.ERROR
    assert "did not finish within 0.3s" in (record.error or ""), record.error
    assert time.monotonic() - started < 10  # the case's 0.3 s, its close's 0.3 s, the session close's own bound
