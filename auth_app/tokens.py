"""API tokens: minting, hashing and lookup. The only module that knows the token format."""
import copy
import datetime
import hashlib
import secrets
import threading

from django.db import transaction
from django.utils import timezone

from audit_app.actors import Actor
from audit_app.log import record
from auth_app import store
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
        token = store.token_inserted(user=user, name=name, prefix=secret[:10], digest=_digest(secret),
                                     expires=expires)
        _record_token(token, "token.created", actor, expires=expires.isoformat() if expires else None)
    return token, secret


def _record_token(token: ApiToken, action: str, actor: Actor | None, **details) -> None:
    record(action=action, actor=actor, object_type="token", object_id=token.pk,
           details={"owner": token.user.get_username(), "ownerId": token.user_id, "name": token.name,
                    "prefix": token.prefix, **details})


def tokens_of(*, user) -> list[ApiToken]:
    """The user's tokens, newest first, revoked ones included (they say when)."""
    return store.tokens_of(user)


def token_of(*, user, token_id: int) -> ApiToken | None:
    """One of the user's own unrevoked tokens (expired ones too: revoking one says so in the list); another
    user's, a revoked or an unknown one is None."""
    return store.unrevoked_token_of(user=user, token_id=token_id)


def tokens_revoke_all(*, user, actor: Actor | None = None) -> int:
    """Revoke every token of the user (a password change that asks for it); their connections close."""
    from agentserver.events import publisher as events

    with transaction.atomic():
        tokens = store.unrevoked_tokens_of(user)
        token_ids = [token.id for token in tokens]
        store.tokens_revoked(token_ids, at=timezone.now())
        for token in tokens:
            _record_token(token, "token.revoked", actor, reason="all of the person's tokens")
    for token_id in token_ids:
        transaction.on_commit(lambda token_id=token_id: events.revoke_token(token_id))
    return len(token_ids)


def token_revoke(*, token: ApiToken, actor: Actor | None = None) -> None:
    from agentserver.events import publisher as events

    token.revoked = timezone.now()
    with transaction.atomic():
        store.token_saved(token, fields=["revoked"])
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


def _still_valid(token: ApiToken) -> list[str] | None:
    """The user's roots if the token is still good and its user unchanged, else None."""
    user = token.user
    rows = store.standing_token_user_and_roots(token.pk)
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
    token = store.standing_token(digest)
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
        store.token_used(token.pk, at=now)
        token.last_used = now


def live_token_ids(token_ids: set[int]) -> set[int]:
    """Those of `token_ids` that still stand: not revoked or expired, their user active (for open connections)."""
    return store.standing_token_ids(token_ids)


def token_lookup_for_user(username: str, secret: str) -> ApiToken | None:
    token = token_lookup(secret)
    if token is None or token.user.get_username() != username:
        return None
    return token


def roots_of(user) -> list[str]:
    """The user's roots, default first. Plain SQL: it runs on every request, always fresh (roots edited by
    `manage.py roots`, the admin or another worker count at once), and the ORM's compilation was most of
    its cost."""
    return store.root_paths(user.pk)


@transaction.atomic
def roots_add(*, user, path: str) -> AllowedRoot:
    import os

    return store.root_added(user=user, path=os.path.realpath(path))


def roots_remove(*, user, path: str) -> int:
    import os

    return store.roots_removed(user=user, paths={path, os.path.realpath(path)})
