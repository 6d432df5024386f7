"""Clarifying questions in a conversation: who decides one was asked, and who answers it.

With a judge model, the model-backed ``jurybox.llm.clarification`` judge
decides (falling back to the offline heuristic when it cannot), and the model
writes an answer once the case's scripted replies are used up. Without one,
``jurybox.agents``' offline heuristic decides and only scripted replies are sent.
"""

from __future__ import annotations

from typing import Any

from jurybox.agents import ClarificationDetector, FollowUpWriter, heuristic_is_clarification
from jurybox.core import Context, Status
from jurybox.llm import Template, clarification
from jurybox.models import GenerateRequest, as_judge_model

FOLLOW_UP = Template(
    system=(
        "You play the user in a conversation with an assistant. The assistant asked you a clarifying question. "
        "Answer it in one or two plain sentences, consistent with your original request; pick the most natural "
        "option when the request does not say. Reply with the answer only."
    ),
    user="Your original request:\n{{input}}\n\nThe conversation so far:\n{{messages}}\n\n"
    "The assistant's question:\n{{output}}\n\nYour answer:",
)


def clarification_detector(model: Any) -> ClarificationDetector | None:
    """The model-backed detector when a judge model is configured; None means the agents' heuristic."""
    if model is None:
        return None
    judge = clarification(model=model)

    async def is_clarification(context: Context) -> bool:
        verdict = await judge(context)
        if verdict.status.decided:
            return verdict.status is Status.PASS
        # The model could not say: the heuristic decides rather than guessing either way.
        return await heuristic_is_clarification(context)

    return is_clarification


def follow_up_writer(model: Any) -> FollowUpWriter | None:
    """A writer that answers the agent's question as the user would, or None without a judge model."""
    if model is None:
        return None
    writer = as_judge_model(model)

    async def write(question: str, context: Context) -> str:
        messages = FOLLOW_UP.render(context.replace(output=question), {})
        response = await writer.complete(GenerateRequest(tuple(messages), temperature=0.0))
        answer = str(response.text).strip()
        if not answer:
            raise ValueError(f"the judge model wrote an empty answer to the agent's question {question!r}")
        return answer

    return write
