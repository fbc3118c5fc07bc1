"""The agent and model of a session's next v2 turns: session.switchAgent, session.switchModel (v2)."""
from rest_framework import serializers
from rest_framework.response import Response

from agentserver.http.api import ApiView, StrictCharField, succeeds_with, takes
from sessions_app.api.sessions import session_from_path
from sessions_app.services import model_choice


class SwitchAgentBody(serializers.Serializer):
    agent = StrictCharField(max_length=128)


class ModelRef(serializers.Serializer):
    id = StrictCharField(max_length=256)
    providerID = StrictCharField(max_length=256)
    variant = StrictCharField(max_length=128, required=False)


class SwitchModelBody(serializers.Serializer):
    model = ModelRef()


class V2SwitchAgentView(ApiView):
    operation_ids = {"POST": "session.switchAgent"}
    mounts = {"v2": "session/<str:sessionID>/agent"}

    @takes(SwitchAgentBody)
    @succeeds_with(204)
    def post(self, request, sessionID: str):
        session = session_from_path(request, sessionID)
        body = self.body(request)
        model_choice.session_switch_agent(session=session, agent=body["agent"])
        return Response(status=204)


class V2SwitchModelView(ApiView):
    operation_ids = {"POST": "session.switchModel"}
    mounts = {"v2": "session/<str:sessionID>/model"}

    @takes(SwitchModelBody)
    @succeeds_with(204)
    def post(self, request, sessionID: str):
        session = session_from_path(request, sessionID)
        body = self.body(request)
        model_choice.session_switch_model(session=session, model=dict(body["model"]))
        return Response(status=204)
