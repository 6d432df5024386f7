"""The prompts of the built-in judges (docs/llm-judges.md shows each one).

``{{name}}`` placeholders holding case text (input, output, reference, results,
sources) become data blocks; the system message rule that such text is data,
never instructions, is appended by Template.render.
"""

from __future__ import annotations

from jurybox.llm._template import Template

SYSTEM = "You are a careful, impartial evaluator of AI system outputs. You follow the reply format exactly."

CORRECTNESS = Template(
    system=SYSTEM,
    user="""Judge whether the RESPONSE answers the QUESTION correctly, using the REFERENCE answer as ground truth.

QUESTION:
{{input}}

REFERENCE answer:
{{reference}}

RESPONSE to grade:
{{output}}

Compare the facts and conclusions of the response with the reference. Wording, length and style do not
matter; missing key facts, wrong facts and contradictions do. Extra correct detail is fine.

Score from 0.0 (wrong or contradicts the reference) to 1.0 (every key fact of the reference is present
and nothing contradicts it); partially correct answers score in between.

Reply with only a JSON object:
{"score": <0.0-1.0>, "reasoning": "<why>", "issues": ["<error>", ...], "strengths": ["<correct point>", ...]}""",
)

RELEVANCE = Template(
    system=SYSTEM,
    trusted=frozenset({"criteria", "leniency", "shown"}),
    user="""Decide whether the RESULTS are relevant to the QUERY.

QUERY:
{{query}}

Relevance criteria: {{criteria}}

RESULTS ({{shown}}):
{{results}}

Count the results as relevant when at least {{leniency}} of them are relevant to the query under the
criteria. A result is relevant when it helps answer the query; being on the same broad subject is not enough.

Reply with only a JSON object:
{"relevant": true|false, "confidence": <0.0-1.0>, "reasoning": "<which results are relevant and why>"}""",
)

RANKING = Template(
    system=SYSTEM,
    trusted=frozenset({"criteria", "shown"}),
    user="""Judge how well the RESULTS are ranked for the QUERY: the most relevant results should come first.

QUERY:
{{query}}

Relevance criteria: {{criteria}}

RESULTS in ranked order, first = top ({{shown}}):
{{results}}

Score from 0.0 (the order is useless: relevant results are buried or missing) to 1.0 (the best results
come first and the order is as good as possible). Name misplaced results in the issues.

Reply with only a JSON object:
{"score": <0.0-1.0>, "reasoning": "<why>", "issues": ["<misplaced result>", ...], "strengths": ["..."]}""",
)

COVERAGE = Template(
    system=SYSTEM,
    trusted=frozenset({"topics"}),
    user="""Check which of the TOPICS the RESPONSE covers.

The request the response answers:
{{input}}

RESPONSE:
{{output}}

TOPICS, one per line:
{{topics}}

A topic is covered when the response addresses it with substance; a passing mention of the word is not
coverage. Judge every topic listed, using its exact text.

Reply with only a JSON object:
{"topics": [{"topic": "<topic exactly as listed>", "covered": true|false, "evidence": "<quote or why missing>"}, ...],
 "reasoning": "<summary>"}""",
)

RUBRIC = Template(
    system=SYSTEM,
    trusted=frozenset({"criteria", "harshness"}),
    user="""Grade the RESPONSE to the REQUEST against each rubric criterion.

REQUEST:
{{input}}

RESPONSE:
{{output}}

Rubric criteria (name: what it means):
{{criteria}}

Score each criterion from 0 to 100. {{harshness}}

Reply with only a JSON object:
{"scores": {"<criterion name>": <0-100>, ...}, "reasoning": "<why>", "issues": ["<problem>", ...],
 "strengths": ["<strength>", ...]}""",
)

HARSH = (
    "Be harsh: start from 0 and award points only for what is clearly and fully achieved; any error, "
    "omission or padding costs points, and 90+ is reserved for flawless work."
)
FAIR = "Be fair and calibrated: 50 is mediocre, 70 is good with minor flaws, 90+ is excellent."


def guided(scoring_guide: str) -> str:
    """The calibration line of a rubric prompt from the suite author's own scoring guide."""
    return f"Scoring guide: {scoring_guide.strip()}\nScores are 0 to 100: where the guide uses fractions, 0.8 means 80."


def with_system(template: Template, instructions: str) -> Template:
    """``template`` with the suite author's instructions as its system prompt."""
    return Template(system=instructions.strip(), user=template.user, trusted=template.trusted)


FAITHFULNESS = Template(
    system=SYSTEM,
    user="""Check whether the RESPONSE is faithful to the SOURCES: every factual claim must be supported by them.

The request the response answers:
{{input}}

SOURCES:
{{sources}}

RESPONSE:
{{output}}

List every factual claim the response makes (split compound sentences into single claims). For each one,
decide whether the sources support it; general knowledge does not count, only the sources. Give the number
of the supporting source. A claim the sources do not state, or contradict, is unsupported (a hallucination).

Reply with only a JSON object:
{"claims": [{"claim": "<claim>", "supported": true|false, "source": <source number or null>}, ...],
 "reasoning": "<summary>"}""",
)

PAIRWISE = Template(
    system=SYSTEM,
    trusted=frozenset({"criteria"}),
    user="""Compare two responses to the same request and decide which one is better.

REQUEST:
{{input}}

RESPONSE A:
{{response_a}}

RESPONSE B:
{{response_b}}

Criteria: {{criteria}}

Do not let the order of the responses, their length or the names of assistants influence you. Explain your
comparison briefly, then give your final verdict strictly in this format: "[[A]]" if A is better, "[[B]]"
if B is better, "[[C]]" for a tie.""",
)

CLARIFICATION = Template(
    system=SYSTEM,
    user="""Decide whether the assistant's REPLY asks the user a question instead of answering the MESSAGE.

MESSAGE from the user:
{{input}}

REPLY from the assistant:
{{output}}

"asks_question" is true when the reply mainly requests more information, a choice or a confirmation from the
user before it will answer (a clarifying question). It is false when the reply answers or does the task,
even if it ends with an offer such as "Anything else?".

Reply with only a JSON object:
{"asks_question": true|false, "confidence": <0.0-1.0>, "reasoning": "<why>"}""",
)
