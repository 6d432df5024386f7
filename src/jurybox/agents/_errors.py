"""Why an agent under test could not be run: a bad spec, a crash, garbage, or a hang."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jurybox.agents._conversation import RoundOutcome


class TargetConfigError(ValueError):
    """The suite's ``agent:`` mapping is wrong; the message names the field and what is valid."""


class AgentError(Exception):
    """The agent crashed, returned something that is not a reply, or its endpoint failed.

    Attributes:
        round_index: The round (0-based) the agent failed in, when it failed
            inside a conversation.
        outcomes: The rounds that finished before the failure, so a runner can
            still report them.
    """

    def __init__(
        self,
        message: str,
        *,
        round_index: int | None = None,
        outcomes: Sequence[RoundOutcome] = (),
    ) -> None:
        super().__init__(message)
        self.round_index = round_index
        self.outcomes: tuple[RoundOutcome, ...] = tuple(outcomes)

    @property
    def reason(self) -> str:
        """The message alone, for a report's reasoning column."""
        return str(self.args[0]) if self.args else type(self).__name__


class AgentTimeout(AgentError, TimeoutError):  # noqa: N818 (the public name is fixed)
    """The agent did not answer within the per-call timeout."""
