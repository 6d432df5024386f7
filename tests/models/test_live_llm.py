"""Real providers, for a person with keys: pytest --jurybox-live -m live_llm tests/models.

Skipped by default: the jurybox pytest plugin skips ``live_llm`` tests unless
``--jurybox-live`` is given, and each provider here also needs its key (or, for
Ollama, OLLAMA_HOST pointing at a running server). The model can be changed with
JURYBOX_LIVE_<PROVIDER>_MODEL.
"""

from __future__ import annotations

import json
import os

import pytest

from jurybox.models import get_model

pytestmark = pytest.mark.live_llm

LIVE = {
    "openai": ("OPENAI_API_KEY", "gpt-4o-mini"),
    "anthropic": ("ANTHROPIC_API_KEY", "claude-haiku-4-5"),
    "ollama": ("OLLAMA_HOST", "llama3.1"),
}
SCHEMA = {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}


@pytest.fixture(params=sorted(LIVE))
def live_spec(request: pytest.FixtureRequest) -> str:
    provider = request.param
    variable, default = LIVE[provider]
    if not os.environ.get(variable):
        pytest.skip(f"{variable} is not set")
    return f"{provider}:{os.environ.get(f'JURYBOX_LIVE_{provider.upper()}_MODEL', default)}"


async def test_live_text_and_structured_reply(live_spec: str) -> None:
    model = get_model(live_spec, cache=False, max_retries=2)
    text = await model.generate([{"role": "user", "content": "Reply with the single word: pong"}], max_tokens=20)
    assert "pong" in text.text.lower()
    assert text.usage.input_tokens and text.usage.output_tokens
    structured = await model.generate(
        [{"role": "user", "content": "What is 6 times 7? Answer in JSON."}], json_schema=SCHEMA, max_tokens=100
    )
    assert json.loads(structured.text)["answer"] == 42
