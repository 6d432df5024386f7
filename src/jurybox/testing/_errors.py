"""The errors and warnings ``expect`` raises."""

from __future__ import annotations


class JuryboxAssertionError(AssertionError):
    """A hard ``expect`` step (or a pass-rate check) did not pass; the message says which judge and why."""


class JudgeNotConfiguredError(JuryboxAssertionError):
    """A semantic step needs a judge model and none is configured; never a pass."""


class JuryboxWarning(UserWarning):
    """A soft (``warn_*``) step did not pass, outside a pytest session (inside one it goes to the summary)."""


# pytest prints an error's qualified name before its message; the public path reads shorter
# (``jurybox.testing.JuryboxAssertionError: ...``) and is where users import it from.
for _error in (JuryboxAssertionError, JudgeNotConfiguredError, JuryboxWarning):
    _error.__module__ = "jurybox.testing"
