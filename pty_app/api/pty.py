"""pty.* routes: thin views over pty_app.services / pty_app.selectors. The original routes answer bare
records; the v2 mounts wrap them in {location, data} like the reference's /api routes."""
from rest_framework.response import Response

from agentserver.errors import BadRequest
from agentserver.http.api import (
    ApiView,
    V2RequestView,
    id_param,
    opencode,
    succeeds_with,
    takes,
)
from auth_app.authentication import request_credential_id
from pty_app import selectors, services, tickets
from pty_app.api.serializers import (
    PtyCreateInput,
    PtyUpdateInput,
    V2PtyCreateInput,
    V2PtyUpdateInput,
)
from pty_app.wire import pty_wire


def _pty_id(value: str) -> str:
    return id_param(value, "pty", "pty")


class PtyCollectionView(ApiView):
    operation_ids = {"GET": "pty.list", "POST": "pty.create"}
    mounts = {"original": "pty"}
    answers = (429,)

    @takes(directory=True)
    def get(self, request):
        context = self.context(request)
        return Response([pty_wire(row) for row in selectors.pty_list(user=request.user, directory=context.directory)])

    @takes(PtyCreateInput, directory=True)
    def post(self, request):
        data = self.body(request)
        row = services.pty_create(context=self.context(request), **data)
        return Response(pty_wire(row))


class PtyShellsView(ApiView):
    operation_ids = {"GET": "pty.shells"}
    mounts = {"original": "pty/shells"}

    def get(self, request):
        return Response(selectors.shells())


class PtyItemView(ApiView):
    operation_ids = {"GET": "pty.get", "PUT": "pty.update", "DELETE": "pty.remove"}
    mounts = {"original": "pty/<str:ptyID>"}

    def get(self, request, ptyID):
        return Response(pty_wire(selectors.pty_get(user=request.user, pty_id=_pty_id(ptyID))))

    @takes(PtyUpdateInput)
    def put(self, request, ptyID):
        pty_id = _pty_id(ptyID)
        data = self.body(request)
        return Response(pty_wire(services.pty_update(user=request.user, pty_id=pty_id, **data)))

    def delete(self, request, ptyID):
        services.pty_remove(user=request.user, pty_id=_pty_id(ptyID))
        return Response(True)


class PtyConnectView(ApiView):
    """The WebSocket lives in pty_app/api/socket.py; a plain GET gets what the reference answers."""

    operation_ids = {"GET": "pty.connect"}
    mounts = {"original": "pty/<str:ptyID>/connect", "v2": "pty/<str:ptyID>/connect"}

    def get(self, request, ptyID):
        selectors.pty_get(user=request.user, pty_id=_pty_id(ptyID))
        raise BadRequest("This route expects a WebSocket upgrade", kind="Headers")


class V2PtyCollectionView(V2RequestView):
    operation_ids = {"GET": "pty.list", "POST": "pty.create"}
    mounts = {"v2": "pty"}
    answers = (429,)

    @takes(directory=True)
    def get(self, request):
        context = self.context(request)
        rows = selectors.pty_list(user=request.user, directory=context.directory)
        return Response({"location": context.location(), "data": [pty_wire(row) for row in rows]})

    @takes(V2PtyCreateInput, directory=True)
    def post(self, request):
        data = dict(self.body(request))
        shell, command = data.pop("shell", None), data.get("command")
        if shell:
            data["command"] = shell
            if command:
                data["args"] = ["-c", command, *data.get("args", [])]
        context = self.context(request)
        row = services.pty_create(context=context, **data)
        return Response({"location": context.location(), "data": pty_wire(row)})


class V2PtyItemView(V2RequestView):
    operation_ids = {"GET": "pty.get", "PATCH": "pty.update", "PUT": "pty.update", "DELETE": "pty.delete"}
    mounts = {"v2": "pty/<str:ptyID>"}
    answer_schemas = {"PATCH": opencode("PUT /api/pty/{}")}  # PATCH: the customer's spelling of PUT

    @takes(directory=True)
    def get(self, request, ptyID):
        row = selectors.pty_get(user=request.user, pty_id=_pty_id(ptyID))
        return Response({"location": self.context(request).location(), "data": pty_wire(row)})

    @takes(V2PtyUpdateInput, directory=True)
    def patch(self, request, ptyID):
        pty_id = _pty_id(ptyID)
        data = self.body(request)
        row = services.pty_update(user=request.user, pty_id=pty_id, **data)
        return Response({"location": self.context(request).location(), "data": pty_wire(row)})

    put = patch

    @succeeds_with(204)
    def delete(self, request, ptyID):
        services.pty_remove(user=request.user, pty_id=_pty_id(ptyID))
        return Response(status=204)


class PtyConnectTokenView(ApiView):
    """A one-time ticket for the WebSocket connect of clients that cannot send credentials (browsers)."""

    operation_ids = {"POST": "pty.connectToken"}
    mounts = {"original": "pty/<str:ptyID>/connect-token"}

    def post(self, request, ptyID):
        return Response(tickets.ticket_create(user=request.user, pty_id=_pty_id(ptyID),
                                              credential=request_credential_id(request)))


class V2PtyConnectTokenView(V2RequestView):
    operation_ids = {"POST": "pty.connectToken"}
    mounts = {"v2": "pty/<str:ptyID>/connect-token"}

    @takes(directory=True)
    def post(self, request, ptyID):
        ticket = tickets.ticket_create(user=request.user, pty_id=_pty_id(ptyID),
                                       credential=request_credential_id(request))
        return Response({"location": self.context(request).location(), "data": ticket})
