"""MCP servers: the original mcp.* routes (status map, add, OAuth, connect/disconnect), 1.18's
experimental.resource.list, and the v2 mcp.* routes (servers, prompts, resources, OAuth)."""
from django.core.validators import RegexValidator
from rest_framework import serializers
from rest_framework.response import Response

from agentserver.http.api import (
    BOOLEAN,
    INTEGER,
    OBJECT,
    STRING,
    ApiView,
    StrictCharField,
    V2RequestView,
    array,
    opencode,
    record,
    ref,
    takes,
)
from providers_app.mcp import configs, oauth, registry, switch

NAME_PARAM = {"name": configs.NAME_PATTERN}  # what _name() takes, for /doc


def _name(value: str) -> str:
    return configs.check_name(value, ["name"])


class McpConfigField(serializers.JSONField):
    """A server config; the registry checks it with configs.normalize, whose schema this states."""
    openapi_schema = configs.CONFIG_SCHEMA


class CreateInput(serializers.Serializer):
    name = StrictCharField(max_length=128, validators=[RegexValidator(configs.NAME_PATTERN)])
    config = McpConfigField()


class PromptRenderInput(serializers.Serializer):
    server = StrictCharField(max_length=128)
    name = StrictCharField(max_length=1024)
    arguments = serializers.DictField(child=StrictCharField(allow_blank=True, max_length=65536), required=False)


class ResourceReadQuery(serializers.Serializer):
    server = serializers.CharField(max_length=128)
    uri = serializers.CharField(max_length=8192)
    directory = serializers.CharField(required=False, allow_blank=True)
    workspace = serializers.CharField(required=False, allow_blank=True)


class CallbackInput(serializers.Serializer):
    code = StrictCharField(max_length=8192)


class McpStatusView(ApiView):
    operation_ids = {"GET": "mcp.status", "POST": "mcp.add"}
    mounts = {"original": "mcp"}
    answers = (409,)

    @takes(directory=True)
    def get(self, request):
        return Response(registry.status_map(context=self.context(request)))

    @takes(CreateInput, directory=True)
    def post(self, request):
        data = self.body(request)
        context = self.context(request)
        registry.server_create(context=context, name=data["name"], config=data["config"])
        return Response(registry.status_map(context=context))


# registry.server_list / server_create: a server, how it is connected and whether it is signed in.
MCP_SERVER = record({"name": STRING, "type": STRING, "source": STRING, "status": STRING,
                     "auth": {"enum": ["none", "authenticated", "unauthenticated"]}},
                    {"error": STRING, "tools": INTEGER})
MCP_PROMPT = record({"name": STRING, "client": STRING, "server": STRING,
                     "arguments": array(record({"name": STRING, "required": BOOLEAN}, {"description": STRING}))},
                    {"description": STRING})


class V2ServerView(V2RequestView):
    operation_ids = {"GET": "mcp.server.list", "POST": "mcp.server.create"}
    mounts = {"v2": "mcp/server"}
    answer_schemas = {"GET": array(MCP_SERVER), "POST": MCP_SERVER}
    answers = (409,)

    @takes(directory=True)
    def get(self, request):
        return Response(registry.server_list(context=self.context(request)))

    @takes(CreateInput, directory=True)
    def post(self, request):
        data = self.body(request)
        return Response(registry.server_create(context=self.context(request), name=data["name"],
                                               config=data["config"]))


class V2PromptListView(V2RequestView):
    operation_ids = {"GET": "mcp.prompt.list"}
    mounts = {"v2": "mcp/prompt"}
    answer_schemas = {"GET": array(MCP_PROMPT)}
    answers = (409,)

    @takes(directory=True)
    def get(self, request):
        return Response(registry.prompt_list(context=self.context(request)))


class V2PromptRenderView(V2RequestView):
    operation_ids = {"POST": "mcp.prompt.render"}
    mounts = {"v2": "mcp/prompt/render"}
    answer_schemas = {"POST": record({"messages": array(record({"role": STRING, "content": OBJECT})),
                                       "text": STRING}, {"description": STRING})}
    answers = (409,)

    @takes(PromptRenderInput, directory=True)
    def post(self, request):
        data = self.body(request)
        return Response(registry.prompt_render(context=self.context(request), server=data["server"],
                                               name=data["name"], arguments=data.get("arguments")))


class V2ResourceListView(V2RequestView):
    operation_ids = {"GET": "mcp.resource.list"}
    mounts = {"v2": "mcp/resource"}
    answer_schemas = {"GET": array(ref("McpResource"))}
    answers = (409,)

    @takes(directory=True)
    def get(self, request):
        return Response(registry.resource_list(context=self.context(request)))


class V2ResourceReadView(V2RequestView):
    operation_ids = {"GET": "mcp.resource.read"}
    mounts = {"v2": "mcp/resource/read"}
    answer_schemas = {"GET": record({"contents": array(OBJECT)})}
    answers = (409,)

    @takes(query=ResourceReadQuery, directory=True)
    def get(self, request):
        query = self.query(request)
        return Response(registry.resource_read(context=self.context(request), server=query["server"],
                                               uri=query["uri"]))


# ---- original /mcp/{name}/auth routes (opencode 1.18), same services ------------------------------------

class McpAuthView(ApiView):
    operation_ids = {"POST": "mcp.auth.start", "DELETE": "mcp.auth.remove"}
    mounts = {"original": "mcp/<str:name>/auth"}
    answers = (409,)
    path_patterns = NAME_PARAM

    @takes(directory=True)
    def post(self, request, name: str):
        return Response(oauth.oauth_start(context=self.context(request), name=_name(name)))

    @takes(directory=True)
    def delete(self, request, name: str):
        return Response(oauth.oauth_delete(context=self.context(request), name=_name(name)))


class McpAuthCallbackView(ApiView):
    operation_ids = {"POST": "mcp.auth.callback"}
    mounts = {"original": "mcp/<str:name>/auth/callback"}
    answers = (409,)
    path_patterns = NAME_PARAM

    @takes(CallbackInput, directory=True)
    def post(self, request, name: str):
        data = self.body(request)
        return Response(oauth.oauth_callback(context=self.context(request), name=_name(name), code=data["code"]))


class V2OAuthView(McpAuthView):
    """The v2 mount of mcp.auth.start/remove: the same handlers, with a workspace in the context."""

    operation_ids = {"POST": "mcp.server.oauth.start", "DELETE": "mcp.server.oauth.delete"}
    mounts = {"v2": "mcp/server/<str:name>/oauth"}
    answer_schemas = {"POST": opencode("POST /mcp/{}/auth"), "DELETE": opencode("DELETE /mcp/{}/auth")}
    allow_workspace = True


class V2OAuthCallbackView(McpAuthCallbackView):
    operation_ids = {"POST": "mcp.server.oauth.callback"}
    mounts = {"v2": "mcp/server/<str:name>/oauth/callback"}
    answer_schemas = {"POST": opencode("POST /mcp/{}/auth/callback")}
    allow_workspace = True


class McpConnectView(ApiView):
    operation_ids = {"POST": "mcp.connect"}
    mounts = {"original": "mcp/<str:name>/connect"}
    answers = (409,)
    path_patterns = NAME_PARAM

    @takes(directory=True)
    def post(self, request, name: str):
        return Response(switch.mcp_connect(context=self.context(request), name=_name(name)))


class McpDisconnectView(ApiView):
    operation_ids = {"POST": "mcp.disconnect"}
    mounts = {"original": "mcp/<str:name>/disconnect"}
    answers = (409,)
    path_patterns = NAME_PARAM

    @takes(directory=True)
    def post(self, request, name: str):
        return Response(switch.mcp_disconnect(context=self.context(request), name=_name(name)))


class ResourceView(ApiView):
    operation_ids = {"GET": "experimental.resource.list"}
    mounts = {"original": "experimental/resource"}
    answers = (409,)

    @takes(directory=True)
    def get(self, request):
        return Response(registry.resource_map(context=self.context(request)))


class McpAuthenticateView(ApiView):
    operation_ids = {"POST": "mcp.auth.authenticate"}
    mounts = {"original": "mcp/<str:name>/auth/authenticate"}
    answers = (409,)
    path_patterns = NAME_PARAM

    @takes(directory=True)
    def post(self, request, name: str):
        return Response(switch.mcp_authenticate(context=self.context(request), name=_name(name)))
