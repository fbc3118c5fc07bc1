"""Original (root-mounted) session routes: thin views over sessions_app services and selectors.

Session item routes resolve the session's pinned context from its id and ignore `directory`."""
from __future__ import annotations

from urllib.parse import urlencode

from rest_framework.response import Response

from agentserver.api import ApiView, id_param, parse, parse_query
from sessions_app import selectors
from sessions_app.api import serializers as s
from sessions_app.services import removal
from sessions_app.store import sessions as session_services
from sessions_app.store import sharing
from sessions_app.wire import message_wire, session_wire, todo_wire


def session_from_path(request, session_id: str):
    return selectors.session_get(user=request.user, session_id=id_param(session_id, "ses", "session"))


def request_base_url(request) -> str:
    return f"{request.scheme}://{request.get_host()}"


class SessionCollectionView(ApiView):
    operation_ids = {"GET": "session.list", "POST": "session.create"}

    def get(self, request):
        query = parse_query(s.SessionListQuery, request)
        context = self.context(request)
        path = query.get("path") or context.path
        sessions = selectors.session_list(
            user=request.user, project_id=context.project_id, path=path, roots=query["roots"],
            start=query.get("start"), search=query.get("search") or None, limit=query.get("limit") or None,
        )
        return Response([session_wire(x) for x in sessions])

    def post(self, request):
        body = parse(s.SessionCreateBody, request.data)
        session = session_services.session_create(
            context=self.context(request), parent_id=body.get("parentID"), title=body.get("title"),
            agent=body.get("agent"), model=body.get("model"), permission=body.get("permission"),
            metadata=body.get("metadata"), share_base_url=request_base_url(request),
        )
        return Response(session_wire(session))


class SessionStatusView(ApiView):
    operation_ids = {"GET": "session.status"}

    def get(self, request):
        return Response(selectors.session_statuses(user=request.user))


class SessionItemView(ApiView):
    operation_ids = {"GET": "session.get", "PATCH": "session.update", "DELETE": "session.delete"}

    def get(self, request, sessionID: str):
        return Response(session_wire(session_from_path(request, sessionID)))

    def patch(self, request, sessionID: str):
        session = session_from_path(request, sessionID)
        body = parse(s.SessionUpdateBody, request.data)
        time = body.get("time") or {}
        session = session_services.session_update(
            session=session, title=body.get("title"), archived=time.get("archived"),
            archived_given="archived" in time, permission=body.get("permission"), metadata=body.get("metadata"),
        )
        return Response(session_wire(session))

    def delete(self, request, sessionID: str):
        return Response(removal.session_delete(session=session_from_path(request, sessionID)))


class SessionChildrenView(ApiView):
    operation_ids = {"GET": "session.children"}

    def get(self, request, sessionID: str):
        session = session_from_path(request, sessionID)
        return Response([session_wire(x) for x in selectors.session_children(session=session)])


class SessionTodoView(ApiView):
    operation_ids = {"GET": "session.todo"}

    def get(self, request, sessionID: str):
        session = session_from_path(request, sessionID)
        return Response([todo_wire(t) for t in selectors.session_todos(session=session)])


class SessionForkView(ApiView):
    operation_ids = {"POST": "session.fork"}

    def post(self, request, sessionID: str):
        session = session_from_path(request, sessionID)
        body = parse(s.ForkBody, request.data)
        return Response(session_wire(session_services.session_fork(session=session, message_id=body.get("messageID"))))


class SessionShareView(ApiView):
    operation_ids = {"POST": "session.share", "DELETE": "session.unshare"}

    def post(self, request, sessionID: str):
        session = session_from_path(request, sessionID)
        return Response(session_wire(sharing.session_share(session=session, base_url=request_base_url(request))))

    def delete(self, request, sessionID: str):
        session = session_from_path(request, sessionID)
        return Response(session_wire(sharing.session_unshare(session=session)))


class SessionMessagesView(ApiView):
    """GET: the session's messages, oldest first; `limit=N` gives the newest N with a `before` cursor for the
    page before them (Link rel="next" + X-Next-Cursor), as opencode does. `limit=0` means all."""

    operation_ids = {"GET": "session.messages"}

    def get(self, request, sessionID: str):
        session = session_from_path(request, sessionID)
        query = parse_query(s.MessageListQuery, request)
        limit = query.get("limit") or None
        before = selectors.decode_cursor(query["before"]) if query.get("before") else None
        page = selectors.session_messages_stored(session=session, limit=limit, before=before)
        headers = {}
        if page.next_cursor:
            link = request.build_absolute_uri(request.path) + "?" + urlencode({"limit": limit, "before": page.next_cursor})
            headers = {"Link": f'<{link}>; rel="next"', "X-Next-Cursor": page.next_cursor}
        return Response(page.items, headers=headers)


class SessionMessageView(ApiView):
    operation_ids = {"GET": "session.message"}

    def get(self, request, sessionID: str, messageID: str):
        id_param(sessionID, "ses", "session")
        message_id = id_param(messageID, "msg", "message")
        session = selectors.session_get(user=request.user, session_id=sessionID)
        message, parts = selectors.message_get(session=session, message_id=message_id)
        return Response(message_wire(message, parts))
