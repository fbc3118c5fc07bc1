"""The session store's routes: session.list / create / status / get / update / delete / children / todo /
fork / share / unshare (original) and session.list / create / get / update / delete / todo / context / active
(v2, the `{data}` envelope; lists `{data, cursor: {next?}}` plus `X-Next-Cursor`, as opencode 1.18's /doc
describes), and 1.18's experimental.session.list (across projects) and experimental.session.background.

Session item routes resolve the session's pinned context from its id and ignore `directory`."""
from __future__ import annotations

from rest_framework import serializers
from rest_framework.response import Response

from agentserver.http.api import (
    BOOLEAN,
    ApiView,
    V2RequestView,
    decode_cursor,
    encode_cursor,
    enveloped,
    id_param,
    opencode,
    page,
    takes,
)
from projects_app.contexts import context_for_directory, requested_directory
from sessions_app import selectors
from sessions_app.api import serializers as s
from sessions_app.services import removal
from sessions_app.store import sessions as session_services
from sessions_app.store import sharing
from sessions_app.wire import message_wire, session_wire, session_wire_v2, todo_wire


def session_from_path(request, session_id: str):
    """The caller's session a path names (`{sessionID}`): 400 for a malformed id, 404 for another's."""
    return selectors.session_get(user=request.user, session_id=id_param(session_id, "ses", "session"))


def request_base_url(request) -> str:
    return f"{request.scheme}://{request.get_host()}"


class SessionCollectionView(ApiView):
    operation_ids = {"GET": "session.list", "POST": "session.create"}
    mounts = {"original": "session"}

    @takes(query=s.SessionListQuery, directory=True)
    def get(self, request):
        query = self.query(request)
        context = self.context(request)
        path = query.get("path") or context.path
        sessions = selectors.session_list(
            user=request.user, project_id=context.project_id, path=path, roots=query["roots"],
            start=query.get("start"), search=query.get("search") or None, limit=query.get("limit") or None,
        )
        return Response([session_wire(x) for x in sessions])

    @takes(s.SessionCreateBody, directory=True)
    def post(self, request):
        body = self.body(request)
        session = session_services.session_create(
            context=self.context(request), parent_id=body.get("parentID"), title=body.get("title"),
            agent=body.get("agent"), model=body.get("model"), permission=body.get("permission"),
            metadata=body.get("metadata"), share_base_url=request_base_url(request),
        )
        return Response(session_wire(session))


class SessionStatusView(ApiView):
    operation_ids = {"GET": "session.status"}
    mounts = {"original": "session/status"}

    def get(self, request):
        return Response(selectors.session_statuses(user=request.user))


class SessionItemView(ApiView):
    operation_ids = {"GET": "session.get", "PATCH": "session.update", "DELETE": "session.delete"}
    mounts = {"original": "session/<str:sessionID>"}

    def get(self, request, sessionID: str):
        return Response(session_wire(session_from_path(request, sessionID)))

    @takes(s.SessionUpdateBody)
    def patch(self, request, sessionID: str):
        session = session_from_path(request, sessionID)
        body = self.body(request)
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
    mounts = {"original": "session/<str:sessionID>/children"}

    def get(self, request, sessionID: str):
        session = session_from_path(request, sessionID)
        return Response([session_wire(x) for x in selectors.session_children(session=session)])


class SessionTodoView(ApiView):
    operation_ids = {"GET": "session.todo"}
    mounts = {"original": "session/<str:sessionID>/todo"}

    def get(self, request, sessionID: str):
        session = session_from_path(request, sessionID)
        return Response([todo_wire(t) for t in selectors.session_todos(session=session)])


class SessionForkView(ApiView):
    operation_ids = {"POST": "session.fork"}
    mounts = {"original": "session/<str:sessionID>/fork"}

    @takes(s.ForkBody)
    def post(self, request, sessionID: str):
        session = session_from_path(request, sessionID)
        body = self.body(request)
        return Response(session_wire(session_services.session_fork(session=session, message_id=body.get("messageID"))))


class SessionShareView(ApiView):
    operation_ids = {"POST": "session.share", "DELETE": "session.unshare"}
    mounts = {"original": "session/<str:sessionID>/share"}

    def post(self, request, sessionID: str):
        session = session_from_path(request, sessionID)
        return Response(session_wire(sharing.session_share(session=session, base_url=request_base_url(request))))

    def delete(self, request, sessionID: str):
        session = session_from_path(request, sessionID)
        return Response(session_wire(sharing.session_unshare(session=session)))


# ---- v2 -----------------------------------------------------------------------------------------------

class V2SessionCollectionView(V2RequestView):
    operation_ids = {"GET": "session.list", "POST": "session.create"}
    mounts = {"v2": "session"}

    @takes(query=s.V2SessionListQuery, directory=True)
    def get(self, request):
        query = self.query(request)
        # As opencode: a request that names no location lists every session of the caller (the web app's
        # home page); one that names a directory or workspace lists that project's.
        everywhere = not requested_directory(request.GET, request.headers) and not request.GET.get("workspace")
        context = None if everywhere else self.context(request)
        order = query["order"]
        cursor = None
        if query.get("cursor"):
            data = decode_cursor(query["cursor"], "updated", "id", "order")  # its shape: the query's CursorField
            cursor, order = (int(data["updated"]), data["id"]), data["order"]
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
        return page([session_wire_v2(x) for x in sessions], next_cursor)

    @takes(s.V2SessionCreateBody, directory=True)
    def post(self, request):
        body = self.body(request)
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
        return Response({"data": session_wire_v2(session)})


class V2SessionActiveView(ApiView):
    operation_ids = {"GET": "session.active"}
    mounts = {"v2": "session/active"}

    def get(self, request):
        running = selectors.session_statuses(user=request.user)
        # 1.18 knows one active state: every non-idle session (busy, retrying) is "running".
        return Response({"data": {session_id: {"type": "running"} for session_id in running}})


class V2SessionItemView(ApiView):
    operation_ids = {"GET": "session.get", "PATCH": "session.update", "DELETE": "session.delete"}
    mounts = {"v2": "session/<str:sessionID>"}
    answer_schemas = {"PATCH": opencode("GET /api/session/{}"), "DELETE": enveloped(BOOLEAN)}

    def get(self, request, sessionID: str):
        return Response({"data": session_wire_v2(session_from_path(request, sessionID))})

    @takes(s.V2SessionUpdateBody)
    def patch(self, request, sessionID: str):
        session = session_from_path(request, sessionID)
        body = self.body(request)
        session = session_services.session_update(
            session=session, title=body.get("title"), archived=body.get("archived"),
            archived_given="archived" in body, permission=body.get("permission"),
        )
        return Response({"data": session_wire_v2(session)})

    def delete(self, request, sessionID: str):
        return Response({"data": removal.session_delete(session=session_from_path(request, sessionID))})


class V2SessionTodoView(ApiView):
    operation_ids = {"GET": "session.todo"}
    mounts = {"v2": "session/<str:sessionID>/todo"}
    answer_schemas = {"GET": enveloped(opencode("GET /session/{}/todo"))}

    def get(self, request, sessionID: str):
        session = session_from_path(request, sessionID)
        return Response({"data": [todo_wire(t) for t in selectors.session_todos(session=session)]})


class V2SessionContextView(ApiView):
    operation_ids = {"GET": "session.context"}
    mounts = {"v2": "session/<str:sessionID>/context"}
    answer_schemas = {"GET": s.V2_MESSAGES}

    def get(self, request, sessionID: str):
        session = session_from_path(request, sessionID)
        items = selectors.session_context_messages(session=session)
        return Response({"data": [message_wire(m, parts) for m, parts in items]})


# ---- 1.18's experimental routes ------------------------------------------------------------------------

class ExperimentalSessionListQuery(serializers.Serializer):
    roots = serializers.BooleanField(required=False, default=False)
    start = serializers.IntegerField(required=False, min_value=0, max_value=s.MAX_MS)
    cursor = serializers.IntegerField(required=False, min_value=0, max_value=s.MAX_MS)
    search = serializers.CharField(required=False, allow_blank=True, max_length=1024)
    limit = serializers.IntegerField(required=False, min_value=1, max_value=s.MAX_LIMIT)
    archived = serializers.BooleanField(required=False, default=False)
    directory = serializers.CharField(required=False, allow_blank=True)
    workspace = serializers.CharField(required=False, allow_blank=True)


class ExperimentalSessionListView(ApiView):
    """All of the caller's sessions across projects, most recently updated first, each with its project;
    archived ones only when asked; `cursor` = the `time.updated` of the last session of the previous page."""

    operation_ids = {"GET": "experimental.session.list"}
    mounts = {"original": "experimental/session"}

    @takes(query=ExperimentalSessionListQuery)
    def get(self, request):
        query = self.query(request)
        cursor = (query["cursor"], "") if query.get("cursor") is not None else None
        sessions = selectors.session_list(
            user=request.user, roots=query["roots"], start=query.get("start"), search=query.get("search") or None,
            limit=query.get("limit"), archived=None if query["archived"] else False, cursor=cursor)
        projects = selectors.project_summaries(user=request.user, sessions=sessions)
        return Response([{**session_wire(x), "project": projects[x.project_id]} for x in sessions])


class ExperimentalSessionBackgroundView(ApiView):
    """Subagents (the task tool) run inside their parent's turn on this server and cannot be detached from it:
    `false`, nothing was moved to the background."""

    operation_ids = {"POST": "experimental.session.background"}
    mounts = {"original": "experimental/session/<str:sessionID>/background"}

    def post(self, request, sessionID: str):
        session_from_path(request, sessionID)
        return Response(False)
