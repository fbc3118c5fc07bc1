"""API tokens: minting, hashing and lookup. The only module that knows the token format."""
import hashlib
import secrets

from django.db import transaction
from django.utils import timezone

from auth_app.models import AllowedRoot, ApiToken

TOKEN_PREFIX = "as_"
# last_used is a hint for the admin, not an audit log: one write a minute per token is plenty.
LAST_USED_RESOLUTION_SECONDS = 60


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def token_create(*, user, name: str = "default") -> tuple[ApiToken, str]:
    """Returns the stored token and its secret; the secret cannot be recovered afterwards."""
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(user=user, name=name, prefix=secret[:10], digest=_digest(secret))
    return token, secret


def token_revoke(*, token: ApiToken) -> None:
    from agentserver import events

    token.revoked = timezone.now()
    token.save(update_fields=["revoked"])
    # Open event streams authenticated with this token close on the next tick.
    transaction.on_commit(lambda: events.revoke_token(token.id))


def token_lookup(secret: str) -> ApiToken | None:
    if not secret:
        return None
    token = ApiToken.objects.select_related("user").filter(digest=_digest(secret), revoked__isnull=True).first()
    if token is None or not token.user.is_active:
        return None
    _touch(token)
    return token


def _touch(token: ApiToken) -> None:
    now = timezone.now()
    if token.last_used is None or (now - token.last_used).total_seconds() >= LAST_USED_RESOLUTION_SECONDS:
        ApiToken.objects.filter(pk=token.pk).update(last_used=now)
        token.last_used = now


def token_lookup_for_user(username: str, secret: str) -> ApiToken | None:
    token = token_lookup(secret)
    if token is None or token.user.get_username() != username:
        return None
    return token


def roots_of(user) -> list[str]:
    return [root.path for root in AllowedRoot.objects.filter(user=user)]


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
