"""API tokens: minting, hashing and lookup. The only module that knows the token format."""
import copy
import datetime
import hashlib
import secrets
import threading

from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from audit_app.actors import Actor
from audit_app.log import record
from auth_app.models import AllowedRoot, ApiToken

TOKEN_PREFIX = "as_"
# last_used is a hint for the admin, not an audit log: one write a minute per token is plenty.
LAST_USED_RESOLUTION_SECONDS = 60


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def token_create(*, user, name: str = "default", lifetime: datetime.timedelta | None = None,
                 actor: Actor | None = None) -> tuple[ApiToken, str]:
    """Returns the stored token and its secret; the secret cannot be recovered afterwards. `lifetime`: the
    token expires that long from now (None: never). `actor`: who asked (default: the request's, audit_app)."""
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    expires = timezone.now() + lifetime if lifetime is not None else None
    with transaction.atomic():
        token = ApiToken.objects.create(user=user, name=name, prefix=secret[:10], digest=_digest(secret),
                                        expires=expires)
        _record_token(token, "token.created", actor, expires=expires.isoformat() if expires else None)
    return token, secret


def _record_token(token: ApiToken, action: str, actor: Actor | None, **details) -> None:
    record(action=action, actor=actor, object_type="token", object_id=token.pk,
           details={"owner": token.user.get_username(), "ownerId": token.user_id, "name": token.name,
                    "prefix": token.prefix, **details})


def _standing() -> Q:
    """Tokens that authenticate: not revoked, not expired."""
    return Q(revoked__isnull=True) & (Q(expires__isnull=True) | Q(expires__gt=timezone.now()))


def tokens_of(*, user) -> list[ApiToken]:
    """The user's tokens, newest first, revoked ones included (they say when)."""
    return list(ApiToken.objects.filter(user=user).order_by("-created", "-id"))


def token_of(*, user, token_id: int) -> ApiToken | None:
    """One of the user's own unrevoked tokens (expired ones too: revoking one says so in the list); another
    user's, a revoked or an unknown one is None."""
    return ApiToken.objects.filter(user=user, pk=token_id, revoked__isnull=True).first()


def tokens_revoke_all(*, user, actor: Actor | None = None) -> int:
    """Revoke every token of the user (a password change that asks for it); their connections close."""
    from agentserver.events import publisher as events

    with transaction.atomic():
        tokens = list(ApiToken.objects.select_related("user").filter(user=user, revoked__isnull=True))
        token_ids = [token.id for token in tokens]
        ApiToken.objects.filter(id__in=token_ids).update(revoked=timezone.now())
        for token in tokens:
            _record_token(token, "token.revoked", actor, reason="all of the person's tokens")
    for token_id in token_ids:
        transaction.on_commit(lambda token_id=token_id: events.revoke_token(token_id))
    return len(token_ids)


def token_revoke(*, token: ApiToken, actor: Actor | None = None) -> None:
    from agentserver.events import publisher as events

    token.revoked = timezone.now()
    with transaction.atomic():
        token.save(update_fields=["revoked"])
        _record_token(token, "token.revoked", actor)
    # Open event streams authenticated with this token close on the next tick.
    transaction.on_commit(lambda: events.revoke_token(token.id))


# Every request authenticates, so a token seen before is not loaded again: the warm path is one primary-key
# query, written in SQL (compiling the ORM query cost more than running it), that re-reads what may change
# behind this process's back (revocation, expiry, deactivation, a renamed user, staff flags) from the database
# itself. A revocation by any route (service, admin, another worker, a shell) takes effect on the next request.
_WARM_CACHE_MAX = 10_000
_warm: dict[str, ApiToken] = {}
_warm_lock = threading.Lock()


def _warm_check_sql() -> str:
    """The user's flags, and the user's roots in order (a row each; one row with no path when none)."""
    user_table = connection.ops.quote_name(get_user_model()._meta.db_table)
    token_table = connection.ops.quote_name(ApiToken._meta.db_table)
    root_table = connection.ops.quote_name(AllowedRoot._meta.db_table)
    return (f"SELECT u.is_active, u.username, u.is_staff, u.is_superuser, r.path FROM {token_table} t "
            f"JOIN {user_table} u ON u.id = t.user_id LEFT JOIN {root_table} r ON r.user_id = u.id "
            f"WHERE t.id = %s AND t.revoked IS NULL AND (t.expires IS NULL OR t.expires > %s) "
            f"ORDER BY r.position, r.id")


def _still_valid(token: ApiToken) -> list[str] | None:
    """The user's roots if the token is still good and its user unchanged, else None."""
    user = token.user
    with connection.cursor() as cursor:
        cursor.execute(_warm_check_sql(), [token.pk, connection.ops.adapt_datetimefield_value(timezone.now())])
        rows = cursor.fetchall()
    if not rows:
        return None
    active, username, staff, superuser, _ = rows[0]  # SQLite answers booleans as 0/1
    if not active or (username, bool(staff), bool(superuser)) != (
            user.get_username(), user.is_staff, user.is_superuser):
        return None
    return [path for *_, path in rows if path is not None]


def _private_copy(token: ApiToken, roots: list[str]) -> ApiToken:
    """Requests run side by side: each gets its own token and user instances, never the cached ones. The
    copy carries the user's roots as read with these credentials (`roots`), so that resolving this request's
    context needs no second query; anything later (an agent runner, a PTY) reads roots afresh."""
    mine = copy.copy(token)
    mine.user = copy.copy(token.user)
    mine.roots = roots
    return mine


def token_lookup(secret: str) -> ApiToken | None:
    if not secret:
        return None
    digest = _digest(secret)
    cached = _warm.get(digest)
    if cached is not None:
        roots = _still_valid(cached)
        if roots is not None:
            _touch(cached)
            return _private_copy(cached, roots)
        with _warm_lock:
            _warm.pop(digest, None)
    token = ApiToken.objects.select_related("user").filter(_standing(), digest=digest).first()
    if token is None or not token.user.is_active:
        return None
    _touch(token)
    with _warm_lock:
        if len(_warm) >= _WARM_CACHE_MAX:
            _warm.clear()
        _warm[digest] = token
    return _private_copy(token, roots_of(token.user))


def _touch(token: ApiToken) -> None:
    now = timezone.now()
    if token.last_used is None or (now - token.last_used).total_seconds() >= LAST_USED_RESOLUTION_SECONDS:
        ApiToken.objects.filter(pk=token.pk).update(last_used=now)
        token.last_used = now


def live_token_ids(token_ids: set[int]) -> set[int]:
    """Those of `token_ids` that still stand: not revoked or expired, their user active (for open connections)."""
    return set(ApiToken.objects.filter(_standing(), id__in=token_ids, user__is_active=True)
               .values_list("id", flat=True))


def token_lookup_for_user(username: str, secret: str) -> ApiToken | None:
    token = token_lookup(secret)
    if token is None or token.user.get_username() != username:
        return None
    return token


def roots_of(user) -> list[str]:
    """The user's roots, default first. Plain SQL: it runs on every request, always fresh (roots edited by
    `manage.py roots`, the admin or another worker count at once), and the ORM's compilation was most of
    its cost."""
    table = connection.ops.quote_name(AllowedRoot._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT path FROM {table} WHERE user_id = %s ORDER BY position, id", [user.pk])
        return [path for (path,) in cursor.fetchall()]


@transaction.atomic
def roots_add(*, user, path: str) -> AllowedRoot:
    import os

    real = os.path.realpath(path)
    last = AllowedRoot.objects.filter(user=user).order_by("-position").first()
    root, _ = AllowedRoot.objects.get_or_create(
        user=user, path=real, defaults={"position": (last.position + 1) if last else 0}
    )
    return root


def roots_remove(*, user, path: str) -> int:
    import os

    deleted, _ = AllowedRoot.objects.filter(user=user, path__in={path, os.path.realpath(path)}).delete()
    return deleted
