"""Routes of providers_app: `original` at the root, `v2` under /api."""
from django.urls import path

from providers_app import views

original: list = [
    path("provider", views.ProviderListView.as_view(), name="provider.list"),
    path("provider/auth", views.ProviderAuthView.as_view(), name="provider.auth"),
    path("provider/<str:providerID>/oauth/authorize", views.OAuthAuthorizeView.as_view(),
         name="provider.oauth.authorize"),
    path("provider/<str:providerID>/oauth/callback", views.OAuthCallbackView.as_view(),
         name="provider.oauth.callback"),
    path("config/providers", views.ConfigProvidersView.as_view(), name="config.providers"),
]
v2: list = [
    path("provider", views.V2ProviderListView.as_view(), name="provider.list"),
    path("model", views.V2ModelListView.as_view(), name="model.list"),
    path("catalog/model", views.CatalogModelListView.as_view(), name="catalog.model.list"),
    # Model ids may contain slashes (openrouter's "anthropic/claude-…").
    path("catalog/model/<str:providerID>/<path:modelID>", views.CatalogModelView.as_view(),
         name="catalog.model.get"),
]

# ---- MCP (providers_app/api_mcp.py) ----------------------------------------------------------------------
from providers_app import api_mcp  # noqa: E402

original += [
    path("mcp", api_mcp.McpStatusView.as_view(), name="mcp.status"),
    path("mcp/<str:name>/auth", api_mcp.McpAuthView.as_view(), name="mcp.auth.start"),
    path("mcp/<str:name>/auth/callback", api_mcp.McpAuthCallbackView.as_view(), name="mcp.auth.callback"),
    path("mcp/<str:name>/auth/authenticate", api_mcp.McpAuthenticateView.as_view(), name="mcp.auth.authenticate"),
    path("mcp/<str:name>/connect", api_mcp.McpConnectView.as_view(), name="mcp.connect"),
    path("mcp/<str:name>/disconnect", api_mcp.McpDisconnectView.as_view(), name="mcp.disconnect"),
]
v2 += [
    path("mcp/server", api_mcp.V2ServerView.as_view(), name="mcp.server.list"),
    path("mcp/server/<str:name>/oauth", api_mcp.V2OAuthView.as_view(), name="mcp.server.oauth.start"),
    path("mcp/server/<str:name>/oauth/callback", api_mcp.V2OAuthCallbackView.as_view(),
         name="mcp.server.oauth.callback"),
    path("mcp/prompt", api_mcp.V2PromptListView.as_view(), name="mcp.prompt.list"),
    path("mcp/prompt/render", api_mcp.V2PromptRenderView.as_view(), name="mcp.prompt.render"),
    path("mcp/resource", api_mcp.V2ResourceListView.as_view(), name="mcp.resource.list"),
    path("mcp/resource/read", api_mcp.V2ResourceReadView.as_view(), name="mcp.resource.read"),
]
