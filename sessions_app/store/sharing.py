"""Self-hosted sharing: a session gets an unguessable public URL on this server (opencode shares to its
own cloud instead). The page and its JSON show the conversation with secrets redacted; unshare or delete
makes the URL a 404 at once because the page looks the Share row up on every request."""
from __future__ import annotations

import logging
import re
import secrets

from django.conf import settings
from django.db import IntegrityError, transaction

from agentserver.errors import Forbidden, NotFound, PolicyError
from audit_app.log import record
from policy_app.selectors import policy_for_user_id
from sessions_app.models import Message, Part, Session, Share
from sessions_app.store.messages import publish_for
from sessions_app.wire import session_event

log = logging.getLogger(__name__)

REDACTED = "[REDACTED]"


def share_config(session: Session, context=None) -> str | None:
    """The `share` key of the session's effective config ("manual" | "auto" | "disabled"); unreadable config
    never blocks sharing."""
    try:
        from projects_app.contexts import context_for_directory
        from projects_app.config import config_setting

        if context is None:
            context = context_for_directory(session.owner, session.directory, workspace_id=session.workspace_id)
        value = config_setting(context, "share")
    except Exception:  # noqa: BLE001 — a moved directory or broken config file must not break unshare/share
        log.warning("could not read config for session %s", session.id, exc_info=True)
        return None
    return value if isinstance(value, str) else None


def share_base_url(request_base: str | None) -> str:
    return (settings.PUBLIC_URL or request_base or "").rstrip("/")


def session_share(*, session: Session, base_url: str | None, context=None) -> Session:
    sharing = policy_for_user_id(session.owner_id).sharing()
    if sharing is not None and sharing.value is False:
        raise PolicyError(f"Sharing sessions is not allowed by the {sharing.by}", policy=sharing.by, field="share")
    if share_config(session, context) == "disabled":
        raise Forbidden('Sharing is disabled by config ("share": "disabled")')
    if not Share.objects.filter(session=session).exists():
        slug = secrets.token_urlsafe(18)
        try:
            with transaction.atomic():
                Share.objects.create(session=session, slug=slug, secret=secrets.token_urlsafe(32),
                                     url=f"{share_base_url(base_url)}/share/{slug}")
                record(action="session.shared", object_type="session", object_id=session.id, session_id=session.id,
                       details={"slug": slug})
        except IntegrityError:
            pass  # a concurrent share of the same session won; its URL stands
    return _refreshed(session)


def session_unshare(*, session: Session) -> Session:
    with transaction.atomic():
        removed, _ = Share.objects.filter(session=session).delete()
        if removed:
            record(action="session.unshared", object_type="session", object_id=session.id, session_id=session.id)
    return _refreshed(session)


def _refreshed(session: Session) -> Session:
    fresh = Session.objects.select_related("share").get(pk=session.pk)
    publish_for(fresh, "session.updated", session_event(fresh))
    return fresh


# ---- the public page --------------------------------------------------------------------------

_R = REDACTED
# (pattern, replacement): key material first, then header values, then token shapes, then `KEY=value`.
_SECRET_PATTERNS: list[tuple[re.Pattern, str]] = [
    (re.compile(r"-----BEGIN [A-Z0-9 ]+-----.*?(?:-----END [A-Z0-9 ]+-----|\Z)", re.S), _R),
    (re.compile(r"(?i)\b((?:proxy-)?authorization)(\s*[:=]\s*)[^\r\n\"']+"), rf"\1\2{_R}"),
    (re.compile(r"(?i)\b(bearer|basic|token)(\s+)[A-Za-z0-9._~+/=-]{12,}"), rf"\1\2{_R}"),
    (re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_-]{16,}"), _R),                       # OpenAI/Anthropic/Stripe keys
    (re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}"), _R),   # GitHub tokens
    (re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"), _R),                         # Slack tokens
    (re.compile(r"\bAKIA[0-9A-Z]{16}\b"), _R),                                   # AWS access key ids
    (re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"), _R),                              # Google API keys
    (re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"), _R),  # JWTs
    (re.compile(r"(?i)\b(\w*(?:api[_-]?key|secret|token|password|passwd)\w*[\"']?)(\s*[=:]\s*)([\"']?)[^\s\"',;]{6,}"),
     rf"\1\2\3{_R}"),
]


def redact_text(text: str) -> str:
    for pattern, replacement in _SECRET_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def redact(value):
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, list):
        return [redact(v) for v in value]
    if isinstance(value, dict):
        return {k: redact(v) for k, v in value.items()}
    return value


def shared_session(*, slug: str) -> Session:
    share = Share.objects.select_related("session").filter(slug=slug).first() if isinstance(slug, str) else None
    if share is None:
        raise NotFound("Share not found")
    return share.session


def share_document(*, session: Session) -> dict:
    """What the public page shows: the conversation, redacted; never the directory or the share secret."""
    messages = list(Message.objects.filter(session=session).order_by("id"))
    parts: dict[str, list[dict]] = {m.id: [] for m in messages}
    for part in Part.objects.filter(session=session).order_by("message_id", "id"):
        if part.message_id in parts:
            parts[part.message_id].append(part.data)
    info = {
        "id": session.id, "slug": session.slug, "title": session.title, "version": session.version,
        "time": {"created": session.time_created, "updated": session.time_updated},
        "cost": session.cost, "tokens": session.tokens,
    }
    if session.summary is not None:
        info["summary"] = session.summary
    return redact({
        "session": info,
        "messages": [{"info": _public_info(m.info), "parts": parts[m.id]} for m in messages],
    })


def _public_info(info: dict) -> dict:
    # The assistant's path {cwd, root} names the owner's home directory; the page has no use for it.
    return {k: v for k, v in info.items() if k != "path" and not k.startswith("_")}
