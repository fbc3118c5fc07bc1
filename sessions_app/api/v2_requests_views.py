"""opencode 1.18's v2 session extras: the running sessions (session.active), interrupt, and the pending
permission and question requests of a location (permission.request.list, question.request.list)."""
from rest_framework.response import Response

from agentserver.api import ApiView
from projects_app.api_files import LocatedView
from sessions_app import selectors
from sessions_app.api.original import session_from_path
from sessions_app.services import permissions, prompting, questions


def permission_v2_wire(request: dict) -> dict:
    out = {"id": request["id"], "sessionID": request["sessionID"], "action": request["permission"],
           "resources": request["patterns"], "save": request.get("always") or [],
           "metadata": request.get("metadata") or {}}
    tool = request.get("tool")
    if isinstance(tool, dict) and tool.get("messageID") and tool.get("callID"):
        out["source"] = {"type": "tool", "messageID": tool["messageID"], "callID": tool["callID"]}
    return out


class V2SessionActiveView(ApiView):
    operation_ids = {"GET": "session.active"}

    def get(self, request):
        running = selectors.session_statuses(user=request.user)
        # 1.18 knows one active state: every non-idle session (busy, retrying) is "running".
        return Response({"data": {session_id: {"type": "running"} for session_id in running}})


class V2SessionInterruptView(ApiView):
    operation_ids = {"POST": "session.interrupt"}

    def post(self, request, sessionID: str):
        prompting.session_abort(session=session_from_path(request, sessionID))
        return Response(status=204)


class V2PermissionRequestListView(LocatedView):
    operation_ids = {"GET": "permission.request.list"}

    def get(self, request):
        context = self.context(request)
        pending = permissions.permission_list(user=request.user, project_id=context.project_id)
        return self.located(request, [permission_v2_wire(r) for r in pending])


class V2QuestionRequestListView(LocatedView):
    operation_ids = {"GET": "question.request.list"}

    def get(self, request):
        context = self.context(request)
        pending = questions.question_list(user=request.user, project_id=context.project_id)
        return self.located(request, pending)
