"""The totals a run adds up as its cases finish are the ones its stored records give (``jurybox run``'s report)."""

from __future__ import annotations

from pathlib import Path

from jurybox.core import Status
from jurybox.report import LiveTally, report_from_store
from jurybox.runs import PlannedSuite, RunRequest, prepare
from jurybox.store import open_store

AGENT = """
calls = {}

def respond(message, session_id):
    calls[message] = calls.get(message, 0) + 1
    if "crash" in message:
        raise RuntimeError("the agent fell over")
    if "flaky" in message and calls[message] == 1:
        raise ConnectionError("first attempt lost")
    return "You have 3 listings." if "good" in message else "I do not know."
"""

SUITE = """name: tallied
agent: {python: "agent.py:respond"}
defaults: {retries: 1}
cases:
  - {name: good, prompt: "good one", judges: [{contains: "3 listings"}]}
  - {name: flaky, prompt: "good but flaky", judges: [{contains: "3 listings"}]}
  - {name: wrong, prompt: "bad one", judges: [{contains: "3 listings"}]}
  - {name: crash, prompt: "crash now", judges: [{contains: "3 listings"}]}
  - {name: llm-only, prompt: "good again", judges: [{correctness: {reference: "3 listings"}}]}
  - {name: both, prompt: "good and judged", judges: [{contains: "3 listings"}, {correctness: {reference: "3"}}]}
"""


def test_a_run_with_errors_retries_and_a_skipped_tier_tallies_what_the_store_reads_back(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    (tmp_path / "suite.yaml").write_text(SUITE, encoding="utf-8")
    url = f"sqlite:///{tmp_path / 'store.db'}"
    tallies: list[LiveTally] = []

    def tallying(_planned: PlannedSuite) -> LiveTally:
        tallies.append(LiveTally())
        return tallies[-1]

    with prepare(RunRequest(suites=(tmp_path / "suite.yaml",), store=url, concurrency=3)) as prepared:
        [result] = prepared.run(tallying=tallying)
    [tally] = tallies

    with open_store(url) as store:
        read_back = report_from_store(store, result.run_id)
        records = list(read_back.records)
        expected = (read_back.totals, [case.name for case in read_back.failing_first()])
        live = tally.result(read_back, read_back.records)

    assert {r.status for r in records} >= {Status.PASS, Status.FAIL, Status.ERROR}
    assert read_back.totals.skipped_tiers  # no judge model: the LLM tier was left out
    assert read_back.totals.calls["agent"]["retries"] >= 1
    assert tally.cases == len(records) == 6 and tally.missed == 0
    assert live is not None
    totals, ranks = live
    assert totals == expected[0]
    assert sorted(range(len(ranks)), key=lambda i: ranks[i]) == [
        [r.case for r in records].index(name) for name in expected[1]
    ]
