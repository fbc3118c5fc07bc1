"""Session lifecycle: create, update, delete (children first), fork, re-pin, the field setter the runner uses,
and the reads of sessions by id that are not the caller's (the runtime's: the single-row hot ones are
store/rows.py's)."""
from __future__ import annotations

import copy
import re
import secrets
from datetime import datetime, timezone

from django.conf import settings
from django.db import transaction

from agentserver import ids
from agentserver.context import RuntimeContext
from agentserver.db import sql
from agentserver.errors import NotFound
from agentserver.events import publisher as events
from projects_app.models import now_ms
from sessions_app.models import Message, Part, Session
from sessions_app.store.messages import publish_for
from sessions_app.store.rows import session_reload
from sessions_app.wire import public_info, session_event

_ADJECTIVES = ("brave", "calm", "clever", "cosmic", "eager", "gentle", "glowing", "happy", "jolly", "kind",
               "lucky", "mighty", "nimble", "proud", "quick", "quiet", "shiny", "silent", "stellar", "swift",
               "tidy", "witty", "bright", "bold", "misty", "sunny", "wild", "golden", "crisp", "steady")
_NOUNS = ("cabin", "canyon", "comet", "eagle", "falcon", "forest", "garden", "harbor", "island", "lagoon",
          "meadow", "moon", "nebula", "orchid", "otter", "panda", "pixel", "planet", "river", "rocket",
          "sailor", "squid", "star", "tiger", "wolf", "willow", "engine", "circuit", "beacon", "glacier")

# Fields a caller may set through session_set (the runner: agent, model, cost, tokens, summary, revert...).
SETTABLE = {"title", "agent", "model", "permission", "metadata", "summary", "revert", "cost", "tokens",
            "time_archived", "time_compacting"}


def new_slug() -> str:
    return f"{secrets.choice(_ADJECTIVES)}-{secrets.choice(_NOUNS)}"


def iso_ms(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def default_title(*, child: bool, at: int) -> str:
    return f"{'Child session' if child else 'New session'} - {iso_ms(at)}"


def session_create(*, context: RuntimeContext, parent_id: str | None = None, title: str | None = None,
                   agent: str | None = None, model: dict | None = None, permission: list | None = None,
                   metadata: dict | None = None, share_base_url: str | None = None) -> Session:
    """A new session pinned to `context`. With config `share: "auto"` a root session is shared at once
    (as opencode does); `share_base_url` is the request's base for the share URL. A parent must be one of
    the caller's sessions: a child of nothing (or of someone else's session) would be listed under no one."""
    if parent_id and not Session.objects.filter(id=parent_id, owner=context.user).exists():
        raise NotFound(f"Session not found: {parent_id}")
    if permission:
        _check_within_policy(context.user, permission)
    now = now_ms()
    session = Session(
        id=ids.descending("ses"), owner=context.user, project_id=context.project_id, directory=context.directory,
        path=context.path, workspace_id=context.workspace_id, parent_id=parent_id,
        title=title if title else default_title(child=bool(parent_id), at=now), slug=new_slug(),
        version=settings.VERSION, agent=agent, model=model, permission=permission or [], metadata=metadata or {},
        time_created=now, time_updated=now,
    )
    # Written out (agentserver.db.sql): the ORM compiled this INSERT anew on every call, a fifth of session.create.
    sql.insert(Session, [session])
    # A new session has no share yet: rendering it need not ask the database (twice: event and response).
    Session.share.related.set_cached_value(session, None)
    payload = session_event(session)
    with events.together():
        publish_for(session, "session.created", payload)
        publish_for(session, "session.updated", payload)
    if not parent_id:
        from sessions_app.store import sharing

        if sharing.share_config(session, context) == "auto":
            session = sharing.session_share(session=session, base_url=share_base_url, context=context)
    return session


def session_set(*, session: Session, touch: bool = True, **fields) -> Session:
    """Write only the given fields (never a stale copy of the others), bump time.updated, publish."""
    unknown = set(fields) - SETTABLE
    if unknown:
        raise TypeError(f"session_set cannot set {sorted(unknown)}")
    if touch:
        fields["time_updated"] = now_ms()
    if fields:
        sql.update(Session, {"id": session.pk}, fields)
    session_reload(session)
    publish_for(session, "session.updated", session_event(session))
    return session


def session_pin(*, session: Session, directory: str, workspace_id: str | None, project_id: str,
                path: str) -> Session:
    """Re-pin a session to another directory / workspace and publish session.updated."""
    with transaction.atomic():
        Session.objects.filter(pk=session.pk).update(directory=directory, workspace_id=workspace_id,
                                                     project_id=project_id, path=path, time_updated=now_ms())
    session.refresh_from_db()
    events.publish("session.updated", session_event(session), owner_id=session.owner_id,
                   directory=session.directory, workspace_id=session.workspace_id, project_id=session.project_id)
    return session


# Asked as a runner takes a session's lease and as a prompt makes a staged revert final: compiled once.
_ID = sql.Query(lambda session_id: Session.objects.filter(id=session_id).values_list("id", flat=True)[:1])
_REVERT = sql.Query(lambda session_id: Session.objects.filter(id=session_id).values_list("revert", flat=True)[:1])
_CHILD_IDS = sql.Query(lambda owner_id, parent_ids: Session.objects.filter(owner_id=owner_id, parent_id__in=parent_ids)
                       .values_list("id", flat=True))


def session_exists(session_id: str) -> bool:
    return _ID.first(session_id) is not None


def session_by_id(session_id: str) -> Session:
    """The session; Session.DoesNotExist when there is none."""
    return Session.objects.get(id=session_id)


def child_of(parent: Session, child_id: str) -> Session | None:
    """The parent's child session of that id (same owner)."""
    return Session.objects.filter(id=child_id, owner_id=parent.owner_id, parent_id=parent.id).first()


def pinned_to_workspace(*, user, workspace_id: str) -> list[Session]:
    """The user's sessions pinned to the workspace."""
    return list(Session.objects.filter(owner=user, workspace_id=workspace_id))


def session_refresh(session: Session, *, fields: list[str] | None = None) -> Session:
    """`session` (or the given fields of it) read again, in place."""
    session.refresh_from_db(fields=fields)
    return session


def session_refresh_revert(session: Session) -> Session:
    """`session.revert` read again, in place: what is staged now. Session.DoesNotExist when it is gone."""
    rows = _REVERT.all(session.pk)
    if not rows:
        raise Session.DoesNotExist(f"Session {session.pk} does not exist")
    session.revert = rows[0]
    return session


def session_update(*, session: Session, title: str | None = None, archived: int | None = None,
                   archived_given: bool = False, permission: list | None = None,
                   metadata: dict | None = None) -> Session:
    """PATCH: title, time.archived (null un-archives), permission rules, metadata; always bumps updated."""
    fields: dict = {}
    if title is not None:
        fields["title"] = title
    if archived_given:
        fields["time_archived"] = archived
    if permission is not None:
        _check_within_policy(session.owner, permission)
        fields["permission"] = permission
    if metadata is not None:
        fields["metadata"] = metadata
    return session_set(session=session, **fields)


def _check_within_policy(user, rules: list) -> None:
    """Rules looser than a ceiling of the organization's policy are refused (PolicyError), not stored."""
    from policy_app.config_layer import check_rules
    from policy_app.selectors import policy_for

    check_rules(rules, policy_for(user))


def session_add_usage(*, session_id: str, cost: float, tokens: dict) -> None:
    """Running totals on the session (written silently; session.updated follows at the end of the turn)."""
    with transaction.atomic():
        row = _USAGE_FOR_UPDATE.first(session_id)
        if row is None:
            return
        totals, total_cost = dict(row[0] or {}), float(row[1] or 0)
        for key in ("input", "output", "reasoning"):
            totals[key] = int(totals.get(key) or 0) + int(tokens.get(key) or 0)
        cache = dict(totals.get("cache") or {})
        for key in ("read", "write"):
            cache[key] = int(cache.get(key) or 0) + int((tokens.get("cache") or {}).get(key) or 0)
        totals["cache"] = cache
        sql.update(Session, {"id": session_id}, {"tokens": totals, "cost": total_cost + cost})


# After every step: compiled once (agentserver.db.sql.Query).
_USAGE_FOR_UPDATE = sql.Query(
    lambda session_id: Session.objects.select_for_update().filter(id=session_id).values_list("tokens", "cost")[:1])


def _descendants(session: Session) -> list[Session]:
    """Every session below this one, deepest first, found level by level (one query per level)."""
    levels: list[list[Session]] = []
    frontier = [session.id]
    seen = {session.id}
    while frontier:
        children = [s for s in Session.objects.select_related("share")
                    .filter(owner_id=session.owner_id, parent_id__in=frontier) if s.id not in seen]
        if not children:
            break
        seen.update(s.id for s in children)
        levels.append(children)
        frontier = [s.id for s in children]
    return [s for level in reversed(levels) for s in level]


def session_family(session: Session) -> list[Session]:
    """The session and every session below it, deepest first."""
    return _descendants(session) + [session]


def session_family_ids(session: Session) -> list[str]:
    """The ids of the session and of every session below it (session_family's, in its order), read level by
    level with a statement compiled once: a runner asks at every turn's start."""
    levels: list[list[str]] = []
    frontier, seen = [session.id], {session.id}
    while frontier:
        children = [child for child in _CHILD_IDS.all(session.owner_id, frontier) if child not in seen]
        if not children:
            break
        seen.update(children)
        levels.append(children)
        frontier = children
    return [child for level in reversed(levels) for child in level] + [session.id]


def session_delete(*, session: Session) -> bool:
    """Children first, then the session with its share, todos, messages and parts (cascades). The agent
    loops of these sessions must be stopped first (services/removal.py does both)."""
    doomed = session_family(session)
    payloads = [(s, session_event(s)) for s in doomed]
    with transaction.atomic():
        for s in doomed:
            # Parts and messages explicitly first: one bulk delete each instead of per-row cascades.
            Part.objects.filter(session_id=s.id).delete()
            Message.objects.filter(session_id=s.id).delete()
            Session.objects.filter(pk=s.pk).delete()
    for s, payload in payloads:
        if "share" in payload["info"]:
            del payload["info"]["share"]
        publish_for(s, "session.deleted", payload)
    return True


_FORK_SUFFIX = re.compile(r" \(fork #(\d+)\)$")


def fork_title(title: str) -> str:
    match = _FORK_SUFFIX.search(title)
    if match:
        return f"{title[:match.start()]} (fork #{int(match.group(1)) + 1})"
    return f"{title} (fork #1)"


def session_fork(*, session: Session, message_id: str | None = None) -> Session:
    """A new root session in the same context with copies of the messages strictly before `message_id`
    (all without it): fresh ascending ids in the original order, parentIDs remapped to the copies."""
    now = now_ms()
    fork = Session(
        id=ids.descending("ses"), owner_id=session.owner_id, project_id=session.project_id,
        directory=session.directory, path=session.path, workspace_id=session.workspace_id, parent_id=None,
        title=fork_title(session.title), slug=new_slug(), version=settings.VERSION, agent=session.agent,
        model=session.model, permission=copy.deepcopy(session.permission), metadata={},
        time_created=now, time_updated=now,
    )
    messages = Message.objects.filter(session=session)
    if message_id:
        messages = messages.filter(id__lt=message_id)
    messages = list(messages.order_by("id"))
    parts_by_message: dict[str, list[Part]] = {m.id: [] for m in messages}
    for part in Part.objects.filter(message_id__in=list(parts_by_message)).order_by("message_id", "id"):
        parts_by_message[part.message_id].append(part)

    id_map = {m.id: ids.ascending("msg") for m in messages}
    new_messages: list[Message] = []
    new_parts: list[Part] = []
    for message in messages:
        new_id = id_map[message.id]
        info = copy.deepcopy(message.info)
        info["id"] = new_id
        info["sessionID"] = fork.id
        if info.get("parentID") in id_map:
            info["parentID"] = id_map[info["parentID"]]
        new_messages.append(Message(id=new_id, session=fork, role=message.role, info=info,
                                    time_created=message.time_created))
        for part in parts_by_message[message.id]:
            data = copy.deepcopy(part.data)
            data["id"] = ids.ascending("prt")
            data["messageID"] = new_id
            data["sessionID"] = fork.id
            new_parts.append(Part(id=data["id"], message_id=new_id, session=fork, type=part.type, data=data))
    with transaction.atomic():
        fork.save(force_insert=True)
        Message.objects.bulk_create(new_messages, batch_size=500)
        Part.objects.bulk_create(new_parts, batch_size=500)
    payload = session_event(fork)
    publish_for(fork, "session.created", payload)
    publish_for(fork, "session.updated", payload)
    for message in new_messages:
        publish_for(fork, "message.updated", {"sessionID": fork.id, "info": public_info(message.info)})
    for part in new_parts:
        publish_for(fork, "message.part.updated", {"sessionID": fork.id, "part": part.data, "time": now})
    return fork

