"""Messages and parts: session.messages, session.message, session.deleteMessage, part.update, part.delete
(original) and session.message.list, session.message (v2)."""
from __future__ import annotations

from urllib.parse import urlencode

from rest_framework.response import Response

from agentserver.http.api import (
    AnyObject,
    ApiView,
    decode_cursor,
    encode_cursor,
    id_param,
    page,
    takes,
)
from sessions_app import selectors
from sessions_app.api import serializers as s
from sessions_app.api.sessions import session_from_path
from sessions_app.services import message_edit
from sessions_app.wire import message_wire


class SessionMessagesView(ApiView):
    """GET: the session's messages, oldest first; `limit=N` gives the newest N with a `before` cursor for the
    page before them (Link rel="next" + X-Next-Cursor), as opencode does. `limit=0` means all."""

    operation_ids = {"GET": "session.messages"}
    mounts = {"original": "session/<str:sessionID>/message"}

    @takes(query=s.MessageListQuery)
    def get(self, request, sessionID: str):
        session = session_from_path(request, sessionID)
        query = self.query(request)
        limit = query.get("limit") or None
        before = selectors.decode_cursor(query["before"]) if query.get("before") else None
        found = selectors.session_messages_stored(session=session, limit=limit, before=before)
        headers = {}
        if found.next_cursor:
            link = request.build_absolute_uri(request.path) + "?" + urlencode({"limit": limit, "before": found.next_cursor})
            headers = {"Link": f'<{link}>; rel="next"', "X-Next-Cursor": found.next_cursor}
        return Response(found.items, headers=headers)


class SessionMessageView(ApiView):
    operation_ids = {"GET": "session.message"}
    mounts = {"original": "session/<str:sessionID>/message/<str:messageID>"}

    def get(self, request, sessionID: str, messageID: str):
        id_param(sessionID, "ses", "session")
        message_id = id_param(messageID, "msg", "message")
        session = selectors.session_get(user=request.user, session_id=sessionID)
        message, parts = selectors.message_get(session=session, message_id=message_id)
        return Response(message_wire(message, parts))


class MessageDeleteView(ApiView):
    operation_ids = {"DELETE": "session.deleteMessage"}
    mounts = {"original": "session/<str:sessionID>/message/<str:messageID>"}
    answers = (409,)

    def delete(self, request, sessionID: str, messageID: str):
        session = session_from_path(request, sessionID)
        message_id = id_param(messageID, "msg", "message")
        return Response(message_edit.message_delete(session=session, message_id=message_id))


class PartItemView(ApiView):
    operation_ids = {"PATCH": "part.update", "DELETE": "part.delete"}
    mounts = {"original": "session/<str:sessionID>/message/<str:messageID>/part/<str:partID>"}
    answers = (409,)

    @takes(AnyObject("a JSON object (a Part)"))
    def patch(self, request, sessionID: str, messageID: str, partID: str):
        session = session_from_path(request, sessionID)
        message_id = id_param(messageID, "msg", "message")
        part_id = id_param(partID, "prt", "part")
        part = self.body(request)
        return Response(message_edit.part_update(session=session, message_id=message_id, part_id=part_id,
                                                 part=part))

    def delete(self, request, sessionID: str, messageID: str, partID: str):
        session = session_from_path(request, sessionID)
        message_id = id_param(messageID, "msg", "message")
        part_id = id_param(partID, "prt", "part")
        return Response(message_edit.part_delete(session=session, message_id=message_id, part_id=part_id))


# ---- v2 -----------------------------------------------------------------------------------------------

class V2SessionMessagesView(ApiView):
    operation_ids = {"GET": "session.message.list"}
    mounts = {"v2": "session/<str:sessionID>/message"}
    answer_schemas = {"GET": s.V2_MESSAGE_PAGE}

    @takes(query=s.V2MessageListQuery)
    def get(self, request, sessionID: str):
        session = session_from_path(request, sessionID)
        query = self.query(request)
        order = query.get("order") or "asc"
        before = after = None
        if query.get("cursor"):
            data = decode_cursor(query["cursor"], "id", "order")  # its shape: the query's CursorField
            order = data["order"]
            before, after = (data["id"], None) if order == "desc" else (None, data["id"])
        limit = query.get("limit") or None
        result = selectors.session_messages_stored(session=session, limit=limit, before=before, after=after,
                                                   order=order, tail=False)
        next_cursor = encode_cursor({"id": result.last_id, "order": order}) if result.last_id else None
        return page(result.items, next_cursor)


class V2SessionMessageView(ApiView):
    operation_ids = {"GET": "session.message"}
    mounts = {"v2": "session/<str:sessionID>/message/<str:messageID>"}
    answer_schemas = {"GET": s.V2_MESSAGE}

    def get(self, request, sessionID: str, messageID: str):
        session = session_from_path(request, sessionID)
        message_id = id_param(messageID, "msg", "message")
        message, parts = selectors.message_get(session=session, message_id=message_id)
        return Response({"data": message_wire(message, parts)})
