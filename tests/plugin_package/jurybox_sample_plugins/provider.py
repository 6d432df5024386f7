"""The ``stubwire`` provider's models: the OpenAI wire protocol, under another name, key and server variable."""

from __future__ import annotations

from jurybox.models import OpenAIModel


class StubWireModel(OpenAIModel):
    """``stubwire:<model>``: an OpenAI-compatible server at ``$JURYBOX_SAMPLE_BASE_URL``."""

    provider = "stubwire"
    default_base_url = "http://127.0.0.1:9/v1"
