"""A person's own commands (session.shell, a terminal of /pty) under the `bash` ceiling.

A `deny` ceiling on `bash` refuses them: an organization that forbids the agent to run commands on its
server does not mean people to run the same commands themselves through the same server. An `ask` ceiling
lets them run: it asks a person to approve each command, and a command the person typed is already theirs.
The refusal is recorded in the audit log under the action the command would have been recorded as, with
outcome `refused` (docs/policy.md)."""
from __future__ import annotations

from agentserver.errors import PolicyError
from audit_app.log import REFUSED, record
from policy_app.selectors import policy_for

PERMISSION = "bash"


def direct_command_refusal(user, what: str) -> PolicyError | None:
    """The refusal of `what` ("session.shell", "a terminal") for this person, None when the policy allows it."""
    decided = policy_for(user).ceiling(PERMISSION)
    if decided is None or decided.value != "deny":
        return None
    return PolicyError(f"{what} is not allowed: the {decided.by} denies the {PERMISSION} permission",
                       policy=decided.by, field="permission_ceilings", permission=PERMISSION, ceiling="deny")


def check_direct_command(*, user, what: str, action: str, object_type: str, object_id: str = "",
                         session_id: str = "", details: dict | None = None) -> None:
    """Raise the refusal of `what`, recorded as `action` refused, when the policy denies the person's commands."""
    refusal = direct_command_refusal(user, what)
    if refusal is None:
        return
    record(action=action, object_type=object_type, object_id=object_id, session_id=session_id, outcome=REFUSED,
           details={**(details or {}), "policy": refusal.data["policy"]})
    raise refusal
