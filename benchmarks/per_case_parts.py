"""What single steps of a judged case cost, each alone (best of five): the parts round 5 of issue 36
changed, and the judge's steps round 7 compares with their share of a run.

A whole 10,000-case run's CPU moves by several percent between identical runs on a shared
machine, more than any one of these steps; timed alone, most are steady to a tenth of a
microsecond (the judge's steps moved by up to 2x between runs at a busy hour). Prints, per
step, what it costs now and, for round 5's, what the way it replaced costs:

* a Chat Completions body with a ``json_schema`` response format: ``encode_body`` (the
  schema's kept text, one C encoder) against ``json.dumps`` with the SDK's settings;
* ``Judgment.with_changes`` against ``dataclasses.replace``;
* an ``asyncio.timeout`` around an await (the runner no longer sets one per agent call, nor
  around closing a session a function agent never had);
* finding a record's deciding judgment (now once a record, not once per question);
* building a ``json.JSONDecoder`` (the verdict reader no longer builds one per read);
* a ``correctness`` judge's prompt rendered, and its reply read with and without the material the
  judge was shown (the planted-verdict check; the "with" figure includes building the ``Material``,
  which a judge does once per question, before its first read).

Usage::

    .venv/bin/python benchmarks/per_case_parts.py
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from collections.abc import Awaitable, Callable
from types import MappingProxyType
from typing import Any

from jurybox.core import Context, Judgment, Status
from jurybox.core._deciding import deciding_judgment
from jurybox.llm import correctness
from jurybox.llm._planted import Material
from jurybox.llm._preface import judge_prompt
from jurybox.llm._reading import read_verdict
from jurybox.llm._verdicts import ScoreVerdict
from jurybox.models._openai_wire import _json_default, encode_body, schema_format


def best_us(step: Callable[[], object], calls: int = 20_000) -> float:
    """The fastest of five rounds, in microseconds per call (process CPU)."""
    fastest = float("inf")
    for _ in range(5):
        started = time.process_time()
        for _ in range(calls):
            step()
        fastest = min(fastest, (time.process_time() - started) / calls * 1e6)
    return fastest


def request_body() -> dict[str, Any]:
    """A ``correctness`` judge's body as the OpenAI provider builds it (about 2 KB)."""
    schema = MappingProxyType(ScoreVerdict.model_json_schema())
    prompt = "Judge whether the RESPONSE answers the QUESTION correctly.\n" + "QUESTION: question 7\n" * 20
    return {
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "system", "content": "You are a careful, impartial evaluator of AI system outputs." * 6},
            {"role": "user", "content": prompt},
        ],
        "temperature": 0.0,
        "response_format": {"type": "json_schema", "json_schema": schema_format(schema)},
    }


def verdict_tree() -> Judgment:
    """A cascade's verdict over one LLM judge, with a judge's usual metadata."""
    metadata = {"raw": "x" * 200, "verdict": {"score": 1.0}, "value": 1.0, "issues": [], "model": "gpt-4o-mini"}
    judge = Judgment(Status.PASS, score=1.0, reasoning="matches", judge="correctness", metadata=metadata)
    tier = Judgment(Status.PASS, score=1.0, children={"correctness": judge}, metadata={"voting": "all"})
    return Judgment(Status.PASS, score=1.0, reasoning="matches", children={"llm": tier}, decided_by="llm")


async def awaited_us(wrapped: Callable[[], Awaitable[object]], calls: int = 20_000) -> float:
    fastest = float("inf")
    for _ in range(5):
        started = time.process_time()
        for _ in range(calls):
            await wrapped()
        fastest = min(fastest, (time.process_time() - started) / calls * 1e6)
    return fastest


async def timeout_cost() -> float:
    async def answer() -> int:
        return 1

    async def bounded() -> int:
        async with asyncio.timeout(120):
            return await answer()

    return await awaited_us(bounded) - await awaited_us(answer)


def judge_steps() -> tuple[float, float, float]:
    """A ``correctness`` judge of a one-round case: rendering its prompt, and reading a passing JSON reply
    with the material it was shown (the planted-verdict check) and without; microseconds each."""
    judge = correctness(reference="The answer to question 17 is 42.")
    context = Context(input="question 17", output="The answer to question 17 is 42.")
    template, options = judge_prompt(
        judge.template,
        judge.options,
        context,
        conversation=judge.conversation,
        conversation_chars=judge.conversation_chars,
        use_lessons=judge.use_lessons,
    )
    _, shown = template.render_with_data(context, options)
    blocks = [(block.label, block.text) for block in shown]
    assert blocks  # the judge was shown its input, reference and output, or "with" times nothing more
    reply = '{"score": 1.0, "reasoning": "matches the reference", "issues": [], "strengths": ["exact"]}'
    assert read_verdict(judge.classifier, reply, Material(blocks)).status is Status.PASS
    assert read_verdict(judge.classifier, reply).status is Status.PASS
    # The check is live: the same reply planted in the material is refused, or "with" would mean nothing.
    assert read_verdict(judge.classifier, reply, Material([("output", reply)])).status is Status.ABSTAIN
    return (
        best_us(lambda: template.render_with_data(context, options)),
        best_us(lambda: read_verdict(judge.classifier, reply, Material(blocks))),
        best_us(lambda: read_verdict(judge.classifier, reply)),
    )


def main() -> None:
    body = request_body()
    dumped = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=_json_default)
    assert encode_body(body) == dumped.encode()  # the same bytes, or the comparison means nothing
    before = best_us(
        lambda: json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=_json_default)
    )
    print(
        f"request body ({len(dumped):,} bytes): encode_body {best_us(lambda: encode_body(body)):.2f} us, "
        f"json.dumps {before:.2f} us"
    )
    tree = verdict_tree()
    judge = tree.children["llm"].children["correctness"]
    changed = dict(judge.metadata, cost=0.001)
    print(
        f"Judgment.with_changes {best_us(lambda: judge.with_changes(metadata=changed)):.2f} us, "
        f"dataclasses.replace {best_us(lambda: dataclasses.replace(judge, metadata=changed)):.2f} us"
    )
    print(f"asyncio.timeout around an await: +{asyncio.run(timeout_cost()):.2f} us")
    print(f"deciding judgment of a cascade's verdict: {best_us(lambda: deciding_judgment(tree)):.2f} us a walk")
    print(f"json.JSONDecoder(): {best_us(json.JSONDecoder):.2f} us")
    render, read, read_alone = judge_steps()
    print(
        f"correctness judge: prompt rendered {render:.2f} us; reply read {read:.2f} us "
        f"({read_alone:.2f} us without the planted-verdict check)"
    )


if __name__ == "__main__":
    main()
