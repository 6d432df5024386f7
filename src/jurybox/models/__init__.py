"""Judge models: the JudgeModel protocol, providers, FakeModel, cache, retries and cost."""

from jurybox.models._fake import FakeModel
from jurybox.models._types import ChatMessage, GenerateRequest, JudgeModel, ModelError, ModelResponse, Usage

__all__ = [
    "ChatMessage",
    "FakeModel",
    "GenerateRequest",
    "JudgeModel",
    "ModelError",
    "ModelResponse",
    "Usage",
]
