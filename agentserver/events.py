"""The one way an event leaves a service. (Interface; the transport lives in agentserver/bus.py.)

publish(type, properties, owner_id=…, directory=…) is called from services; it fires after the
surrounding transaction commits, is written to the durable event log, and fans out to the SSE streams
of every worker. publish_delta() is the fast path for token deltas: not logged, published at once."""
from __future__ import annotations


def publish(type: str, properties: dict, *, owner_id: int, directory: str | None = None,
            workspace_id: str | None = None, project_id: str | None = None) -> None:
    return None  # placeholder until the bus lands


def publish_context(type: str, properties: dict, context) -> None:
    publish(type, properties, owner_id=context.user.pk, directory=context.directory,
            workspace_id=context.workspace_id, project_id=context.project_id)


async def publish_delta(type: str, properties: dict, *, owner_id: int, directory: str | None = None,
                        workspace_id: str | None = None, project_id: str | None = None) -> None:
    return None  # placeholder until the bus lands


def revoke_token(token_id: int) -> None:
    """Close the open streams authenticated with this token."""
    return None  # placeholder until the bus lands
