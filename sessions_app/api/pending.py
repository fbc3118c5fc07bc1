"""The views of a pending request, for either kind (services/pending.py): api/permissions.py and
api/questions.py mount them with their kind's `answering`, operation ids and reply body.

A view's `body` is a function of its kind's module (`parse(ReplyBody, data)`), not a serializer held here:
/doc reads the body a route takes from the `parse` call itself (agentserver/schema.py)."""
from typing import Callable, ClassVar

from rest_framework.response import Response

from agentserver.api import ApiView, LocatedView, id_param
from sessions_app.api.sessions import session_from_path
from sessions_app.services import pending
from sessions_app.services.pending import Answering


def unchanged(wire: dict) -> dict:
    return wire


class PendingView(ApiView):
    """A view of one kind of pending request. The kind's views are given `answering`, `body` and, where the
    v2 routes show a request otherwise than the original ones, `v2_wire`."""

    answering: ClassVar[Answering]
    body: ClassVar[Callable[[object], dict]]       # parses the reply's body
    v2_wire: ClassVar[Callable[[dict], dict]] = staticmethod(unchanged)

    def request_id(self, value: str) -> str:
        return id_param(value, self.answering.kind.prefix, self.answering.kind.name)


class PendingListView(PendingView):
    """The caller's pending requests: GET /permission, /question (both mounts)."""

    def get(self, request):
        return Response(pending.request_list(self.answering, user=request.user))


class PendingReplyView(PendingView):
    """POST /permission/{id}/reply, /question/{id}/reply (both mounts): true."""

    id_kwarg = "requestID"

    def post(self, request, **kwargs):
        request_id = self.request_id(kwargs[self.id_kwarg])
        body = self.body(request.data)
        return Response(pending.request_reply(self.answering, user=request.user, request_id=request_id,
                                              answer=body))


class PendingRejectView(PendingView):
    id_kwarg = "requestID"

    def post(self, request, **kwargs):
        request_id = self.request_id(kwargs[self.id_kwarg])
        return Response(pending.request_reject(self.answering, user=request.user, request_id=request_id))


class PendingRequestListView(LocatedView, PendingView):
    """v2 …/request: the pending requests of the located project, `{location, data}`."""

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
    def post(self, request, sessionID: str, requestID: str):
        session = session_from_path(request, sessionID)
        request_id = self.request_id(requestID)
        body = self.body(request.data)
        pending.request_reply(self.answering, user=request.user, request_id=request_id, answer=body,
                              session_id=session.id)
        return Response(status=204)


class PendingSessionRejectView(PendingView):
    def post(self, request, sessionID: str, requestID: str):
        session = session_from_path(request, sessionID)
        request_id = self.request_id(requestID)
        pending.request_reject(self.answering, user=request.user, request_id=request_id, session_id=session.id)
        return Response(status=204)
