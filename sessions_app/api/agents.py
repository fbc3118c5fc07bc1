"""Agents and their tools: tool.ids, tool.list, app.agents (GET /agent), experimental.capabilities.get
(original) and agent.list (v2)."""
from rest_framework import serializers
from rest_framework.response import Response

from agentserver.http.api import ApiView, V2RequestView, takes
from projects_app.config import effective_config
from sessions_app import selectors
from sessions_app.runtime import tool_registry as tools
from sessions_app.runtime.agents import agent_list, agent_list_v2


class ToolIdsView(ApiView):
    operation_ids = {"GET": "tool.ids"}
    mounts = {"original": "experimental/tool/ids"}

    @takes(directory=True)
    def get(self, request):
        return Response(tools.tool_ids(self.context(request)))


class ToolListQuery(serializers.Serializer):
    provider = serializers.CharField(max_length=256)
    model = serializers.CharField(max_length=256)


class ToolListView(ApiView):
    operation_ids = {"GET": "tool.list"}
    mounts = {"original": "experimental/tool"}

    @takes(query=ToolListQuery, directory=True)
    def get(self, request):
        query = self.query(request)
        context = self.context(request)
        config = effective_config(context)
        found = tools.tools_for(config=config, model={"providerID": query["provider"], "modelID": query["model"]},
                                context=context)
        return Response([tool.spec() for tool in found])


class AgentsView(ApiView):
    operation_ids = {"GET": "app.agents"}
    mounts = {"original": "agent"}

    @takes(directory=True)
    def get(self, request):
        return Response(agent_list(effective_config(self.context(request))))


class CapabilitiesView(ApiView):
    operation_ids = {"GET": "experimental.capabilities.get"}
    mounts = {"original": "experimental/capabilities"}

    def get(self, request):
        return Response(selectors.capabilities())


class V2AgentListView(V2RequestView):
    operation_ids = {"GET": "agent.list"}
    mounts = {"v2": "agent"}

    @takes(directory=True)
    def get(self, request):
        context = self.context(request)
        return Response({"location": context.location(), "data": agent_list_v2(effective_config(context))})
