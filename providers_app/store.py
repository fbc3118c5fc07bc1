"""providers_app's rows (MCP servers added at runtime, OAuth sign-ins in progress) and the owner an MCP
connection runs for, and the only code that touches them. Auth accounts are auth_app's (auth_app.accounts)."""
from __future__ import annotations

from django.contrib.auth import get_user_model

from agentserver.clock import now_ms
from agentserver.db import sql
from providers_app.models import McpServer, OAuthPending

# ---- runtime MCP servers -----------------------------------------------------------------------------------

# Read for every turn (its tools): compiled once (agentserver.db.sql.Query).
_RUNTIME_ROWS = sql.Query(
    lambda owner_id, project_id: McpServer.objects.filter(owner_id=owner_id, project_id=project_id).order_by("name"))


def runtime_servers_of(owner_id: int, project_id: str) -> list[McpServer]:
    """The owner's runtime servers of the project, by name."""
    return _RUNTIME_ROWS.all(owner_id, project_id)


def runtime_server_stored(*, user, project_id: str, name: str, ciphertext: str) -> None:
    """Add the server, or replace the stored config of the one of that name."""
    McpServer.objects.update_or_create(owner=user, project_id=project_id, name=name,
                                       defaults={"ciphertext": ciphertext})


def runtime_server_locked(*, user, project_id: str, name: str) -> McpServer:
    return McpServer.objects.select_for_update().get(owner=user, project_id=project_id, name=name)


def runtime_server_saved(row: McpServer, *, fields: list[str]) -> None:
    row.save(update_fields=fields)


# ---- OAuth sign-ins in progress ------------------------------------------------------------------------------


def sign_in_started(*, user, provider_id: str, method: int, state: str, secret: str) -> None:
    """The user's sign-in for `provider_id` in progress (replacing an earlier one), made now."""
    OAuthPending.objects.update_or_create(
        owner=user, provider_id=provider_id,
        defaults={"method": method, "state": state, "secret": secret, "time_created": now_ms()},
    )


def sign_in_of(*, user, provider_id: str) -> OAuthPending | None:
    return OAuthPending.objects.filter(owner=user, provider_id=provider_id).first()


def sign_in_get(*, user, provider_id: str) -> OAuthPending:
    """The sign-in; OAuthPending.DoesNotExist when there is none."""
    return OAuthPending.objects.get(owner=user, provider_id=provider_id)


def sign_in_by_state(*, user, state: str) -> OAuthPending | None:
    return OAuthPending.objects.filter(owner=user, state=state).first()


def sign_in_ended(pending: OAuthPending) -> None:
    pending.delete()


def sign_ins_dropped(*, user, provider_id: str) -> None:
    OAuthPending.objects.filter(owner=user, provider_id=provider_id).delete()


# ---- the owner of an MCP connection ----------------------------------------------------------------------------


def user_by_id(user_id: int):
    return get_user_model().objects.get(pk=user_id)
