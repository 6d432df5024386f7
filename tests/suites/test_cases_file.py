"""``cases_file:``: cases in JSON Lines, checked line by line at load and built one at a time as a run reaches them."""

from __future__ import annotations

import asyncio
import gc
import json
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from suite_helpers import TOY_HEADER

from jurybox.core import Status
from jurybox.engine import RunOptions, SuiteRunner
from jurybox.executors._ray_actor import CaseActor
from jurybox.executors._ray_setup import ActorSetup
from jurybox.models import Spend
from jurybox.store import CaseRecord, open_store
from jurybox.suites import CaseLine, StreamedCases, SuiteError, load_suite, plan_run

PROMPTS = ["What are my listings?", "What are my listings?", "hello", "please crash"]


def case_line(index: int, **extra: Any) -> dict[str, Any]:
    case = {
        "name": f"case-{index:03d}",
        "prompt": f"{PROMPTS[index % 4]} ({index})",
        "tags": ["even"] if index % 2 == 0 else [],
        "judges": [{"contains": "Beach House"}],
    }
    return case | extra


def write_cases(folder: Path, cases: list[dict[str, Any]], name: str = "cases.jsonl") -> Path:
    path = folder / name
    path.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    return path


def inline_text(cases: list[dict[str, Any]]) -> str:
    return TOY_HEADER + "cases:\n" + "".join(f"  - {json.dumps(c)}\n" for c in cases)


STREAMED = TOY_HEADER + "cases_file: cases.jsonl\n"


def test_a_cases_file_loads_as_the_same_cases_as_inline_ones(toy_suite: Callable[..., Path]) -> None:
    lines = [case_line(i) for i in range(12)] + [case_line(12, skip=True)]
    inline = load_suite(toy_suite(inline_text(lines), "inline.yaml"))
    path = toy_suite(STREAMED)
    write_cases(path.parent, lines)
    streamed = load_suite(path)

    assert isinstance(streamed.cases, StreamedCases)
    assert len(streamed.cases) == 13 and len(streamed.select()) == 12
    assert [c.name for c in streamed.cases] == [c.name for c in inline.cases]
    assert [c.spec for c in streamed.cases] == [c.spec for c in inline.cases]
    assert [c.name for c in streamed.select(["even"])] == [c.name for c in inline.select(["even"])]
    # A worker process's share is every N-th case, lazily.
    assert [c.name for c in streamed.select()[1::3]] == [c.name for c in inline.select()[1::3]]
    assert streamed.cases[4].name == "case-004" and streamed.cases[-1].name == "case-012"
    assert not streamed.select(["no-such-case"])
    # The plan's totals come from the load's check pass, not from building every case again.
    mine, theirs = plan_run(streamed, streamed.select()), plan_run(inline, inline.select())
    assert mine.totals is not None and len(mine.cases) == len(theirs.cases) == 12
    assert (mine.min_calls, mine.max_calls, mine.skipped_judges) == (
        theirs.min_calls,
        theirs.max_calls,
        theirs.skipped_judges,
    )
    assert streamed.sample_cases and len(streamed.sample_cases) == 1  # one case per distinct set of judges


def test_inline_cases_come_first_and_share_one_namespace(toy_suite: Callable[..., Path]) -> None:
    text = STREAMED + "cases:\n  - {name: case-001, prompt: hello, judges: [{contains: x}]}\n"
    path = toy_suite(text)
    write_cases(path.parent, [case_line(0), case_line(1), case_line(2)])
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    assert f"{path.parent / 'cases.jsonl'}:2: name: duplicate case name 'case-001' (first at the suite file" in str(
        caught.value
    )


def test_every_bad_line_is_named_by_file_line_and_field(toy_suite: Callable[..., Path]) -> None:
    path = toy_suite(STREAMED)
    good = json.dumps(case_line(0))
    bad_lines = [
        good,
        "{not json",
        "[1, 2]",
        json.dumps(case_line(3, promt="typo")),
        json.dumps(case_line(4, judges=[{"contians": "x"}])),
        json.dumps(case_line(5, threshold=2)),
        json.dumps(case_line(0)),
        "",
        json.dumps({"prompt": "no name", "judges": [{"contains": "x"}]}),
    ]
    (path.parent / "cases.jsonl").write_text("\n".join(bad_lines) + "\n", encoding="utf-8")
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    text = str(caught.value)
    file = path.parent / "cases.jsonl"
    assert f"{file}:2: invalid JSON" in text
    assert f"{file}:3: each line of a cases file is one case" in text
    assert f"{file}:4: promt: unknown key" in text
    assert f"{file}:5: judges[0]" in text and "contians" in text
    assert f"{file}:6: threshold:" in text
    assert f"{file}:7: name: duplicate case name 'case-000' (first at line 1)" in text
    assert f"{file}:9: name: required field is missing" in text


def test_a_missing_file_and_a_flood_of_problems_are_reported_briefly(toy_suite: Callable[..., Path]) -> None:
    path = toy_suite(STREAMED)
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    assert f"{path}:5: cases_file: no such cases file" in str(caught.value)

    (path.parent / "cases.jsonl").write_text("{oops\n" * 500, encoding="utf-8")
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    assert len(caught.value.problems) == 51
    assert "and 450 more problem(s) in this file" in str(caught.value.problems[-1])


def test_a_suite_needs_cases_inline_or_in_a_file(toy_suite: Callable[..., Path]) -> None:
    with pytest.raises(SuiteError, match="a non-empty 'cases' list, or a 'cases_file'"):
        load_suite(toy_suite(TOY_HEADER))


def test_a_file_changed_after_loading_is_refused_when_read(toy_suite: Callable[..., Path]) -> None:
    path = toy_suite(STREAMED)
    cases = write_cases(path.parent, [case_line(i) for i in range(3)])
    suite = load_suite(path)
    cases.write_text(cases.read_text(encoding="utf-8") + json.dumps(case_line(3)) + "\n", encoding="utf-8")
    with pytest.raises(SuiteError, match="the cases file changed since the suite was loaded"):
        list(suite.cases)


async def test_a_run_judges_each_line_once_and_resumes_where_it_stopped(
    toy_suite: Callable[..., Path], tmp_path: Path
) -> None:
    lines = [case_line(i) for i in range(20)]
    inline = load_suite(toy_suite(inline_text(lines), "inline.yaml"))
    path = toy_suite(STREAMED)
    write_cases(path.parent, lines)
    suite = load_suite(path)

    class StopAfter:
        def __init__(self, runner: list[SuiteRunner]) -> None:
            self.runner, self.seen = runner, 0

        def start(self, suite: str, total: int, done: int) -> None:
            self.total, self.done = total, done

        def case_done(self, record: CaseRecord, spend: Spend) -> None:
            self.seen += 1
            if self.runner and self.seen == 7:
                self.runner[0].stop()

        def stop(self) -> None:
            return None

    with open_store(f"sqlite:///{tmp_path / 'runs.db'}") as store:
        reference = await SuiteRunner(inline, RunOptions(concurrency=2), store=store).run()
        holder: list[SuiteRunner] = []
        first = SuiteRunner(suite, RunOptions(concurrency=2), store=store, progress=StopAfter(holder))
        holder.append(first)
        stopped = await first.run()
        assert stopped.status == "interrupted" and 7 <= store.runs.get(stopped.run_id).recorded < 20
        assert store.results.planned(stopped.run_id) == [c["name"] for c in lines]

        progress = StopAfter([])
        resumed = await SuiteRunner(load_suite(path), RunOptions(concurrency=2), store=store, progress=progress).run(
            resume=stopped.run_id
        )
        assert resumed.status == "completed" and progress.total == 20 and progress.done == resumed.resumed
        assert store.runs.get(stopped.run_id).recorded == 20 == len(resumed.records)
        assert {r.case: r.status for r in resumed.records} == {r.case: r.status for r in reference.records}
        assert resumed.count(Status.PASS) == 10 and resumed.count(Status.ERROR) == 5


def test_iterating_a_big_cases_file_holds_no_case(tmp_path: Path, toy_suite: Callable[..., Path]) -> None:
    """Memory while walking 1,000 and 10,000 lines: the same (each case is built, used and dropped)."""
    path = toy_suite(STREAMED)

    def peak_walking(count: int) -> int:
        write_cases(path.parent, [case_line(i) for i in range(count)])
        suite = load_suite(path)
        gc.collect()
        tracemalloc.start()
        try:
            names = sum(1 for _ in suite.cases)
            specs = sum(1 for _ in suite.cases.specs()) if isinstance(suite.cases, StreamedCases) else 0
            return tracemalloc.get_traced_memory()[1] if names == specs == count else -1
        finally:
            tracemalloc.stop()

    small, big = peak_walking(1_000), peak_walking(10_000)
    assert small > 0 and big > 0
    # Both peaks are ~24 kB. The margin is ~14 bytes a line over the 9,000 more, as 256 kB was over 18,000
    # (2,000 and 20,000 lines took twice as long under tracemalloc for the same answer).
    assert big < small * 1.5 + 128 * 1024, (small, big)


def test_an_actor_builds_the_lines_it_is_sent_and_errs_one_it_cannot(toy_suite: Callable[..., Path]) -> None:
    path = toy_suite(STREAMED)
    file = write_cases(path.parent, [case_line(i) for i in range(4)])
    suite = load_suite(path)
    load = lambda: load_suite(path, check_cases_file=False)  # noqa: E731 - what default_suite_loader does
    actor = CaseActor(ActorSetup(run_id="r1", index=0, count=1, concurrency=2, load_suite=load, judge_model=None))
    good = CaseLine(str(file), 1, json.dumps(case_line(0)), "case-000")
    broken = CaseLine(str(file), 2, '{"name": "case-001", "prompt": 3}', "case-001")

    async def run() -> list[Any]:
        finished = []
        async for chunk in actor.run_batch([good, broken]):
            finished.extend(chunk.finished)
        await actor.close()
        return finished

    finished = {item.case: item for item in asyncio.run(run())}
    assert finished["case-000"].status == Status.PASS
    assert finished["case-001"].status == Status.ERROR
    assert finished["case-001"].record is not None
    assert "could not be built on the actor" in finished["case-001"].record.judgment.reasoning
    assert f"{file}:2: prompt" in finished["case-001"].record.judgment.reasoning
    assert suite.cases.file.totals is not None  # type: ignore[attr-defined]


def test_the_store_refuses_to_import_half_a_suite(toy_suite: Callable[..., Path]) -> None:
    from jurybox.store import SuiteFileError, read_suite_file

    path = toy_suite(STREAMED)
    write_cases(path.parent, [case_line(0)])
    with pytest.raises(
        SuiteFileError, match="cases_file: a suite whose cases are in a JSON Lines file runs from its files"
    ):
        read_suite_file(path)


def test_a_workers_share_is_counted_without_walking_the_file(toy_suite: Callable[..., Path]) -> None:
    """``cases[i::n]`` of a counted selection knows its length: a worker does not parse every line to count it."""
    path = toy_suite(STREAMED)
    write_cases(path.parent, [case_line(i, **({"skip": True} if i % 5 == 0 else {})) for i in range(23)])
    whole = load_suite(path).select()
    assert isinstance(whole, StreamedCases) and len(whole) == 18
    for count in (1, 2, 3, 7, 30):
        for index in range(count):
            share = whole[index::count]
            assert isinstance(share, StreamedCases) and share._count  # counted from the selection's count
            walked = StreamedCases(share.inline, share.file, share.view)
            assert len(share) == len(walked) == sum(1 for _ in walked.names())
