"""v2 session routes (under /api): the same services as the original routes in the v2 envelope
(`{data}`; lists `{data, cursor: {next?}}` plus `X-Next-Cursor`), as opencode 1.18's /doc describes."""
from __future__ import annotations

import base64
import binascii
import json

from rest_framework.response import Response

from agentserver.api import ApiView, V2RequestView, parse, parse_query
from agentserver.context import context_for_directory, requested_directory
from agentserver.errors import BadRequest
from sessions_app import selectors
from sessions_app.api import serializers as s
from sessions_app.api.original import request_base_url, session_from_path
from sessions_app.services import removal
from sessions_app.store import sessions as session_services
from sessions_app.wire import message_wire, session_wire, todo_wire


def v2_session(session) -> dict:
    out = session_wire(session)
    out["location"] = {"directory": session.directory}
    if session.workspace_id:
        out["location"]["workspaceID"] = session.workspace_id
    out["subpath"] = session.path
    return out


def encode_cursor(data: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(data, separators=(",", ":")).encode()).decode().rstrip("=")


def decode_cursor(value: str, *keys: str) -> dict:
    try:
        data = json.loads(base64.urlsafe_b64decode((value + "=" * (-len(value) % 4)).encode()))
        if not isinstance(data, dict) or any(k not in data for k in keys):
            raise ValueError
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raise BadRequest(f"Invalid cursor: {value!r}", kind="Query")
    return data


def page(items: list, next_cursor: str | None) -> Response:
    return Response({"data": items, "cursor": {"next": next_cursor} if next_cursor else {}},
                    headers={"X-Next-Cursor": next_cursor} if next_cursor else None)


class V2SessionCollectionView(V2RequestView):
    operation_ids = {"GET": "session.list", "POST": "session.create"}

    def get(self, request):
        query = parse_query(s.V2SessionListQuery, request)
        # As opencode: a request that names no location lists every session of the caller (the web app's
        # home page); one that names a directory or workspace lists that project's.
        everywhere = not requested_directory(request.GET, request.headers) and not request.GET.get("workspace")
        context = None if everywhere else self.context(request)
        order = query["order"]
        cursor = None
        if query.get("cursor"):
            data = decode_cursor(query["cursor"], "updated", "id", "order")
            if not isinstance(data["updated"], int) or not isinstance(data["id"], str):
                raise BadRequest("Invalid cursor", kind="Query")
            cursor, order = (data["updated"], data["id"]), data["order"]
        limit = query.get("limit") or selectors.LIST_DEFAULT_LIMIT
        path = query.get("path") or query.get("subpath") or (context.path if context else None)
        sessions = selectors.session_list(
            user=request.user, project_id=context and context.project_id,
            workspace_id=context and context.workspace_id, path=path,
            roots=query["roots"], start=query.get("start"), search=query.get("search") or None,
            limit=limit + 1, order=order, cursor=cursor,
        )
        next_cursor = None
        if len(sessions) > limit:
            sessions = sessions[:limit]
            last = sessions[-1]
            next_cursor = encode_cursor({"updated": last.time_updated, "id": last.id, "order": order})
        return page([v2_session(x) for x in sessions], next_cursor)

    def post(self, request):
        body = parse(s.V2SessionCreateBody, request.data)
        context = self.context(request)
        location = body.get("location")
        if location:
            context = context_for_directory(request.user, location["directory"],
                                            workspace_id=location.get("workspaceID") or context.workspace_id)
        session = session_services.session_create(
            context=context, parent_id=body.get("parentID"), title=body.get("title"), agent=body.get("agent"),
            model=body.get("model"), permission=body.get("permission"), metadata=body.get("metadata"),
            share_base_url=request_base_url(request),
        )
        return Response({"data": v2_session(session)})


class V2SessionItemView(ApiView):
    operation_ids = {"GET": "session.get", "PATCH": "session.update", "DELETE": "session.delete"}

    def get(self, request, sessionID: str):
        return Response({"data": v2_session(session_from_path(request, sessionID))})

    def patch(self, request, sessionID: str):
        session = session_from_path(request, sessionID)
        body = parse(s.V2SessionUpdateBody, request.data)
        session = session_services.session_update(
            session=session, title=body.get("title"), archived=body.get("archived"),
            archived_given="archived" in body, permission=body.get("permission"),
        )
        return Response({"data": v2_session(session)})

    def delete(self, request, sessionID: str):
        return Response({"data": removal.session_delete(session=session_from_path(request, sessionID))})


class V2SessionMessagesView(ApiView):
    operation_ids = {"GET": "session.message.list"}

    def get(self, request, sessionID: str):
        session = session_from_path(request, sessionID)
        query = parse_query(s.V2MessageListQuery, request)
        order = query.get("order") or "asc"
        before = after = None
        if query.get("cursor"):
            data = decode_cursor(query["cursor"], "id", "order")
            if not isinstance(data["id"], str) or data["order"] not in ("asc", "desc"):
                raise BadRequest("Invalid cursor", kind="Query")
            order = data["order"]
            before, after = (data["id"], None) if order == "desc" else (None, data["id"])
        limit = query.get("limit") or None
        result = selectors.session_messages_stored(session=session, limit=limit, before=before, after=after,
                                                   order=order, tail=False)
        next_cursor = encode_cursor({"id": result.last_id, "order": order}) if result.last_id else None
        return page(result.items, next_cursor)


class V2SessionTodoView(ApiView):
    operation_ids = {"GET": "session.todo"}

    def get(self, request, sessionID: str):
        session = session_from_path(request, sessionID)
        return Response({"data": [todo_wire(t) for t in selectors.session_todos(session=session)]})


class V2SessionContextView(ApiView):
    operation_ids = {"GET": "session.context"}

    def get(self, request, sessionID: str):
        session = session_from_path(request, sessionID)
        items = selectors.session_context_messages(session=session)
        return Response({"data": [message_wire(m, parts) for m, parts in items]})
