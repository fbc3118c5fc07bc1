"""How a tool call fails without failing the loop: the message becomes the tool part's `state.error` text.
Apart from the tools themselves (runtime/tools/base.py re-exports them) so that asking the user
(runtime/asking.py) can raise them without depending on the tools."""
from __future__ import annotations


class ToolError(Exception):
    """The message becomes the tool part's `state.error` text; the loop goes on."""


class PermissionRejected(ToolError):
    """The user said no. Without feedback the agent loop halts; with feedback (opencode's CorrectedError)
    the error text carries it and the loop continues."""

    def __init__(self, message: str, *, feedback: str | None = None):
        super().__init__(message)
        self.feedback = feedback

    @property
    def halts(self) -> bool:
        return self.feedback is None


class QuestionRejected(PermissionRejected):
    """The user dismissed a question: halts the loop like a rejected permission."""
