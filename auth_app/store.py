"""auth_app's rows (auth accounts, API tokens and the addresses they were used from, allowed roots) and the
users and browser sessions authentication reads, and the only code that touches them: accounts.py, tokens.py,
token_use.py and authentication.py decide (formats, encryption, what stands) and read and write through here.
The reads every request makes are written in SQL or compiled once: compiling the ORM's cost more than running
them."""
from __future__ import annotations

import datetime

from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session as BrowserSession
from django.db import connection
from django.db.models import Q, QuerySet
from django.utils import timezone

from agentserver.clock import now_ms
from agentserver.db import sql
from auth_app.models import AllowedRoot, ApiToken, AuthAccount, TokenAddress

# ---- auth accounts ------------------------------------------------------------------------------------------

# Read for every model call (its credential) and every step (whether web search has a key): compiled once.
_ACTIVE_ACCOUNT = sql.Query(
    lambda owner_id, service_id: AuthAccount.objects.filter(owner_id=owner_id, service_id=service_id, active=True)[:1])


def active_account(owner_id: int, service_id: str) -> AuthAccount | None:
    return _ACTIVE_ACCOUNT.first(owner_id, service_id)


def accounts_of(*, user, service_id: str | None = None) -> QuerySet:
    """The user's accounts (of one service), by service then id: a lazy read."""
    accounts = AuthAccount.objects.filter(owner=user)
    if service_id:
        accounts = accounts.filter(service_id=service_id)
    return accounts.order_by("service_id", "id")


def active_account_ids(user) -> dict[str, str]:
    """{serviceID: accountID} of the user's active accounts."""
    return dict(AuthAccount.objects.filter(owner=user, active=True).values_list("service_id", "id"))


def services_with_active_account(user) -> set[str]:
    return set(AuthAccount.objects.filter(owner=user, active=True).values_list("service_id", flat=True))


def has_active_account(user, service_id: str) -> bool:
    return AuthAccount.objects.filter(owner=user, active=True, service_id=service_id).exists()


def account_of(*, user, account_id: str) -> AuthAccount | None:
    return AuthAccount.objects.filter(owner=user, id=account_id).first()


def has_active_locked(*, user, service_id: str) -> bool:
    """Whether the user has an active account for the service, its row locked (in the caller's transaction)."""
    return AuthAccount.objects.select_for_update().filter(owner=user, service_id=service_id, active=True).exists()


def active_account_locked(*, user, service_id: str) -> AuthAccount | None:
    return AuthAccount.objects.select_for_update().filter(owner=user, service_id=service_id, active=True).first()


def accounts_locked(*, user, service_id: str) -> list[AuthAccount]:
    return list(AuthAccount.objects.select_for_update().filter(owner=user, service_id=service_id))


def others_deactivated(account: AuthAccount) -> None:
    """The other active accounts of the account's owner and service made inactive."""
    AuthAccount.objects.filter(owner=account.owner, service_id=account.service_id, active=True).exclude(
        id=account.id).update(active=False, time_updated=now_ms())


def account_saved(account: AuthAccount, *, fields: list[str] | None = None) -> None:
    account.save(update_fields=fields)


def account_deleted(account: AuthAccount) -> None:
    account.delete()


def accounts_deleted(*, user, service_id: str) -> None:
    AuthAccount.objects.filter(owner=user, service_id=service_id).delete()


def all_account_ids():
    """Every account's id, streamed."""
    return AuthAccount.objects.values_list("id", flat=True).iterator()


def account_locked(account_id: str) -> AuthAccount:
    return AuthAccount.objects.select_for_update().get(id=account_id)


# ---- API tokens -----------------------------------------------------------------------------------------------


def _standing() -> Q:
    """Tokens that authenticate: not revoked, not expired."""
    return Q(revoked__isnull=True) & (Q(expires__isnull=True) | Q(expires__gt=timezone.now()))


def token_inserted(**fields) -> ApiToken:
    return ApiToken.objects.create(**fields)


def tokens_of(user) -> list[ApiToken]:
    """The user's tokens, newest first, revoked ones included."""
    return list(ApiToken.objects.filter(user=user).order_by("-created", "-id"))


def unrevoked_token_of(*, user, token_id: int) -> ApiToken | None:
    return ApiToken.objects.filter(user=user, pk=token_id, revoked__isnull=True).first()


def unrevoked_tokens_of(user) -> list[ApiToken]:
    """The user's unrevoked tokens, each with its user."""
    return list(ApiToken.objects.select_related("user").filter(user=user, revoked__isnull=True))


def tokens_revoked(token_ids: list[int], *, at: datetime.datetime) -> None:
    ApiToken.objects.filter(id__in=token_ids).update(revoked=at)


def token_saved(token: ApiToken, *, fields: list[str]) -> None:
    token.save(update_fields=fields)


def standing_token(digest: str) -> ApiToken | None:
    """The standing token of that digest, with its user."""
    return ApiToken.objects.select_related("user").filter(_standing(), digest=digest).first()


def token_used(token_id: int, *, at: datetime.datetime) -> None:
    ApiToken.objects.filter(pk=token_id).update(last_used=at)


def standing_token_ids(token_ids: set[int]) -> set[int]:
    """Those of `token_ids` that stand, their user active."""
    return set(ApiToken.objects.filter(_standing(), id__in=token_ids, user__is_active=True)
               .values_list("id", flat=True))


def _warm_check_sql() -> str:
    """The user's flags, and the user's roots in order (a row each; one row with no path when none)."""
    user_table = connection.ops.quote_name(get_user_model()._meta.db_table)
    token_table = connection.ops.quote_name(ApiToken._meta.db_table)
    root_table = connection.ops.quote_name(AllowedRoot._meta.db_table)
    return (f"SELECT u.is_active, u.username, u.is_staff, u.is_superuser, r.path FROM {token_table} t "
            f"JOIN {user_table} u ON u.id = t.user_id LEFT JOIN {root_table} r ON r.user_id = u.id "
            f"WHERE t.id = %s AND t.revoked IS NULL AND (t.expires IS NULL OR t.expires > %s) "
            f"ORDER BY r.position, r.id")


def standing_token_user_and_roots(token_id: int) -> list[tuple]:
    """(is_active, username, is_staff, is_superuser, a root path or None) rows of a standing token's user, its
    roots in order; none when the token no longer stands. One primary-key query, in SQL."""
    with connection.cursor() as cursor:
        cursor.execute(_warm_check_sql(), [token_id, connection.ops.adapt_datetimefield_value(timezone.now())])
        return cursor.fetchall()


def address_known(*, token_id: int, address: str) -> bool:
    return TokenAddress.objects.filter(token_id=token_id, address=address).exists()


def address_noted(*, token_id: int, address: str) -> None:
    TokenAddress.objects.create(token_id=token_id, address=address)


# ---- allowed roots ---------------------------------------------------------------------------------------------


def root_paths(user_id: int) -> list[str]:
    """The user's roots, default first, in SQL."""
    table = connection.ops.quote_name(AllowedRoot._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT path FROM {table} WHERE user_id = %s ORDER BY position, id", [user_id])
        return [path for (path,) in cursor.fetchall()]


def root_added(*, user, path: str) -> AllowedRoot:
    """The user's root at `path`, made last when new."""
    last = AllowedRoot.objects.filter(user=user).order_by("-position").first()
    root, _ = AllowedRoot.objects.get_or_create(
        user=user, path=path, defaults={"position": (last.position + 1) if last else 0}
    )
    return root


def roots_removed(*, user, paths: set[str]) -> int:
    deleted, _ = AllowedRoot.objects.filter(user=user, path__in=paths).delete()
    return deleted


# ---- users and browser sessions --------------------------------------------------------------------------------


def active_user_ids(user_ids: set[int]) -> set:
    return set(get_user_model().objects.filter(pk__in=user_ids, is_active=True).values_list("pk", flat=True))


def active_users_by_id(user_ids: set) -> dict:
    return {user.pk: user for user in get_user_model().objects.filter(pk__in=user_ids, is_active=True)}


def unexpired_browser_sessions(session_keys: set[str]) -> list[BrowserSession]:
    return list(BrowserSession.objects.filter(session_key__in=session_keys, expire_date__gt=timezone.now()))
