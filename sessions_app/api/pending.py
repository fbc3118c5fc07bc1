"""The views of a pending request, for either kind (services/pending.py): api/permissions.py and
api/questions.py mount them with their kind's `answering`, operation ids and reply body.

A reply's body is the serializer its kind names (`reply_body`); the reply handlers here declare it by that
name (`@takes("reply_body")`), so the edge, /doc and the battery find each kind's own."""
from typing import Callable, ClassVar

from rest_framework import serializers
from rest_framework.response import Response

from agentserver.http.api import (
    BOOLEAN,
    ApiView,
    LocatedView,
    V2RequestView,
    id_param,
    succeeds_with,
    takes,
)
from sessions_app.api.serializers import spec_response
from sessions_app.api.sessions import session_from_path
from sessions_app.models import Session
from sessions_app.services import pending
from sessions_app.services.pending import Answering


def unchanged(wire: dict) -> dict:
    return wire


class PendingView(ApiView):
    """A view of one kind of pending request. The kind's views are given `answering`, `reply_body` and
    `reply_field` and, where the v2 routes show a request otherwise than the original ones, `v2_wire`."""

    answering: ClassVar[Answering]
    reply_body: ClassVar[type[serializers.Serializer]]  # what a reply's body holds
    reply_field: ClassVar[str]  # the field of reply_body the v2 mount also takes as the spec's `response`
    v2_wire: ClassVar[Callable[[dict], dict]] = staticmethod(unchanged)

    def v2_reply(self, data):
        """A v2 reply's body in reply_body's terms."""
        return spec_response(data, self.reply_field)

    def request_id(self, value: str) -> str:
        return id_param(value, self.answering.kind.prefix, self.answering.kind.name)

    def v2_request_id(self, path: dict) -> str:
        """The v2 routes name the request's id after its kind: /api/permission/{permissionID}/reply."""
        return self.request_id(path[f"{self.answering.kind.name}ID"])

    def in_session(self, request, sessionID: str, requestID: str) -> tuple[Session, str]:
        """The v2 session routes: the caller's session (404) and the request's id in it."""
        return session_from_path(request, sessionID), self.request_id(requestID)

    def reply(self, request, request_id: str, body: dict, *, session_id: str | None = None) -> bool:
        return pending.request_reply(self.answering, user=request.user, request_id=request_id, answer=body,
                                     session_id=session_id)

    def reject(self, request, request_id: str, *, session_id: str | None = None) -> bool:
        return pending.request_reject(self.answering, user=request.user, request_id=request_id,
                                      session_id=session_id)


class PendingListView(PendingView):
    """The caller's pending requests: GET /permission, /question (both mounts)."""

    def get(self, request):
        return Response(pending.request_list(self.answering, user=request.user))


class PendingItemView(PendingView):
    @property
    def path_ids(self) -> dict[str, str]:
        """The original routes' {requestID} is an id of the view's kind: checked first, stated in /doc."""
        return {"requestID": self.answering.kind.prefix}


class PendingReplyView(PendingItemView):
    """POST /permission/{requestID}/reply, /question/{requestID}/reply: true."""

    @takes("reply_body")
    def post(self, request, requestID: str):
        request_id = self.request_id(requestID)
        return Response(self.reply(request, request_id, self.body(request)))


class PendingRejectView(PendingItemView):
    def post(self, request, requestID: str):
        return Response(self.reject(request, self.request_id(requestID)))


class V2PendingReplyView(V2RequestView, PendingView):
    answer_schemas = {"POST": BOOLEAN}

    @takes("reply_body", prepare=PendingView.v2_reply)
    def post(self, request, **path):
        request_id = self.v2_request_id(path)
        return Response(self.reply(request, request_id, self.body(request)))


class V2PendingRejectView(V2RequestView, PendingView):
    answer_schemas = {"POST": BOOLEAN}

    def post(self, request, **path):
        return Response(self.reject(request, self.v2_request_id(path)))


class PendingRequestListView(LocatedView, PendingView):
    """v2 …/request: the pending requests of the located project, `{location, data}`."""

    @takes(directory=True)
    def get(self, request):
        context = self.context(request)
        listed = pending.request_list(self.answering, user=request.user, project_id=context.project_id)
        return self.located(request, [self.v2_wire(r) for r in listed])


class PendingSessionListView(PendingView):
    """v2 /session/{sessionID}/…: the session's pending requests, `{data}`."""

    def get(self, request, sessionID: str):
        session = session_from_path(request, sessionID)
        listed = pending.request_list(self.answering, user=request.user, session=session)
        return Response({"data": [self.v2_wire(r) for r in listed]})


class PendingSessionReplyView(PendingView):
    """v2 /session/{sessionID}/…/{requestID}/reply: 204."""

    @takes("reply_body")
    @succeeds_with(204)
    def post(self, request, sessionID: str, requestID: str):
        session, request_id = self.in_session(request, sessionID, requestID)
        self.reply(request, request_id, self.body(request), session_id=session.id)
        return Response(status=204)


class PendingSessionRejectView(PendingView):
    @succeeds_with(204)
    def post(self, request, sessionID: str, requestID: str):
        session, request_id = self.in_session(request, sessionID, requestID)
        self.reject(request, request_id, session_id=session.id)
        return Response(status=204)
